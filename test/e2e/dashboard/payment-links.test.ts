/**
 * The dashboard's payment links (issue 31 point 4), in Chromium: a merchant creates a link in French on a 390 px
 * phone and gets its QR code, its address with Copy and its WhatsApp and SMS messages; the list and the link's
 * payments; a payment's timeline shows its rescue — the offer with its link, the customer's try on another
 * wallet. Each screen, in French and English, at 390 px and on a desktop: nothing scrolls sideways, axe-core
 * finds nothing.
 */
import { expect, it } from "bun:test";
import type { Page } from "playwright-core";
import { offerStalledRescues } from "../../../src/services/rescue/mod.ts";
import { axeViolations } from "../../support/axe.ts";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

type Body = Record<string, any>;

describeWithChromium("browser: payment links and a payment's rescue in the dashboard", () => {
  const rig = useDashboardRig();

  /** What is wrong with the screen as it is: axe's violations, and a page wider than the window. */
  async function problems(page: Page, label: string): Promise<string[]> {
    const found = (await axeViolations(page)).map((v) => `${label}: ${v.id} (${v.impact}) ${v.help} at ${v.targets.join(", ")}`);
    const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: innerWidth }));
    if (scroll > width) found.push(`${label}: ${scroll} px wide in a ${width} px window`);
    return found;
  }

  /** The screen in both languages and at both widths. */
  async function checkBoth(page: Page, label: string, ready: (page: Page) => Promise<void>): Promise<string[]> {
    const found: string[] = [];
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1366, height: 800 },
    ])
      for (const language of ["Français", "English"]) {
        await page.setViewportSize(viewport);
        await page.locator(".language-switch button", { hasText: language }).click();
        await ready(page);
        found.push(...(await problems(page, `${label} ${language} ${viewport.width}`)));
      }
    await page.locator(".language-switch button", { hasText: "Français" }).click();
    await page.setViewportSize({ width: 390, height: 844 });
    return found;
  }

  it("creates a link with its QR code, Copy and share buttons, lists it with its payments, and shows a payment's rescue", async () => {
    const tenant = await rig.newTenant("Boutique Awa");
    const token = await rig.tg.tenantToken(tenant.id);
    const page = await rig.openDashboard(["fr-FR", "fr"]);
    await page.setViewportSize({ width: 390, height: 844 });
    await rig.signInWithKey(page, tenant.keyId, tenant.secret);
    await page.getByRole("link", { name: "Liens de paiement" }).click();
    await page.getByRole("heading", { name: "Liens de paiement", level: 1 }).waitFor();
    await page.getByText("Aucun lien pour l’instant").waitFor();

    // A link of 800 FCFA, single-use.
    await page.getByLabel("Ce qui est payé").fill("Pagne wax");
    await page.getByLabel("Montant (FCFA)").fill("800");
    await page.getByLabel("Page de retour après le paiement (facultatif)").fill("https://shop.example/merci");
    await page.getByRole("button", { name: "Créer le lien" }).click();
    await page.waitForURL(/#\/links\/pl_/);
    const linkId = decodeURIComponent(page.url().split("#/links/")[1]!);
    await page.getByRole("heading", { name: "Pagne wax", level: 1 }).waitFor();
    const qr = page.getByRole("img", { name: `QR code du lien ${linkId}` });
    expect(await qr.getAttribute("src")).toStartWith("data:image/png;base64,");
    const url = `${rig.base}/pay/${linkId}`;
    expect(await page.getByTestId("link-url").textContent()).toBe(url);
    const whatsapp = await page.getByRole("link", { name: "Envoyer par WhatsApp" }).getAttribute("href");
    expect(whatsapp).toStartWith("https://wa.me/?text=");
    expect(decodeURIComponent(whatsapp!.slice("https://wa.me/?text=".length))).toContain(url);
    expect(await page.getByRole("link", { name: "Envoyer par SMS" }).getAttribute("href")).toStartWith("sms:?&body=");
    await page.getByRole("button", { name: "Copier le lien" }).click();
    // The clipboard where the browser lets the page write to it; else the address is selected, and the page says so.
    await page.getByText(/Lien copié|Le lien est sélectionné/).waitFor();
    await page.getByText("Aucun paiement pour l’instant.").waitFor();
    await rig.screenshot(page, "dashboard-payment-link");
    const found = await checkBoth(page, "link", (p) => p.locator(".link-qr").waitFor());

    // Paid on its pay page (the sandbox approves below 1000): the link lists the payment.
    const paid = await rig.api("POST", `/pay/${linkId}/payments`, { token: "", json: { operator: "mtn", phone: { number: "+22997000010", country: "bj" } } });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const paymentId = (paid.body as Body).id as string;
    await waitUntil(async () => (((await rig.api("GET", `/payments/${paymentId}`, { token })).body as Body).state === "succeeded" ? true : undefined), {
      what: "the link's payment paid",
      timeoutMs: 20_000,
    });
    await page.getByRole("button", { name: "Actualiser" }).last().click();
    await page.locator(`[data-testid="link-payments"] [data-payment-id="${paymentId}"]`).waitFor();
    await page.getByText("Déjà payé").first().waitFor();

    // The list: the link as a card, with its payments counted.
    await page.getByRole("link", { name: "Tous les liens" }).click();
    const card = page.locator(`[data-link-id="${linkId}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain("1 paiement(s) reçu(s)");
    found.push(...(await checkBoth(page, "links", (p) => p.locator(`[data-link-id="${linkId}"]`).waitFor())));

    // A stalled push (3000 FCFA: the sandbox waits for its console), rescued by the customer on Moov.
    const made = await rig.api("POST", "/payments", {
      token,
      json: { amount: 3000, description: "Commande 9", operator: "mtn", customer: { phone: { number: "+22997000011", country: "bj" } } },
    });
    const stalledId = (made.body as Body).id as string;
    const deps = rig.tg.gateway.deps;
    await offerStalledRescues({ ...deps, config: { ...deps.config, rescueAfterMs: 0 } });
    const offer = await deps.db.selectFrom("payment_rescues").select("id").where("payment_id", "=", stalledId).executeTakeFirstOrThrow();
    const tried = await rig.api("POST", `/pay/${offer.id}/payments`, {
      token: "",
      json: { operator: "moov", phone: { number: "+22995000012", country: "bj" } },
    });
    expect(tried.status, JSON.stringify(tried.body)).toBe(200);
    await page.evaluate((id) => (location.hash = `#/payments/${id}`), stalledId);
    const timeline = page.getByTestId("timeline");
    await timeline.getByText("Relance proposée au client : pas de réponse à la demande sur son téléphone").waitFor();
    expect(await timeline.getByRole("link", { name: `${rig.base}/pay/${offer.id}` }).count()).toBe(1);
    await timeline.getByText(/Nouvel essai du client \(2\) avec Moov Money \(Flooz\) via Provider A : demande envoyée/).waitFor();
    await rig.screenshot(page, "dashboard-payment-rescue");
    found.push(
      ...(await checkBoth(page, "rescued payment", (p) => p.getByTestId("timeline").locator('[data-event-type="payment.rescue_available"]').waitFor())),
    );

    expect(found).toEqual([]);
    await page.close();
    expect(rig.pageErrors).toEqual([]);
  }, 180_000);
});
