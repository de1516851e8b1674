/**
 * The pay page (issue 31 point 5) in Chromium at 390 px, in French, through the simulators (a gateway as
 * `bun run start` runs it): the wallet detected for every prefix of the numbering plan, and a stalled MTN Benin
 * push rescued on Moov with the first push approved late — one charge kept, one `payment.completed`.
 */
import { expect, it } from "bun:test";
import type { Page } from "playwright-core";
import { NUMBERING_PLAN, type PlanCountry } from "../../../src/services/numbering-plan.ts";
import { offerStalledRescues } from "../../../src/services/rescue/mod.ts";
import { describeWithChromium } from "../../support/browser.ts";
import type { Json } from "../../support/json.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "../dashboard/dashboard-rig.ts";

type Body = Record<string, any>;

describeWithChromium("the pay page: wallet detection and the rescue of a stalled push", () => {
  const rig = useDashboardRig();
  let token = "";
  let tenantId = "";

  async function link(json: Record<string, unknown>): Promise<{ id: string; url: string; wallets: Body[] }> {
    if (!token) {
      const tenant = await rig.newTenant("Boutique Awa");
      tenantId = tenant.id;
      token = await rig.tg.tenantToken(tenant.id);
      const keys = await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json();
      const stored = await rig.api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { environment: "sandbox", ...(keys as object) } });
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    }
    const created = await rig.api("POST", "/payment-links", { token, json: { returnUrl: "https://shop.example/merci", ...json } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = (created.body as Body).id as string;
    const face = (await rig.api("GET", `/pay/${id}/link`, { token: "" })).body as Body;
    return { id, url: (created.body as Body).url, wallets: face.wallets };
  }

  async function open(url: string): Promise<Page> {
    const page = await rig.browser.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    page.on("pageerror", (error) => rig.pageErrors.push(error.message));
    await page.addInitScript(() => {
      Object.defineProperty(navigator, "languages", { get: () => ["fr-FR", "fr"] });
      Object.defineProperty(navigator, "language", { get: () => "fr-FR" });
    });
    await page.goto(url);
    return page;
  }

  it("proposes the wallet of every prefix in the numbering plan, for the wallets the shop takes", async () => {
    const xof = await link({ amount: 500, description: "Tout pays" });
    const gnf = await link({ amount: 5000, description: "Guinée", countries: ["gn"] });
    let checked = 0;
    for (const [country, plan] of Object.entries(NUMBERING_PLAN) as [PlanCountry, (typeof NUMBERING_PLAN)[PlanCountry]][]) {
      const made = country === "gn" ? gnf : xof;
      const page = await open(made.url);
      await page.locator("#number").waitFor();
      for (const [operator, prefixes] of Object.entries(plan.operators)) {
        const taken = made.wallets.some((w) => w.country === country && w.operator === operator);
        for (const prefix of prefixes) {
          const national = `${prefix}12345678901234`.slice(0, plan.length);
          await page.locator("#number").fill(`+${plan.callingCode} ${national}`);
          const where = `${country} ${operator} ${prefix}`;
          // The country follows the number (a select when the link takes several), the wallet too when the shop takes it.
          if ((await page.locator("#country").count()) > 0) expect(await page.locator("#country").inputValue(), where).toBe(country);
          // A wallet the shop does not take there is not proposed: the customer is asked to choose.
          const hint = await page.locator("#wallet-hint").textContent();
          if (taken) {
            expect(await page.locator("#wallet").inputValue(), where).toBe(operator);
            expect(hint, where).toStartWith("Détecté d'après le numéro");
          } else expect(hint, where).toBe("Choisissez votre portefeuille.");
          checked++;
        }
      }
      await page.close();
    }
    expect(checked).toBe(Object.values(NUMBERING_PLAN).reduce((n, plan) => n + Object.values(plan.operators).flat().length, 0));
    expect(rig.pageErrors).toEqual([]);
  }, 120_000);

  it("rescues a stalled MTN push on Moov, the first push approved late: one charge kept, one payment.completed", async () => {
    // 3000 FCFA: provider A's sandbox waits for its console — the customer does not answer the prompt.
    const made = await link({ amount: 3000, description: "Pagne wax", countries: ["bj"] });
    const page = await open(made.url);
    // Each payment call the page makes carries an Idempotency-Key of its own try.
    const keys: (string | undefined)[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && /\/pay\/[^/]+\/payments$/.test(new URL(request.url()).pathname)) keys.push(request.headers()["idempotency-key"]);
    });
    await page.locator("#number").fill("97 10 00 50");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("mtn");
    await page.getByRole("button", { name: "Payer" }).click();
    await page.getByText("Approuvez la demande de paiement sur votre téléphone").waitFor();
    const listed = await waitUntil(
      async () => {
        const detail = (await rig.api("GET", `/payment-links/${made.id}`, { token })).body as Body;
        return detail.payments[0] as Body | undefined;
      },
      { what: "the link's payment", timeoutMs: 10_000 },
    );
    const paymentId = listed.id as string;
    const first = (await rig.api("GET", `/payments/${paymentId}`, { token })).body as Body;
    // No answer within RESCUE_AFTER: the sweeper's clause offers the rescue (run here with RESCUE_AFTER at 0).
    const deps = rig.tg.gateway.deps;
    await offerStalledRescues({ ...deps, config: { ...deps.config, rescueAfterMs: 0 } });
    // The page, still waiting, offers to try again or another wallet.
    await page.getByRole("link", { name: "Réessayer ou changer de portefeuille" }).click({ timeout: 20_000 });
    await page.waitForURL(/\/pay\/rs_/);
    await page.getByText("Votre paiement par MTN MoMo n'a pas encore abouti.", { exact: false }).waitFor();
    expect(await page.locator(".summary .amount").textContent()).toBe("3 000 FCFA");
    await page.locator("#number").fill("95 10 00 51");
    await expect(page.locator("#wallet").inputValue()).resolves.toBe("moov");
    await rig.screenshot(page, "pay-page-rescue");
    await page.getByRole("button", { name: "Payer" }).click();
    await page.getByText("Approuvez la demande de paiement sur votre téléphone").waitFor();
    const tried = (await rig.api("GET", `/payments/${paymentId}`, { token })).body as Body;
    expect(tried.attempts.map((a: Body) => [a.attempt, a.outcome])).toEqual([
      [1, "started"],
      [2, "started"],
    ]);
    expect(tried.operator).toBe("moov");

    // The first push is approved late, on provider A's console: it wins.
    const approve = (id: string) =>
      fetch(`${rig.base}/sandbox/providerA/_sim/transactions/${id}/approve`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect((await approve(first.providerTransactionId)).status).toBe(200);
    await page.getByRole("heading", { name: "Paiement reçu" }).waitFor({ timeout: 30_000 });
    expect(await page.locator(".receipt dd").first().textContent()).toBe("MTN MoMo");
    expect(await page.locator(".receipt .reference").textContent()).toBe(paymentId);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[0]).not.toBe(keys[1]);

    // The customer had approved the Moov push too: a difference to refund, never a second completion.
    expect((await approve(tried.attempts[1].providerTransactionId)).status).toBe(200);
    await waitUntil(
      async () =>
        ((await rig.api("GET", "/reports/reconciliation", { token })).body as { differences: Json[] }).differences.find((d) => (d as Body).id === paymentId),
      { what: "the second charge kept as a difference", timeoutMs: 20_000, intervalMs: 300 },
    );
    const events = await deps.db.selectFrom("events").select("type").where("payment_id", "=", paymentId).where("tenant_id", "=", tenantId).execute();
    expect(events.filter((e) => e.type === "payment.completed")).toHaveLength(1);
    expect(events.filter((e) => e.type === "payment_link.paid")).toHaveLength(1);
    const paid = (await rig.api("GET", `/payments/${paymentId}`, { token })).body as Body;
    expect(paid).toMatchObject({ state: "succeeded", operator: "mtn", providerTransactionId: first.providerTransactionId });
    await page.close();
    expect(rig.pageErrors).toEqual([]);
  }, 120_000);
});
