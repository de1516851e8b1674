/**
 * Money where it sits, in a real browser (issue 24 points 1 and 2): a merchant with money collected on
 * Passerelle's pooled provider A account and its own provider B account sees each holding account named in
 * words on Balance and payouts — in French, on a 390 px phone, reached from the keyboard — with what
 * provider B reports beside its own account, and a payout beyond what it holds on the pooled account
 * refused with the API's message and the reason in French; money on its own provider A account whose keys
 * it then removed still listed as its own, its refund (now from the pooled account) refused with the reason;
 * the operator sees the pooled accounts on Reconciliation, held
 * against reported, and a provider holding less than Passerelle owes its merchants (made on provider A's
 * simulator by its balance control) flagged in words.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

const NBSP = "\u00a0";

describeWithChromium(
  "browser: money where it sits",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    describe("a merchant's holding accounts and Passerelle's pooled accounts", () => {
      it("shows the merchant each account in words, in French at 390 px, refuses a pooled payout beyond what it holds there, and shows the operator a pooled account short of what it owes", async () => {
        const tenant = await newTenant("Marché Dantokpa");
        const token = await rig.tg.tenantToken(tenant.id);

        // 800 collected on Passerelle's pooled provider A account (an MTN Benin payment the sandbox approves by itself).
        const created = await api("POST", "/payments", {
          token,
          json: { amount: 800, description: "Pagnes", operator: "mtn", customer: { phone: { number: "+22997000041", country: "bj" } } },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        await waitUntil(async () => (await api("GET", `/payments/${created.body.id}`, { token })).body.state === "succeeded", {
          what: "the provider A payment paid",
          timeoutMs: 10_000,
          intervalMs: 200,
        });
        // In French, on a phone, from the keyboard: the Balance & payouts link, then Enter.
        const page = await openDashboard(["fr-FR", "fr"]);
        page.on("dialog", (dialog) => void dialog.accept());
        await page.setViewportSize({ width: 390, height: 844 });
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/money"]').focus();
        await page.keyboard.press("Enter");
        const accounts = page.locator('[data-testid="holding-accounts"] > li');
        await accounts.first().waitFor();
        expect(await accounts.evaluateAll((items) => items.map((item) => item.getAttribute("data-holding")))).toEqual(["pooled:providerA"]);
        expect(await page.locator("main").textContent()).not.toContain("pooled:");

        // 900 to an MTN Benin wallet would leave from the pooled account, where the merchant holds 800: refused, and why.
        await page.locator('input[name="amount"]').fill("900");
        await page.locator('input[name="description"]').fill("Fournisseur");
        await page.locator('select[name="country"]').selectOption("bj");
        await page.locator('input[name="phone"]').fill("+229 97 00 01 23");
        await page.locator('input[name="operator"]').fill("mtn");
        await page.getByRole("button", { name: "Envoyer", exact: true }).click();
        expect(await page.getByRole("alert").textContent()).toContain("greater than the 800 XOF this tenant holds");
        expect(await page.locator('[data-testid="insufficient-hint"]').textContent()).toBe(
          "Un versement part d’un seul compte : depuis le compte partagé de Passerelle, il ne peut dépenser que ce que vous y avez encaissé (voir chaque compte ci-dessus).",
        );
        expect(await page.locator('[data-testid="payouts"]').count()).toBe(0);

        // Then the merchant's own provider B account, holding 10,000 FCFA in Senegal at the provider: listed after a refresh.
        const keys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
        const funded = await fetch(`${rig.base}/sandbox/providerB/_sim/accounts/${keys.masterKey}/balances`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ SN: 10_000 }),
        });
        expect(funded.status).toBeLessThan(300);
        const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { ...keys, environment: "sandbox" } });
        expect(stored.status, JSON.stringify(stored.body)).toBe(200);
        await page.getByRole("button", { name: "Actualiser" }).click();
        await page.locator('[data-testid="reported"]').waitFor();
        expect(await accounts.evaluateAll((items) => items.map((item) => item.getAttribute("data-holding")))).toEqual(["pooled:providerA", "own:providerB"]);

        const pooled = page.locator('li[data-holding="pooled:providerA"]');
        expect(await pooled.locator("h3").textContent()).toBe("Compte de Passerelle chez Provider A (partagé)");
        expect(await pooled.locator('dd[data-amount="available"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await pooled.locator('dd[data-amount="pending"]').textContent()).toBe(`0${NBSP}FCFA`);
        expect(await pooled.textContent()).toContain("sans vos propres clés partent d’ici : au plus ce qui est disponible.");
        const own = page.locator('li[data-holding="own:providerB"]');
        expect(await own.locator("h3").textContent()).toBe("Votre propre compte chez Provider B");
        expect(await own.textContent()).toContain("Rien d’encaissé ici pour l’instant.");
        // What provider B reports, per country: the 10,000 FCFA of Senegal among them.
        const reported = own.locator('[data-testid="reported"]');
        expect(await reported.locator("p").textContent()).toBe("Provider B indique :");
        expect(await reported.locator('dd[data-label="sn"]').textContent()).toBe(`10${NBSP}000${NBSP}FCFA`);
        expect(await reported.locator("dt").first().textContent()).toBe("Sénégal");
        expect(await page.locator('[data-testid="balance"] dd[data-amount="available"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await page.locator("main").textContent()).toContain(
          "un versement ou un remboursement depuis ce compte ne peut dépenser que ce que vous y avez encaissé.",
        );
        // Words, not the API's codes (the refusal above is the API's own message, left out here).
        const shown = await page.locator('[data-testid="holding-accounts"]').textContent();
        expect(shown).not.toContain("pooled:");
        expect(shown).not.toContain("own:");
        // Nothing wider than the phone.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await screenshot(page, "dashboard-phone-balance");
        await page.close();

        // The operator's Reconciliation: the pooled provider A account holds what the ledger says it owes.
        const operator = await openDashboard();
        await operator.getByRole("tab", { name: "Operator (admin token)" }).click();
        await operator.locator('input[name="token"]').fill(await rig.tg.adminToken());
        await operator.locator('form button[type="submit"]').click();
        await operator.getByRole("heading", { name: "Tenants" }).waitFor();
        await operator.locator('nav a[href="#/operator/reports"]').click();
        const row = operator.locator('[data-testid="pooled-accounts"] tr[data-provider="providerA"][data-currency="XOF"]');
        await row.waitFor();
        expect(await row.locator('[data-amount="held"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await row.locator('[data-amount="reported"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await row.locator('[data-amount="difference"]').textContent()).toBe(`0${NBSP}FCFA`);
        expect(await row.getAttribute("data-short")).toBe("false");
        expect(await operator.locator('[data-testid="pooled-short"]').count()).toBe(0);

        // 300 taken from Passerelle's provider A account at the provider: it now holds less than it owes the merchant.
        const debited = await fetch(`${rig.base}/sandbox/providerA/_sim/accounts/${rig.tg.config.providerA.sandboxSecretKey}/balances`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ mode: "mtn_open", amount: -300 }),
        });
        expect(debited.status, await debited.clone().text()).toBe(200);
        await operator.reload();
        await row.waitFor();
        expect(await row.getAttribute("data-short")).toBe("true");
        expect(await row.locator('[data-amount="held"]').textContent()).toBe(`800${NBSP}FCFA`);
        expect(await row.locator('[data-amount="reported"]').textContent()).toBe(`500${NBSP}FCFA`);
        expect(await row.locator('[data-amount="difference"]').textContent()).toBe(
          `\u2212300${NBSP}FCFAThe provider holds less than Passerelle owes its merchants.`,
        );
        expect(await operator.locator('[data-testid="pooled-short"]').textContent()).toBe(
          `Warning: at Provider A (XOF), the provider holds 300${NBSP}FCFA less than Passerelle owes its merchants.`,
        );
        await screenshot(operator, "dashboard-pooled-accounts");

        // The same in French, on a phone: nothing wider than the screen.
        await operator.locator('button[data-language="fr"]').click();
        await operator.setViewportSize({ width: 390, height: 844 });
        await operator.getByText("Le fournisseur détient moins que ce que Passerelle doit à ses marchands.").waitFor();
        expect(await operator.locator('[data-testid="pooled-short"]').textContent()).toBe(
          `Attention : chez Provider A (XOF), le fournisseur détient 300${NBSP}FCFA de moins que ce que Passerelle doit à ses marchands.`,
        );
        expect(await operator.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await operator.close();
      }, 40_000);
    });

    describe("money on an own account whose keys were removed", () => {
      it("lists it as the merchant's own provider A account, and refuses its refund from the pooled account with the reason", async () => {
        const tenant = await newTenant("Atelier Porto-Novo");
        const token = await rig.tg.tenantToken(tenant.id);
        // The tenant's own provider A account on the simulator, its webhooks pointed at the gateway, its keys stored.
        const sim = `${rig.base}/sandbox/providerA/_sim`;
        const own = (await (await fetch(`${sim}/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
        const pointed = await fetch(`${sim}/accounts/${own.secretKey}/webhook`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ url: `${rig.base}/providerA/webhook/sandbox/${tenant.id}` }),
        });
        expect(pointed.status).toBeLessThan(300);
        const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerA`, { token, json: { environment: "sandbox", ...own } });
        expect(stored.status, JSON.stringify(stored.body)).toBe(200);
        const created = await api("POST", "/payments", {
          token,
          json: { amount: 600, description: "Tissu", operator: "mtn", customer: { phone: { number: "+22997000042", country: "bj" } } },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const paymentId = created.body.id as string;
        await waitUntil(async () => (await api("GET", `/payments/${paymentId}`, { token })).body.state === "succeeded", {
          what: "the payment on the tenant's own provider A account paid",
          timeoutMs: 10_000,
          intervalMs: 200,
        });
        // The keys removed: a refund would now leave from Passerelle's pooled account, where the tenant holds nothing.
        expect((await api("DELETE", `/tenants/${tenant.id}/credentials/providerA/sandbox`, { token })).status).toBe(200);

        const page = await openDashboard();
        page.on("dialog", (dialog) => void dialog.accept());
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/money"]').click();
        const own600 = page.locator('li[data-holding="own:providerA"]');
        await own600.waitFor();
        expect(await own600.locator("h3").textContent()).toBe("Your own account at Provider A");
        expect(await own600.locator('dd[data-amount="available"]').textContent()).toBe(`600${NBSP}FCFA`);
        // Its keys are gone: the API says why its provider's balance cannot be read, and the screen shows it.
        expect(await own600.locator('[data-testid="reported-error"]').textContent()).toContain(
          "Provider A's balance could not be read: The tenant's Provider A keys for this environment are no longer stored",
        );
        const pooled = page.locator('li[data-holding="pooled:providerA"]');
        expect(await pooled.textContent()).toContain("Nothing collected here yet.");

        await page.evaluate((id) => (location.hash = `#/payments/${id}`), paymentId);
        const refunds = page.locator('[data-testid="refunds"]');
        await refunds.locator('input[name="amount"]').waitFor();
        await refunds.getByRole("button", { name: "Refund", exact: true }).click();
        expect(await refunds.getByRole("alert").textContent()).toContain("pooled:providerA");
        expect(await refunds.locator('[data-testid="insufficient-hint"]').textContent()).toBe(
          "A refund leaves from the account that would send it: from Passerelle's shared account, it can only spend what you collected there (see Balance & payouts).",
        );
        expect(await refunds.locator("tr[data-refund-id]").count()).toBe(0);
        await page.close();
      }, 40_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
