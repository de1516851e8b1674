/**
 * What a merchant sends a customer: the link's QR code (SVG and PNG, by the `qrcode` library) and
 * ready-to-send texts for SMS and WhatsApp (a `wa.me` share URL), in French and English.
 *
 * @module
 */
import QRCode from "qrcode";
import type { Currency } from "../../db/schema.ts";

/** An amount as a customer reads it: `2 500 FCFA`, `2,500 FCFA`. */
export function formatAmount(amount: number, currency: Currency, language: "fr" | "en"): string {
  const digits = new Intl.NumberFormat(language === "fr" ? "fr-FR" : "en-GB").format(amount).replace(/\u202f|\u00a0/g, " ");
  return `${digits} ${currency === "XOF" ? "FCFA" : currency}`;
}

/** What is asked: a fixed amount, or a range the customer chooses in. */
export function amountPhrase(
  link: { amount: number | null; amountMin: number | null; amountMax: number | null; currency: Currency },
  language: "fr" | "en",
): string {
  if (link.amount !== null) return formatAmount(link.amount, link.currency, language);
  const min = formatAmount(link.amountMin!, link.currency, language);
  const max = formatAmount(link.amountMax!, link.currency, language);
  return language === "fr" ? `de ${min} à ${max}` : `from ${min} to ${max}`;
}

/** The SMS and WhatsApp texts, in French and English. */
export function shareTexts(link: {
  url: string;
  shop: string;
  description: string;
  amount: number | null;
  amountMin: number | null;
  amountMax: number | null;
  currency: Currency;
}) {
  const fr = `${link.shop} : ${link.description}, ${amountPhrase(link, "fr")}. Payez depuis votre téléphone (Mobile Money) : ${link.url}`;
  const en = `${link.shop}: ${link.description}, ${amountPhrase(link, "en")}. Pay from your phone (mobile money): ${link.url}`;
  const wa = (text: string) => ({ text, url: `https://wa.me/?text=${encodeURIComponent(text)}` });
  return { sms: { fr, en }, whatsapp: { fr: wa(fr), en: wa(en) } };
}

/** The URL as a QR code: an SVG document, and a PNG as a data URL. */
export async function qrCodes(url: string): Promise<{ svg: string; png: string }> {
  const options = { errorCorrectionLevel: "M" as const, margin: 2 };
  const [svg, png] = await Promise.all([
    QRCode.toString(url, { ...options, type: "svg" }),
    QRCode.toDataURL(url, { ...options, type: "image/png", width: 320 }),
  ]);
  return { svg, png };
}
