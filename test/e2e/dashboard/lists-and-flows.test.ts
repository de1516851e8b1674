/**
 * Issue 29's lists a merchant can keep and flows that cannot mislead, in a real browser: a new merchant's
 * checklist on the Home ticked from its own data until done; the payments' page and Balance & payouts' list, state
 * and page in the address (a reload, Back); a click on a row's amount opens its record; a payout to a local
 * number with its country, shown in groups, its row opening the payout's page with its entries — in French at
 * 390 px, from the keyboard. In English on a desktop: the operator disables a tenant in a dialog with a reason
 * typed from the keyboard (no Go live offered then), and a person of that shop is told at sign-in, with the reason;
 * the operator's stuck payments and the reconciliation's differences paged, the page in the address.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 900 };

describeWithChromium(
  "browser: lists kept in the address, rows that open, and flows that cannot mislead",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    describe("a merchant, in French on a phone", () => {
      it("ticks the checklist from its data, keeps lists in the address, opens rows, and pays out to a local number", async () => {
        const tenant = await newTenant("Boutique Ganhi");
        const token = await rig.tg.tenantToken(tenant.id);
        const page = await openDashboard(["fr-FR", "fr"]);
        page.on("dialog", (dialog) => void dialog.accept());
        await page.setViewportSize(PHONE);
        await signInWithKey(page, tenant.keyId, tenant.secret);

        // A new merchant: nothing done yet, the first step pointed at.
        const checklist = page.locator('[data-testid="onboarding"]');
        await checklist.waitFor();
        expect(await checklist.textContent()).toContain("0 étapes faites sur 4.");
        expect(await checklist.locator('li[aria-current="step"]').getAttribute("data-step")).toBe("credentials");

        // Its keys, a sandbox payment collected, an endpoint: three steps, from its own data.
        const keys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
        expect((await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { ...keys, environment: "sandbox" } })).status).toBe(200);
        const paid = await api("POST", "/payments", {
          token,
          json: { amount: 800, description: "Pagne", operator: "mtn", customer: { phone: { number: "+22997000051", country: "bj" } } },
        });
        expect(paid.status, JSON.stringify(paid.body)).toBe(200);
        await waitUntil(async () => (await api("GET", `/payments/${paid.body.id}`, { token })).body.state === "succeeded", {
          what: "the payment paid",
          timeoutMs: 15_000,
          intervalMs: 200,
        });
        expect((await api("POST", "/webhooks", { token, json: { url: `${rig.receiver.url}/ganhi` } })).status).toBe(200);
        await page.reload();
        await checklist.waitFor();
        expect(await checklist.textContent()).toContain("3 étapes faites sur 4.");
        expect(await checklist.locator('li[data-done="true"]').evaluateAll((items) => items.map((item) => item.getAttribute("data-step")))).toEqual([
          "credentials",
          "testPayment",
          "webhook",
        ]);
        await screenshot(page, "dashboard-phone-onboarding");

        // 21 more payments (pending): two pages of 20. The next page's cursor is in the address; a reload keeps it.
        for (let index = 0; index < 21; index++) {
          const created = await api("POST", "/payments", {
            token,
            json: { amount: 2000 + index, description: `Commande ${index}`, operator: "moov", customer: { phone: { number: "+22995000051", country: "bj" } } },
          });
          expect(created.status, JSON.stringify(created.body)).toBe(200);
        }
        await page.evaluate(() => (location.hash = "#/payments"));
        const rows = page.locator('[data-testid="payments"] tbody tr');
        await rows.first().waitFor();
        expect(await rows.count()).toBe(20);
        const newest = await rows.first().getAttribute("data-payment-id");
        await page.getByRole("button", { name: "Suivants →" }).focus();
        await page.keyboard.press("Enter");
        await page.waitForURL(/#\/payments\?page=/);
        await waitUntil(async () => (await rows.count()) === 2, { what: "the second page's two payments" });
        const secondPage = await rows.evaluateAll((items) => items.map((item) => item.getAttribute("data-payment-id")));
        expect(secondPage).toContain(paid.body.id as string);
        await page.reload();
        await waitUntil(async () => (await rows.count()) === 2, { what: "the second page after a reload" });
        expect(await rows.evaluateAll((items) => items.map((item) => item.getAttribute("data-payment-id")))).toEqual(secondPage);
        // A click on a row's amount (not its link) opens the payment; Back comes to the same page of the list.
        await page.locator(`tr[data-payment-id="${paid.body.id}"] td`).nth(1).click();
        await page.waitForURL(new RegExp(`#/payments/${paid.body.id}$`));
        await page.locator('[data-testid="payment-facts"]').waitFor();
        expect(await page.locator('[data-testid="payment-facts"]').textContent()).toContain("+229 97 00 00 51");
        await page.goBack();
        await waitUntil(async () => (await rows.count()) === 2, { what: "the second page again after Back" });
        await page.goBack();
        await waitUntil(async () => (await rows.first().getAttribute("data-payment-id")) === newest && (await rows.count()) === 20, {
          what: "the first page after Back",
        });

        // A payout to a local number, its country chosen by name: sent to +229…, shown in groups.
        await page.evaluate(() => (location.hash = "#/money"));
        await page.locator('input[name="amount"]').fill("300");
        await page.locator('input[name="description"]').fill("Livreur");
        await page.locator('select[name="country"]').selectOption({ label: "Bénin (+229)" });
        await page.locator('input[name="phone"]').fill("97 00 00 61");
        await page.locator('input[name="operator"]').fill("mtn");
        await page.locator('input[name="operator"]').press("Enter");
        const payoutRow = page.locator('[data-testid="payouts"] tr[data-payout-id]');
        await payoutRow.waitFor();
        expect(await payoutRow.textContent()).toContain("+229 97 00 00 61 · MTN Mobile Money");

        // The refunds' list, then a state: both in the address, and Back returns to the payouts.
        await page.locator('nav.tabs-nav a[href="#/money?list=refunds"]').click();
        await page.getByText("Aucun remboursement.").waitFor();
        await page.getByRole("button", { name: "Filtres" }).click();
        await page.locator('select[name="state"]').selectOption("failed");
        await page.getByRole("button", { name: "Filtrer" }).click();
        await page.waitForURL(/#\/money\?list=refunds&state=failed$/);
        await page.reload();
        expect(await page.locator('select[name="state"]').inputValue()).toBe("failed");
        await page.getByText("Aucun remboursement.").waitFor();
        await page.goBack();
        await page.goBack();
        await payoutRow.waitFor();
        expect(await page.evaluate(() => location.hash)).toBe("#/money");

        // The payout's row opens its page: its wallet, and the ledger's entries it moved.
        await payoutRow.locator("td").first().click();
        await page.waitForURL(/#\/money\/po_\w+$/);
        await page.getByRole("heading", { name: "Versement" }).waitFor();
        expect(await page.locator('[data-testid="money-out-facts"]').textContent()).toContain("+229 97 00 00 61 · MTN Mobile Money · Bénin");
        await page.locator('[data-testid="entries"] tbody tr').first().waitFor();
        expect(await page.title()).toBe("Versement ou remboursement · Passerelle — tableau de bord");
        // Nothing on the phone scrolls sideways.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);

        // Live enabled by the operator: the checklist is done, and gone.
        expect((await api("PATCH", `/tenants/${tenant.id}`, { token: await rig.tg.adminToken(), json: { liveEnabled: true } })).status).toBe(200);
        await page.evaluate(() => (location.hash = "#/home"));
        await page.getByRole("heading", { name: "Accueil", exact: true }).waitFor();
        await page.locator('[data-testid="attention"], .empty').first().waitFor();
        expect(await checklist.count()).toBe(0);
        await page.close();
      }, 90_000);
    });

    describe("the operator and a disabled shop, in English on a desktop", () => {
      it("disables a tenant after a dialog asking a reason, from the keyboard, and its person is told so at sign-in", async () => {
        const tenant = await newTenant("Quincaillerie Akpakpa");
        await rig.newPerson(tenant.id, "awa@akpakpa.example", "a long enough password 29");
        const page = await openDashboard();
        await page.setViewportSize(DESKTOP);
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.adminToken());
        await page.locator('form button[type="submit"]').click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();
        const row = page.locator(`tr[data-tenant-id="${tenant.id}"]`);
        await row.waitFor();

        // Cancelled with Escape: nothing changes.
        await row.getByRole("button", { name: "Disable" }).focus();
        await page.keyboard.press("Enter");
        const dialog = page.getByRole("dialog", { name: "Disable Quincaillerie Akpakpa?" });
        await dialog.waitFor();
        expect(await dialog.textContent()).toContain("Its keys and tokens stop working at once");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
        expect(await row.textContent()).toContain("active");

        // Confirmed with a reason typed: the reason is required, then stored and shown.
        await row.getByRole("button", { name: "Disable" }).click();
        await dialog.waitFor();
        await page.keyboard.press("Tab");
        await dialog.getByRole("button", { name: "Disable" }).click();
        expect(await dialog.isVisible()).toBe(true);
        await dialog.getByLabel("Reason", { exact: false }).fill("Unpaid invoice of March");
        await dialog.getByLabel("Reason", { exact: false }).press("Tab");
        await page.keyboard.press("Enter");
        await row.filter({ hasText: "disabled" }).waitFor();
        expect(await row.textContent()).toContain("Unpaid invoice of March");
        // A disabled tenant is not offered to go live.
        expect(await row.getByRole("button", { name: "Go live" }).count()).toBe(0);
        await screenshot(page, "dashboard-tenant-disable");
        await page.close();

        // Its person signs in: told the shop is disabled, in words, with the operator's reason; in French too.
        for (const [languages, words] of [
          [["en-US", "en"], "Your shop is disabled: Passerelle's operator stopped it."],
          [["fr-FR", "fr"], "Votre boutique est désactivée : l’opérateur de Passerelle l’a arrêtée."],
        ] as const) {
          const person = await openDashboard([...languages]);
          await person.locator('input[name="email"]').fill("awa@akpakpa.example");
          await person.locator('input[name="password"]').fill("a long enough password 29");
          await person.locator('input[name="password"]').press("Enter");
          const alert = person.getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toContain(words);
          expect(await alert.textContent()).toContain("Unpaid invoice of March");
          expect(await person.locator('[data-testid="environment"]').count()).toBe(0);
          await person.close();
        }
      }, 60_000);
    });

    describe("the operator's and the accountant's longer lists", () => {
      it("pages the stuck payments and the reconciliation's differences, the page in the address kept by a reload, Back to the first", async () => {
        const tenant = await newTenant("Grossiste Dantokpa");
        const db = rig.tg.gateway.deps.db;
        const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
        // 22 payments pending for two days: stuck. 22 differences seen this week.
        for (let index = 0; index < 22; index++) {
          const payment = await insertDirectPayment(db, tenant.id, 9_920_000 + index, {
            created_at: twoDaysAgo,
            amount: 1000 + index,
            description: `Sac ${index}`,
          });
          await db
            .insertInto("reconciliation_differences")
            .values({
              subject_id: payment.id,
              subject_kind: "payment",
              tenant_id: tenant.id,
              environment: "sandbox",
              provider: "providerA",
              our_state: "pending",
              provider_state: "succeeded",
              provider_status: "SUCCESS",
              amount: payment.amount,
              currency: "XOF",
              first_seen_at: new Date(Date.now() - (index + 1) * 3_600_000),
              last_seen_at: new Date(Date.now() - (index + 1) * 3_600_000),
            })
            .execute();
        }

        const page = await openDashboard(["en-US", "en"]);
        await page.setViewportSize(DESKTOP);
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.adminToken());
        await page.locator('form button[type="submit"]').click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();

        // Stuck payments: 20, then the last 2 on the next page, kept by a reload; Back to the first 20.
        await page.locator('nav a[href="#/operator/stuck"]').click();
        const stuck = page.locator('[data-testid="stuck"] tbody tr');
        await waitUntil(async () => ((await stuck.count()) === 20 ? true : undefined), { what: "the first 20 stuck payments" });
        await page.getByRole("button", { name: "Newer →" }).click();
        await page.waitForURL(/#\/operator\/stuck\?page=/);
        await waitUntil(async () => ((await stuck.count()) === 2 ? true : undefined), { what: "the last 2 stuck payments" });
        await page.reload();
        await waitUntil(async () => ((await stuck.count()) === 2 ? true : undefined), { what: "the same page after a reload" });
        await page.goBack();
        await waitUntil(async () => ((await stuck.count()) === 20 ? true : undefined), { what: "the first page again" });

        // The differences of every tenant's reconciliation, paged alike.
        await page.locator('nav a[href="#/operator/reports"]').click();
        const differences = page.locator('[data-testid="reconciliation-differences"] tbody tr');
        await waitUntil(async () => ((await differences.count()) === 20 ? true : undefined), { what: "the first 20 differences" });
        const first = await differences.first().textContent();
        await page.getByRole("button", { name: "Older →" }).click();
        await page.waitForURL(/#\/operator\/reports\?page=/);
        await waitUntil(async () => ((await differences.count()) === 2 ? true : undefined), { what: "the last 2 differences" });
        await page.reload();
        await waitUntil(async () => ((await differences.count()) === 2 ? true : undefined), { what: "the same page after a reload" });
        expect(await differences.first().textContent()).not.toBe(first);
        await page.goBack();
        await waitUntil(async () => ((await differences.count()) === 20 ? true : undefined), { what: "the first page again" });
        expect(await differences.first().textContent()).toBe(first);
        await page.close();
      }, 90_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
