/**
 * The merchant's money in the dashboard, in a real browser (issue 17 points 3 and 5): provider B keys stored in
 * Tenant Config (then replaced: both versions listed, the payment's link landing on the one it was made with), a
 * webhook endpoint added, a sandbox checkout made from the Payments screen and paid on the
 * simulator's page, seen `succeeded` with its `payment.completed` delivery, delivered again; a permit
 * authorised on the simulator's page listed with its charge.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { readFile } from "node:fs/promises";
import { describeWithChromium } from "../../support/browser.ts";
import type { Json } from "../../support/json.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

describeWithChromium(
  "browser: payments and permits in the dashboard",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    describe("a sandbox checkout, from the credentials to the replayed webhook", () => {
      it("stores provider B keys, adds an endpoint, sees the paid checkout succeed with its payment.completed delivery, delivers it again, refunds part of it and pays a supplier out", async () => {
        const tenant = await newTenant("Boutique Dakar");
        const page = await openDashboard();
        await signInWithKey(page, tenant.keyId, tenant.secret);

        // Tenant Config: provider B's sandbox keys, from the simulator's account maker.
        const keys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
        // Money in the tenant's provider B account in Senegal, for the refund below.
        const funded = await fetch(`${rig.base}/sandbox/providerB/_sim/accounts/${keys.masterKey}/balances`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ SN: 10_000 }),
        });
        expect(funded.status).toBeLessThan(300);
        await page.locator('nav a[href="#/settings"]').click();
        const providerB = page.locator('[data-testid="provider-b"]');
        await providerB.getByText("No credentials stored.").waitFor();
        await providerB.locator('input[name="masterKey"]').fill(keys.masterKey!);
        await providerB.locator('input[name="privateKey"]').fill(keys.privateKey!);
        await providerB.locator('input[name="token"]').fill(keys.token!);
        await providerB.getByRole("button", { name: "Save" }).click();
        await providerB.getByText("Credentials saved (Sandbox).").waitFor();
        const stored = providerB.locator('dl[data-environment="sandbox"]');
        await stored.waitFor();
        expect(await stored.getAttribute("data-version")).toBe("1");
        // Masked: the last four characters only.
        const masked = await stored.locator(".masked").first().textContent();
        expect(masked).toBe(`…${keys.masterKey!.slice(-4)}`);
        expect(await page.content()).not.toContain(keys.privateKey!);

        // A webhook endpoint: its secret shown once, with a copy button.
        await page.locator('nav a[href="#/webhooks"]').click();
        await page.getByText("No endpoints.", { exact: false }).waitFor();
        await page.locator('input[name="url"]').fill(`${rig.receiver.url}/hooks`);
        await page.getByRole("button", { name: "Add", exact: true }).click();
        const secret = await page.locator('[data-testid="secret"]').textContent();
        expect(secret).toMatch(/^whsec_/);
        await page.getByRole("button", { name: "Copy" }).waitFor();
        await page.getByRole("button", { name: "I have copied the secret" }).click();
        expect(await page.locator('[data-testid="secret"]').count()).toBe(0);
        expect(await page.content()).not.toContain(secret!);
        await page.locator('[data-testid="endpoints"] li').first().waitFor();

        // A test checkout from the Payments screen (sandbox only); the customer pays it on the simulator's page.
        await page.locator('nav a[href="#/payments"]').click();
        await page.getByText("Try a payment (sandbox)").click();
        expect(await page.locator('input[name="amount"]').inputValue()).toBe("5000");
        await page.locator('input[name="description"]').fill("Commande 42");
        await page.getByRole("button", { name: "Make the checkout page" }).click();
        const pageLink = page.locator('[data-testid="checkout-page"]');
        await pageLink.waitFor();
        const payUrl = (await pageLink.getAttribute("href"))!;
        expect(payUrl).toStartWith(`${rig.base}/sandbox/providerB/`);
        const followHref = (await page.getByRole("link", { name: "Follow this payment" }).getAttribute("href"))!;
        const paymentId = decodeURIComponent(followHref.replace("#/payments/", ""));
        expect(paymentId).toMatch(/^pay_/);
        const payPage = await rig.browser.newPage();
        await payPage.goto(payUrl);
        await payPage.getByRole("button", { name: "Pay", exact: true }).click();
        // Paid: the provider sends the customer back to the dashboard.
        await payPage.waitForURL((url) => url.toString().startsWith(`${rig.base}/dashboard`));
        await payPage.close();

        // The list shows it succeeded, once the provider's IPN came in.
        const row = page.locator(`tr[data-payment-id="${paymentId}"]`);
        await waitUntil(
          async () => {
            await page.getByRole("button", { name: "Filter" }).click();
            await row.waitFor();
            return (await row.getAttribute("data-state")) === "succeeded";
          },
          { what: `payment ${paymentId} succeeded in the list`, timeoutMs: 15_000, intervalMs: 300 },
        );
        expect(await row.textContent()).toContain("5,000\u00a0FCFA");
        await screenshot(page, "dashboard-payments");

        // Its page: the timeline and the payment.completed delivery, delivered.
        await row.getByRole("link").click();
        await page.locator('[data-testid="payment-facts"][data-state="succeeded"]').waitFor();
        const delivery = page.locator('[data-testid="payment-deliveries"] li[data-event-type="payment.completed"]');
        await waitUntil(
          async () => {
            await page.locator('[data-testid="payment-deliveries"]').getByRole("button", { name: "Refresh" }).click();
            await delivery.waitFor();
            return (await delivery.getAttribute("data-state")) === "succeeded";
          },
          { what: "the payment.completed delivery succeeded", timeoutMs: 15_000, intervalMs: 300 },
        );
        // Made with the provider B keys stored above (version 1), which Settings shows.
        const keysUsed = page.locator('[data-testid="credential-version"]');
        expect(await keysUsed.getAttribute("data-version")).toBe("1");
        expect(await keysUsed.textContent()).toContain("Made with your Provider B keys, version 1.");
        expect(await keysUsed.getByRole("link").getAttribute("href")).toBe("#/settings/providerB-sandbox-v1");
        // The timeline, in time order: created, then the payment.completed event (events.list by paymentId), then the final state.
        const timeline = page.locator('[data-testid="timeline"]');
        await timeline.locator('li[data-kind="event"][data-event-type="payment.completed"]').waitFor();
        const kinds = await timeline
          .locator("li")
          .evaluateAll((items) => items.map((item) => item.getAttribute("data-event-type") ?? item.getAttribute("data-kind")));
        expect(kinds[0]).toBe("created");
        expect(kinds).toContain("final");
        expect(kinds.indexOf("payment.completed")).toBeGreaterThan(0);
        const times = await timeline.locator("li time").evaluateAll((items) => items.map((item) => Date.parse(item.getAttribute("datetime")!)));
        expect(times).toEqual([...times].sort((a, b) => a - b));
        expect(await delivery.locator('tr[data-status="200"]').count()).toBe(1);
        const receivedBefore = rig.receiver.receipts.filter((receipt) => receipt.path === "/hooks").length;
        expect(receivedBefore).toBe(1);

        // Delivered again: the receiver gets it a second time, and the log shows the second attempt.
        await delivery.getByRole("button", { name: "Deliver again" }).click();
        await page.getByText("Asked to deliver again.").waitFor();
        await waitUntil(() => rig.receiver.receipts.filter((receipt) => receipt.path === "/hooks").length === 2, {
          what: "the delivery sent again",
          timeoutMs: 10_000,
          intervalMs: 100,
        });
        await waitUntil(
          async () => {
            await page.locator('[data-testid="payment-deliveries"]').getByRole("button", { name: "Refresh" }).click();
            return (await delivery.locator('tr[data-status="200"]').count()) === 2;
          },
          { what: "the second attempt in the log", timeoutMs: 10_000, intervalMs: 300 },
        );

        // A partial refund from the payment's page: 500 of the 5,000 back to the wallet that paid (the sandbox sends
        // a disbursement below 1,000 by itself).
        page.on("dialog", (dialog) => void dialog.accept());
        const refunds = page.locator('[data-testid="refunds"]');
        expect(await refunds.locator('[data-testid="refund-left"]').textContent()).toContain("Left to refund: 5,000\u00a0FCFA");
        expect(await refunds.locator('input[name="amount"]').inputValue()).toBe("5000");
        await refunds.locator('input[name="amount"]').fill("500");
        await refunds.locator('input[name="reason"]').fill("Taille");
        await refunds.getByRole("button", { name: "Refund", exact: true }).click();
        const refundRow = refunds.locator("tr[data-refund-id]");
        await refundRow.waitFor();
        await waitUntil(
          async () => {
            await refunds.getByRole("button", { name: "Refresh" }).click();
            return (await refundRow.getAttribute("data-state")) === "succeeded";
          },
          { what: "the refund succeeded", timeoutMs: 15_000, intervalMs: 300 },
        );
        expect(await refunds.locator('[data-testid="refund-left"]').textContent()).toContain("Left to refund: 4,500\u00a0FCFA");
        // The refund in the timeline too: asked, then done.
        await timeline.locator('li[data-kind="refund"]', { hasText: "Refund of 500\u00a0FCFA asked" }).waitFor();
        await timeline.locator('li[data-kind="refund"]', { hasText: "500\u00a0FCFA refunded" }).waitFor();
        await screenshot(page, "dashboard-payment");

        // A payout to a supplier's wallet from Balance & payouts, sent by the sandbox; the balance shows the money in.
        await page.locator('nav a[href="#/money"]').click();
        await page.locator('[data-testid="balance"]').waitFor();
        await page.locator('input[name="amount"]').fill("700");
        await page.locator('input[name="description"]').fill("Livreur");
        await page.locator('select[name="country"]').selectOption("sn");
        // A local number, in the country chosen beside it.
        await page.locator('input[name="phone"]').fill("77 000 00 08");
        await page.locator('input[name="operator"]').fill("orange");
        await page.getByRole("button", { name: "Send", exact: true }).click();
        await page.getByText(/^Payout po_\w+ recorded/).waitFor();
        const payoutRow = page.locator('[data-testid="payouts"] tr[data-payout-id]');
        await payoutRow.waitFor();
        expect(await payoutRow.textContent()).toContain("+221 77 000 00 08");
        await waitUntil(
          async () => {
            await page.locator("section").getByRole("button", { name: "Refresh" }).click();
            return (await payoutRow.getAttribute("data-state")) === "sent";
          },
          { what: "the payout sent", timeoutMs: 15_000, intervalMs: 300 },
        );
        await screenshot(page, "dashboard-money");

        // The payouts, refunds and balance entries as CSV files: each holds what happened above.
        const saved = async (button: string) => {
          const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: button }).click()]);
          const [header, ...lines] = (await Bun.file((await download.path())!).text()).trim().split("\n");
          return { name: download.suggestedFilename(), header: header!.split(","), lines };
        };
        const payoutsFile = await saved("Payouts (CSV)");
        expect(payoutsFile.name).toMatch(/^payouts-\d{4}-\d{2}-\d{2}\.csv$/);
        expect(payoutsFile.lines).toHaveLength(1);
        expect(payoutsFile.lines[0]).toContain(",sent,Livreur,");
        const refundsFile = await saved("Refunds (CSV)");
        expect(refundsFile.lines).toHaveLength(1);
        expect(refundsFile.lines[0]!.split(",")[refundsFile.header.indexOf("amount")]).toBe("500");
        const entriesFile = await saved("Balance entries (CSV)");
        expect(entriesFile.header.slice(0, 4)).toEqual(["id", "journal", "account", "holding"]);
        const amounts = entriesFile.lines.map((line) => Number(line.split(",")[entriesFile.header.indexOf("amount")]));
        expect(amounts.reduce((sum, amount) => sum + amount, 0)).toBe(0);

        // The payment's timeline has its own events only (its completion, its refund): the tenant's payout.sent is in its
        // event log, not there.
        await waitUntil(
          async () => {
            const log = await api("GET", "/events?type=payout.sent", { token: await rig.tg.tenantToken(tenant.id) });
            return (log.body.data as unknown[]).length === 1;
          },
          { what: "the payout.sent event", timeoutMs: 10_000, intervalMs: 200 },
        );
        await page.evaluate((id) => (location.hash = `#/payments/${id}`), paymentId);
        const ownEvents = page.locator('[data-testid="timeline"] li[data-kind="event"]');
        await ownEvents.first().waitFor();
        expect(await ownEvents.evaluateAll((items) => items.map((item) => item.getAttribute("data-event-type")))).toEqual([
          "payment.completed",
          "refund.succeeded",
        ]);

        // Reconciliation: the paid checkout, the refund and the payout, each in its row.
        await page.locator('nav a[href="#/reports"]').click();
        const totals = page.locator('[data-testid="reconciliation-rows"]');
        await totals.waitFor();
        expect(await totals.locator('tr[data-kind="payment"][data-state="succeeded"]').textContent()).toContain("5,000\u00a0FCFA");
        expect(await totals.locator('tr[data-kind="refund"]').count()).toBe(1);
        expect(await totals.locator('tr[data-kind="payout"]').count()).toBe(1);
        // The same report saved as a CSV file, fetched with the session's token under the page's CSP.
        const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
        expect(download.suggestedFilename()).toMatch(/^reconciliation-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
        const csv = (await readFile((await download.path())!, "utf8")).split(/\r?\n/);
        expect(csv[0]).toBe(
          "section,kind,provider,operator,state,currency,count,total,id,tenant_id,provider_state,provider_status,last_seen_at,reported,difference",
        );
        expect(csv.filter((line) => /^total,payment,providerB,[^,]*,succeeded,XOF,1,5000,/.test(line))).toHaveLength(1);

        // New provider B keys (another account of the simulator's): version 2 in use, version 1 replaced, both listed masked.
        const newKeys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
        await page.locator('nav a[href="#/settings"]').click();
        await providerB.locator('input[name="masterKey"]').fill(newKeys.masterKey!);
        await providerB.locator('input[name="privateKey"]').fill(newKeys.privateKey!);
        await providerB.locator('input[name="token"]').fill(newKeys.token!);
        await providerB.getByRole("button", { name: "Save" }).click();
        await providerB.getByText("Credentials saved (Sandbox).").waitFor();
        const versions = page.locator('[data-testid="providerB-versions"] [data-environment="sandbox"] li[data-version]');
        await page.locator('[data-testid="providerB-versions"] li[data-version="2"]').waitFor();
        expect(await versions.evaluateAll((items) => items.map((item) => `${item.getAttribute("data-version")}:${item.getAttribute("data-active")}`))).toEqual([
          "2:true",
          "1:false",
        ]);
        expect(await versions.nth(0).locator(".badge").textContent()).toBe("In use");
        expect(await versions.nth(0).locator(".masked").first().textContent()).toBe(`…${newKeys.masterKey!.slice(-4)}`);
        expect(await versions.nth(1).locator('[data-testid="version-ended"]').textContent()).toMatch(/^Replaced on \d{1,2} \w+ \d{4}, \d{2}:\d{2}$/);
        expect(await versions.nth(1).locator(".masked").first().textContent()).toBe(`…${keys.masterKey!.slice(-4)}`);
        expect(await page.content()).not.toContain(newKeys.privateKey!);
        await screenshot(page, "dashboard-settings");

        // The payment still says version 1, and its link (followed from the keyboard) lands on version 1 in that list.
        await page.evaluate((id) => (location.hash = `#/payments/${id}`), paymentId);
        expect(await keysUsed.textContent()).toContain("Made with your Provider B keys, version 1.");
        await keysUsed.getByRole("link", { name: "See this version in Settings" }).focus();
        await page.keyboard.press("Enter");
        await page.getByRole("heading", { name: "Settings" }).waitFor();
        const versionOne = page.locator("li#providerB-sandbox-v1");
        await waitUntil(async () => (await page.evaluate(() => document.activeElement?.id)) === "providerB-sandbox-v1", {
          what: "version 1 focused",
          timeoutMs: 5_000,
          intervalMs: 50,
        });
        expect(await versionOne.getAttribute("aria-current")).toBe("true");
        expect(await versionOne.getAttribute("data-active")).toBe("false");
        expect(await versionOne.isVisible()).toBe(true);
        // On a phone, in French: the list fits 390 px and says when version 1 was replaced.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.locator('button[data-language="fr"]').click();
        await versions
          .nth(1)
          .getByText(/^Remplacée le /)
          .waitFor();
        expect(await versions.nth(0).locator(".badge").textContent()).toBe("En service");
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await page.setViewportSize({ width: 1200, height: 800 });

        // The same in French: the amount as a merchant in Dakar reads it.
        await page.locator('button[data-language="fr"]').click();
        await page.locator('nav a[href="#/payments"]').click();
        await page.getByRole("heading", { name: "Paiements" }).waitFor();
        expect(await page.locator(`tr[data-payment-id="${paymentId}"]`).textContent()).toContain("5\u00a0000\u00a0FCFA");
        await page.close();
      }, 60_000);
    });

    describe("finding payments", () => {
      it("narrows the list by amount range, customer's phone and days, shows the API's refusal of an empty range, and shows a payment made on the gateway's own account", async () => {
        const tenant = await newTenant("Recherche Lomé");
        const token = await rig.tg.tenantToken(tenant.id);
        const made = {} as Record<600 | 800, string>;
        for (const [amount, number] of [
          [600, "+22997000021"],
          [800, "+22997000022"],
        ] as const) {
          const created = await api("POST", "/payments", {
            token,
            json: { amount, description: `Panier ${amount}`, operator: "mtn", customer: { phone: { number, country: "bj" } } },
          });
          expect(created.status, JSON.stringify(created.body)).toBe(200);
          made[amount] = created.body.id as string;
        }
        const page = await openDashboard();
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/payments"]').click();
        const rows = page.locator('[data-testid="payments"] tr[data-payment-id]');
        const listed = () => rows.evaluateAll((items) => items.map((item) => item.getAttribute("data-payment-id")));
        await page.locator(`tr[data-payment-id="${made[800]}"]`).waitFor();
        expect(await listed()).toEqual([made[800], made[600]]);

        // An amount range: 700 to 900 leaves the 800 one.
        await page.locator('input[name="amountMin"]').fill("700");
        await page.locator('input[name="amountMax"]').fill("900");
        await page.getByRole("button", { name: "Filter" }).click();
        await waitUntil(async () => (await listed()).join() === made[800], { what: "the 800 FCFA payment alone", timeoutMs: 5_000, intervalMs: 100 });
        // The filters are in the address: a reload (or a bookmark) shows the same list, Back the one before.
        expect(new URL(page.url()).hash).toBe("#/payments?amountMin=700&amountMax=900");
        await page.reload();
        await waitUntil(async () => (await listed()).join() === made[800], { what: "the same list after a reload", timeoutMs: 5_000, intervalMs: 100 });
        expect(await page.locator('input[name="amountMin"]').inputValue()).toBe("700");
        await page.goBack();
        await waitUntil(async () => (await listed()).length === 2, { what: "Back: the list before the filters", timeoutMs: 5_000, intervalMs: 100 });
        await page.goForward();
        await waitUntil(async () => (await listed()).join() === made[800], { what: "Forward: filtered again", timeoutMs: 5_000, intervalMs: 100 });

        // Every payment the filters keep, as a CSV file.
        const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
        expect(download.suggestedFilename()).toMatch(/^payments-\d{4}-\d{2}-\d{2}\.csv$/);
        const file = await Bun.file((await download.path())!).text();
        const [header, ...lines] = file.trim().split("\n");
        expect(header).toStartWith("id,provider,kind,state,");
        expect(lines.map((line) => line.split(",")[0])).toEqual([made[800]]);

        // Wallets by their names: a column, and a filter.
        expect(await rows.first().locator("td[data-wallet]").textContent()).toBe("MTN Mobile Money · Benin");
        await page.getByRole("button", { name: "Reset" }).click();
        await page.locator('select[name="operator"]').selectOption("orange");
        await page.getByRole("button", { name: "Filter" }).click();
        await page.getByText("No payment matches these filters.").waitFor();
        await page.locator('select[name="operator"]').selectOption("mtn");
        await page.getByRole("button", { name: "Filter" }).click();
        await waitUntil(async () => (await listed()).length === 2, { what: "the two MTN payments", timeoutMs: 5_000, intervalMs: 100 });
        expect(new URL(page.url()).hash).toBe("#/payments?operator=mtn");

        // Text of the description, any case.
        await page.getByRole("button", { name: "Reset" }).click();
        await page.locator('select[name="searchBy"]').selectOption("q");
        await page.locator('input[name="search"]').fill("panier 6");
        await page.getByRole("button", { name: "Filter" }).click();
        await waitUntil(async () => (await listed()).join() === made[600], {
          what: "the payment whose description holds 'panier 6'",
          timeoutMs: 5_000,
          intervalMs: 100,
        });
        expect(await page.locator('select[name="searchBy"]').inputValue()).toBe("q");

        // The phone as a merchant types it (spaces, no +): the 600 one. The reset list first (both payments), or the
        // previous filter's list — the 600 one too — would pass for the phone's.
        await page.getByRole("button", { name: "Reset" }).click();
        await waitUntil(async () => (await listed()).length === 2, { what: "both payments after Reset", timeoutMs: 5_000, intervalMs: 100 });
        await page.locator('input[name="phone"]').fill("229 97 00 00 21");
        await page.keyboard.press("Enter");
        await waitUntil(async () => (await listed()).join() === made[600], {
          what: "the payment to +229 97 00 00 21 alone",
          timeoutMs: 5_000,
          intervalMs: 100,
        });
        expect(await rows.first().textContent()).toContain("+229 97 00 00 21");

        // Created today: both; up to yesterday: none, and the screen says no payment matches.
        const today = await page.evaluate(() => new Date(Date.now() - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 10));
        await page.getByRole("button", { name: "Reset" }).click();
        await page.locator('input[name="from"]').fill(today);
        await page.locator('input[name="to"]').fill(today);
        await page.getByRole("button", { name: "Filter" }).click();
        await waitUntil(async () => (await listed()).length === 2, { what: "today's two payments", timeoutMs: 5_000, intervalMs: 100 });
        await page.locator('input[name="from"]').fill("2026-01-01");
        await page.locator('input[name="to"]').fill("2026-01-02");
        await page.getByRole("button", { name: "Filter" }).click();
        await page.getByText("No payment matches these filters.").waitFor();

        // A range the API refuses: its own message.
        await page.getByRole("button", { name: "Reset" }).click();
        await page.locator('input[name="amountMin"]').fill("900");
        await page.locator('input[name="amountMax"]').fill("700");
        await page.getByRole("button", { name: "Filter" }).click();
        expect(await page.getByRole("alert").textContent()).toContain("amountMin must not be more than amountMax");
        // Said in words first (chosen by the error's code), then the API's own detail.
        expect(await page.getByRole("alert").locator("strong").textContent()).toBe("Some of what was sent is not valid.");

        // The 600 one's page: taken on the gateway's own provider A account, tried once, by the route list.
        await page.evaluate((id) => (location.hash = `#/payments/${id}`), made[600]);
        await page.locator('[data-testid="payment-facts"]').waitFor();
        expect(await page.locator('[data-testid="credential-version"]').textContent()).toBe("Made on the gateway's Provider A account (not your own keys).");
        const attempt = page.locator('[data-testid="timeline"] li[data-kind="attempt"]');
        expect(await attempt.textContent()).toContain("Try 1 on Provider A: taken");
        expect(await attempt.textContent()).toContain("first of the route list");

        await page.close();
      }, 30_000);
    });

    describe("permits", () => {
      it("lists a permit authorised on the simulator's page, sets up and cancels its schedule, and shows its charge", async () => {
        const tenant = await newTenant("Abonnements Cotonou");
        const token = await rig.tg.tenantToken(tenant.id);
        const keys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Json;
        const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { ...keys, environment: "sandbox" } });
        expect(stored.status, JSON.stringify(stored.body)).toBe(200);
        const created = await api("POST", "/providerB/permits", {
          token,
          tenantId: tenant.id,
          json: {
            customer: { name: "Koffi Mensah", phone: "+22997000000" },
            description: "Abonnement mensuel",
            maxAmount: 20_000,
            returnUrl: `${rig.receiver.url}/autorise`,
            cancelUrl: `${rig.receiver.url}/refuse`,
          },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const { permitId, authorizationUrl } = created.body as { permitId: string; authorizationUrl: string };
        const authorise = await rig.browser.newPage();
        await authorise.goto(authorizationUrl);
        await authorise.getByRole("button", { name: "Authorise", exact: true }).click();
        await authorise.waitForURL((url) => url.toString().startsWith(`${rig.receiver.url}/autorise`));
        await authorise.close();
        await waitUntil(async () => (await api("GET", `/providerB/permits/${permitId}`, { token, tenantId: tenant.id })).body.status === "active", {
          what: `permit ${permitId} active`,
          timeoutMs: 10_000,
          intervalMs: 200,
        });
        const charged = await api("POST", `/providerB/permits/${permitId}/charges`, {
          token,
          tenantId: tenant.id,
          json: { amount: 7_500, description: "Mars" },
        });
        expect(charged.status, JSON.stringify(charged.body)).toBe(200);

        const page = await openDashboard();
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/permits"]').click();
        const row = page.locator(`tr[data-permit-id="${permitId}"]`);
        await row.waitFor();
        expect(await row.textContent()).toContain("20,000\u00a0FCFA");
        expect(await row.textContent()).toContain("Active");
        await row.getByRole("link").click();
        await page.getByRole("heading", { name: "Permit" }).waitFor();
        await page.getByText("No renewal schedule.").waitFor();
        // A monthly schedule set up from the page, then cancelled.
        page.on("dialog", (dialog) => void dialog.accept());
        await page.locator('form[aria-label="Set up the schedule"] input[name="amount"]').fill("5000");
        await page.getByRole("button", { name: "Set up the schedule" }).click();
        const schedule = page.locator('[data-testid="schedule"]');
        await schedule.waitFor();
        expect(await schedule.textContent()).toContain("every 1 month(s)");
        expect(await schedule.textContent()).toContain("5,000\u00a0FCFA");
        await page.getByRole("button", { name: "Cancel the schedule" }).click();
        await schedule.getByText("Cancelled").waitFor();
        const charges = page.locator('[data-testid="charges"]');
        await charges.waitFor();
        expect(await charges.textContent()).toContain("7,500\u00a0FCFA");
        await charges.getByRole("link").click();
        await page.locator('[data-testid="payment-facts"]').waitFor();
        expect(await page.locator('[data-testid="payment-facts"]').textContent()).toContain("Permit charge");
        await page.close();
      }, 45_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
