/**
 * The home screen in a real browser (issue 29 point 1): a merchant with payments of two wallets — an MTN
 * Benin payment the provider A sandbox approves by itself, a Moov Benin one that failed, and one pending for
 * two days (the last two written by SQL, as a provider's answers over days would leave them) — signs in, in
 * French on a 390 px phone, and lands on the home: the figures, payments per day and the success rate per
 * wallet and provider as text, charts that are tables; what needs attention (the stuck payment, provider B's
 * missing keys) with links, one followed from the keyboard to the payment's page; today per hour; no
 * sideways scrolling, nothing refused by the Content-Security-Policy.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

const NBSP = "\u00a0";

describeWithChromium(
  "browser: the home screen",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    describe("a merchant's first screen", () => {
      it("shows the figures, the charts as text and what needs attention, in French at 390 px, with links", async () => {
        const tenant = await newTenant("Maquis Chez Awa");
        const token = await rig.tg.tenantToken(tenant.id);
        const created = await api("POST", "/payments", {
          token,
          json: { amount: 800, description: "Attiéké", operator: "mtn", customer: { phone: { number: "+22997000051", country: "bj" } } },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        await waitUntil(async () => (await api("GET", `/payments/${created.body.id}`, { token })).body.state === "succeeded", {
          what: "the MTN Benin payment paid",
          timeoutMs: 10_000,
          intervalMs: 200,
        });
        const { db } = rig.tg.gateway.deps;
        const moov = { payment_method: "mnoB", operator: "moov", customer: { phone: "+22995000052", country: "bj" } };
        await insertDirectPayment(db, tenant.id, 9_900_001, { ...moov, tenant_id: tenant.id, state: "failed", amount: 1200, description: "Alloco" });
        const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
        const stuck = await insertDirectPayment(db, tenant.id, 9_900_002, {
          ...moov,
          state: "pending",
          amount: 450,
          description: "Garba",
          created_at: twoDaysAgo,
          updated_at: twoDaysAgo,
        });

        const page = await openDashboard(["fr-FR", "fr"]);
        await page.setViewportSize({ width: 390, height: 844 });
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.getByRole("heading", { name: "Accueil", exact: true }).waitFor();
        expect(await page.locator('nav a[href="#/home"]').getAttribute("aria-current")).toBe("page");
        const figures = page.locator('[data-testid="figures"]');
        await figures.waitFor();
        // The last 7 days: three payments, 800 collected, one succeeded of two ended; the balance from the ledger.
        expect(await figures.locator('[data-figure="payments"]').textContent()).toBe("3");
        expect(await figures.locator('[data-figure="collected"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await figures.locator('[data-figure="successRate"]').textContent()).toBe(`50${NBSP}% (1 réussi(s) sur 2 terminé(s))`);
        await page.locator('[data-figure="balance"] .amount').waitFor();
        expect(await figures.locator('[data-figure="balance"]').textContent()).toBe(`800${NBSP}FCFA`);

        // The charts are tables whose rows say their values in words.
        const wallets = page.locator('[data-testid="wallet-rates"]');
        expect(await wallets.locator("caption").textContent()).toBe("Réussite par portefeuille (opérateur × pays)");
        expect(await wallets.locator('tr[data-wallet="mtn/bj"] th').textContent()).toBe(`MTN · Bénin 100${NBSP}% · 1/1`);
        expect(await wallets.locator('tr[data-wallet="moov/bj"] th').textContent()).toBe(`MOOV · Bénin 0${NBSP}% · 0/1`);
        expect(await page.locator('[data-testid="provider-rates"] tr[data-provider="providerA"] th').textContent()).toBe(`Provider A 50${NBSP}% · 1/2`);
        const days = page.locator('[data-testid="series"] tbody tr');
        expect(await days.count()).toBe(7);
        expect(await days.last().locator(".bar-value").textContent()).toBe(`2 · 800${NBSP}FCFA`);
        // The numbers behind the wallets' chart, opened from the keyboard.
        await page.locator("details.numbers summary").first().focus();
        await page.keyboard.press("Enter");
        expect(await page.locator('[data-testid="wallets"] tr[data-wallet="moov/bj"]').textContent()).toContain("Bénin");

        // What needs attention: the payment pending for two days, and provider B's keys — each with its link.
        const attention = page.locator('[data-testid="attention"]');
        expect(await attention.locator('[data-attention="stuck"] p').first().textContent()).toBe(
          "1 paiement(s) toujours en attente plus de 24 h après leur création : Passerelle ne les relance plus, le fournisseur doit les confirmer.",
        );
        const credentials = attention.locator('[data-attention="credentials"]');
        expect(await credentials.locator("p").first().textContent()).toBe(
          "Vos clés Provider B ne sont pas enregistrées dans cet environnement : aucun paiement ne passe par Provider B.",
        );
        expect(await credentials.locator("a").getAttribute("href")).toBe("#/settings");
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await screenshot(page, "dashboard-home-phone");

        // Today, per hour: the two payments of today only.
        await page.getByRole("button", { name: "Aujourd’hui" }).click();
        await page.getByText("Paiements par heure").first().waitFor();
        await waitUntil(async () => (await figures.locator('[data-figure="payments"]').textContent()) === "2", {
          what: "today's figures",
          timeoutMs: 5_000,
          intervalMs: 100,
        });
        expect(await page.locator('[data-testid="series"] caption').textContent()).toBe("Paiements par heure");
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

        // The stuck payment's link, from the keyboard: its page.
        const link = attention.locator(`a[href="#/payments/${stuck.id}"]`);
        expect(await link.textContent()).toBe(`Voir le paiement de 450${NBSP}FCFA (${stuck.id})`);
        await link.focus();
        await page.keyboard.press("Enter");
        await page.waitForURL(`**/dashboard#/payments/${stuck.id}`);
        await page.getByText(stuck.id).first().waitFor();
        await page.close();

        // In English on a wide screen, for the docs.
        const wide = await openDashboard();
        await wide.setViewportSize({ width: 1200, height: 900 });
        await signInWithKey(wide, tenant.keyId, tenant.secret);
        await wide.getByRole("heading", { name: "Home", exact: true }).waitFor();
        await wide.locator('[data-figure="balance"] .amount').waitFor();
        expect(await wide.locator('[data-testid="wallet-rates"] tr[data-wallet="mtn/bj"] th').textContent()).toBe("MTN · Benin 100% · 1/1");
        await screenshot(wide, "dashboard-home");
        await wide.close();
        expect(rig.pageErrors).toEqual([]);
      }, 60_000);
    });
  },
  { embeddedPassOnly: true },
);
