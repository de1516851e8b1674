/**
 * The pay page (`/pay/{id}`, issue 31 point 2) in Chromium at 390 px, in French, through the simulators (a
 * gateway as `bun run start` runs it): an MTN Benin link paid by push, an Orange Côte d'Ivoire link paid with
 * a code, a Wave Senegal link paid through the wallet's page, a reusable link paid three times, an expired and
 * a used single-use link refused; its policy, its weight, and its language switch.
 */
import { expect, it } from "bun:test";
import type { Page } from "playwright-core";
import { describeWithChromium } from "../../support/browser.ts";
import { useDashboardRig } from "../dashboard/dashboard-rig.ts";

describeWithChromium("the pay page of a payment link", () => {
  const rig = useDashboardRig();
  let token = "";

  async function link(json: Record<string, unknown>): Promise<{ id: string; url: string }> {
    if (!token) {
      const tenant = await rig.newTenant("Boutique Awa");
      token = await rig.tg.tenantToken(tenant.id);
      // Provider B's sandbox keys, for Orange Côte d'Ivoire and Wave Senegal.
      const keys = await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json();
      const stored = await rig.api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { environment: "sandbox", ...(keys as object) } });
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    }
    const created = await rig.api("POST", "/payment-links", { token, json: { returnUrl: "https://shop.example/merci", ...json } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body as { id: string; url: string };
  }

  /** The link's page on a 390 px phone whose browser prefers French. */
  async function open(url: string): Promise<Page> {
    const page = await rig.browser.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    page.on("console", (message) => {
      if (message.type() === "error" && !/Failed to load resource/.test(message.text())) rig.pageErrors.push(message.text());
    });
    page.on("pageerror", (error) => rig.pageErrors.push(error.message));
    await page.addInitScript(() => {
      Object.defineProperty(navigator, "languages", { get: () => ["fr-FR", "fr"] });
      Object.defineProperty(navigator, "language", { get: () => "fr-FR" });
    });
    await page.goto(url);
    return page;
  }

  async function expectReceipt(page: Page, amount: string): Promise<void> {
    await page.getByRole("heading", { name: "Paiement reçu" }).waitFor({ timeout: 20_000 });
    expect(await page.locator(".done .amount").textContent()).toBe(amount);
    expect(await page.locator(".receipt .reference").textContent()).toMatch(/^pay_/);
    expect(await page.getByRole("link", { name: "Retour au marchand" }).getAttribute("href")).toBe("https://shop.example/merci");
  }

  /** Types an MTN Benin number, sees MTN detected, pays and approves (the sandbox approves below 1000). */
  async function payByPush(page: Page): Promise<void> {
    await page.locator("#number").fill("97 00 00 00");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("mtn");
    expect(await page.locator("#wallet-hint").textContent()).toBe("Détecté d'après le numéro : MTN MoMo. Vous pouvez le changer.");
    await page.getByRole("button", { name: "Payer" }).click();
    await page.getByText("Approuvez la demande de paiement sur votre téléphone").waitFor();
  }

  it("takes an MTN Benin payment by push: the wallet detected from the number, a live status, the receipt", async () => {
    const { url } = await link({ amount: 800, description: "Commande 1042", countries: ["bj"] });
    const page = await open(url);
    await page.getByText("Commande 1042").waitFor();
    expect(await page.locator(".summary .amount").textContent()).toBe("800 FCFA");
    expect(await page.locator(".shop").textContent()).toBe("Boutique Awa");
    // The customer may change the wallet the number proposed.
    await page.locator("#number").fill("95 00 00 00");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("moov");
    await payByPush(page);
    await expectReceipt(page, "800 FCFA");
    await rig.screenshot(page, "pay-page-mtn-receipt");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await page.close();
  }, 60_000);

  it("takes an Orange Côte d'Ivoire payment with the code got by USSD, and its instructions", async () => {
    const { url } = await link({ amount: 500, description: "Commande 43", countries: ["ci"] });
    const page = await open(url);
    await page.locator("#number").fill("07 01 02 03 04");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("orange");
    expect(await page.locator("label .hint").textContent()).toMatch(/^Obtenez le code : .*#144\*82#/);
    await page.locator("#otp").fill("123456");
    await page.getByRole("button", { name: "Payer" }).click();
    await expectReceipt(page, "500 FCFA");
    await page.close();
  }, 60_000);

  it("takes a Wave Senegal payment through the wallet's page", async () => {
    const { url } = await link({ amount: 900, description: "Commande 42", countries: ["sn"], wallets: ["wave"] });
    const page = await open(url);
    await page.locator("#number").fill("77 123 45 67");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("wave");
    await page.getByRole("button", { name: "Payer" }).click();
    const popup = page.waitForEvent("popup");
    await page.getByRole("link", { name: "Ouvrir Wave pour payer" }).click();
    const walletPage = await popup;
    await walletPage.locator("button.pay").click();
    await expectReceipt(page, "900 FCFA");
    await walletPage.close();
    await page.close();
  }, 60_000);

  it("takes a reusable link's payments three times", async () => {
    const made = await link({ amount: 300, description: "Cotisation", countries: ["bj"], reusable: true });
    for (let i = 0; i < 3; i++) {
      const page = await open(made.url);
      await payByPush(page);
      await expectReceipt(page, "300 FCFA");
      await page.close();
    }
    const detail = await rig.api("GET", `/payment-links/${made.id}`, { token });
    expect(detail.body).toMatchObject({ status: "active", paidCount: 3 });
  }, 90_000);

  it("says an expired link and a used single-use link take no payment", async () => {
    const single = await link({ amount: 400, description: "Une fois", countries: ["bj"] });
    const first = await open(single.url);
    await payByPush(first);
    await expectReceipt(first, "400 FCFA");
    await first.close();
    const again = await open(single.url);
    await again.getByText("Ce lien de paiement a déjà été payé.").waitFor();
    expect(await again.locator("form").count()).toBe(0);
    await again.close();

    const expiring = await link({ amount: 400, description: "Bientôt", expiresAt: new Date(Date.now() + 1500).toISOString() });
    await Bun.sleep(1600);
    const late = await open(expiring.url);
    await late.getByText("Ce lien de paiement a expiré.").waitFor();
    // The switch says it in English.
    await late.getByRole("button", { name: "English" }).click();
    await late.getByText("This payment link has expired.").waitFor();
    await late.close();
  }, 60_000);

  it("is served under a strict policy, under 50 kB compressed, with no error in the page", async () => {
    const { url } = await link({ amount: { min: 100, max: 5000 }, description: "Don", countries: ["bj"] });
    const response = await fetch(url, { headers: { "accept-encoding": "gzip" } });
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await response.text();
    let compressed = Number(response.headers.get("content-length") ?? Bun.gzipSync(html).length);
    for (const asset of html.matchAll(/(?:src|href)="(\/pay-assets\/[^"]+)"/g)) {
      const bytes = await (await fetch(`${rig.base}${asset[1]}`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit)).arrayBuffer();
      compressed += bytes.byteLength;
    }
    expect(compressed).toBeLessThan(50_000);
    const page = await open(url);
    await page.locator("#amount").waitFor();
    expect(await page.locator(".summary .amount").textContent()).toBe("Entre 100 FCFA et 5 000 FCFA");
    await page.close();
    expect(rig.pageErrors).toEqual([]);
  }, 60_000);
});
