/**
 * Provider A webhook signatures (providers.md): `X-FEDAPAY-SIGNATURE: t=<unix>,s=<hex>` where
 * `s = hex(HMAC-SHA256(webhook secret, "<t>.<raw body>"))`. Several `s=` may appear (a secret rolling
 * over); any one matching is enough. Old or future timestamps beyond the tolerance are refused.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** How far the signature's timestamp may be from our clock (providers.md). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface VerifyInput {
  /** The `X-FEDAPAY-SIGNATURE` header, or null when absent. */
  header: string | null;
  /** The body exactly as received: the bytes are what is signed. */
  rawBody: Uint8Array;
  /** The webhook secrets of the one account the route stands for (several while a secret rolls over). */
  secrets: readonly string[];
  nowSeconds: number;
  toleranceSeconds?: number;
}

/** Parses `t=…,s=…[,s=…]`; `undefined` when it is not that shape. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [key, ...rest] = part.trim().split("=");
    const value = rest.join("=");
    if (key === "t" && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === "s" && /^[0-9a-fA-F]{64}$/.test(value)) signatures.push(value.toLowerCase());
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}

/**
 * Whether the header signs `rawBody` with one of `secrets`, within the tolerance. Compares in constant time.
 *
 * @example
 * ```ts
 * const header = request.headers.get("x-fedapay-signature");
 * verifyProviderASignature({ header, rawBody, secrets: [webhookSecret], nowSeconds: Math.floor(Date.now() / 1000) });
 * ```
 */
export function verifyProviderASignature(input: VerifyInput): boolean {
  if (!input.header) return false;
  const parsed = parseSignatureHeader(input.header);
  if (!parsed) return false;
  if (Math.abs(input.nowSeconds - parsed.timestamp) > (input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const prefix = Buffer.from(`${parsed.timestamp}.`);
  let matched = false;
  for (const secret of input.secrets) {
    const expected = createHmac("sha256", secret).update(prefix).update(input.rawBody).digest();
    for (const signature of parsed.signatures) {
      // Every pair is compared (no early exit), so timing says nothing about which one matched.
      if (timingSafeEqual(expected, Buffer.from(signature, "hex"))) matched = true;
    }
  }
  return matched;
}

/** Signs a body like provider A does (tests and the simulator's peers). */
export function signProviderAWebhook(secret: string, timestampSeconds: number, rawBody: string): string {
  return `t=${timestampSeconds},s=${createHmac("sha256", secret).update(`${timestampSeconds}.${rawBody}`).digest("hex")}`;
}
