/**
 * The dashboard's tools in a real browser (issue 17 point 3): API keys (the secret shown once and copied,
 * revoked: a tab on that key signed out by its Download CSV), a webhook endpoint's test event, events and
 * the callback secret, the wallets a merchant can take and its route lists (reordered, switched off, only
 * the providers that serve the wallet offered, refused with the API's message), and the operator's tenants
 * with the reconciliation downloaded as CSV, a tenant's and every tenant's.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

/** The header row of the reconciliation's CSV (`src/services/reports/reconciliation.ts`). */
const CSV_HEADER = "section,kind,provider,operator,state,currency,count,total,id,tenant_id,provider_state,provider_status,last_seen_at,reported,difference";

describeWithChromium(
  "browser: the dashboard's tools",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    /** A provider A payment to an MTN or Moov wallet in Benin, on the gateway's own sandbox account; the simulator approves one below 1,000. */
    async function paidPayment(token: string, operator: "mtn" | "moov", amount: number, number: string): Promise<string> {
      const created = await api("POST", "/payments", {
        token,
        json: { amount, description: "Commande", operator, customer: { phone: { number, country: "bj" } } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const id = created.body.id as string;
      await waitUntil(async () => (await api("GET", `/payments/${id}`, { token })).body.state === "succeeded", {
        what: `payment ${id} paid`,
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      return id;
    }

    /** Clicks Download CSV and answers the file the browser saved: its name and its text. */
    async function downloadedCsv(page: Page): Promise<{ name: string; text: string }> {
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
      return { name: download.suggestedFilename(), text: await readFile((await download.path())!, "utf8") };
    }

    describe("the merchant's tools", () => {
      it("creates an API key whose secret is shown once and copied, signs in with it, and revokes it: the tab signed in with it is signed out by its next Download CSV", async () => {
        const tenant = await newTenant("Cles Bamako");
        const page = await openDashboard();
        await rig.browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.base });
        const asked: string[] = [];
        page.on("dialog", (dialog) => {
          asked.push(dialog.message());
          void dialog.accept();
        });
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/api-keys"]').click();
        await page.locator(`tr[data-key-id="${tenant.keyId}"]`).waitFor();
        await page.locator('input[name="name"]').fill("Serveur de caisse");
        await page.getByRole("button", { name: "Create a key (Sandbox)" }).click();
        const secret = (await page.locator('[data-testid="secret"]').textContent())!;
        expect(secret).toMatch(/^psk_/);
        const created = (await page.getByText(/^Key key_\w+ created\.$/).textContent())!;
        const keyId = created.split(" ")[1]!;
        await page.getByRole("button", { name: "Copy" }).click();
        await page.getByRole("button", { name: "Copied ✓" }).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
        await page.getByRole("button", { name: "I have copied the secret" }).click();
        expect(await page.content()).not.toContain(secret);
        const row = page.locator(`tr[data-key-id="${keyId}"]`);
        expect(await row.textContent()).toContain("Serveur de caisse");

        // The new key signs in (another tab, left on the reconciliation), then is revoked here.
        const other = await openDashboard();
        await signInWithKey(other, keyId, secret);
        await other.getByRole("heading", { name: "Home", exact: true }).waitFor();
        await other.locator('nav a[href="#/reports"]').click();
        await other.getByRole("button", { name: "Download CSV" }).waitFor();
        await other.waitForLoadState("networkidle");
        await row.getByRole("button", { name: "Revoke" }).click();
        await page.locator(`tr[data-key-id="${keyId}"][data-revoked="true"]`).waitFor();
        // Download CSV, the other tab's first call since: the gateway's 401 signs it out, as a tRPC call's would.
        let downloads = 0;
        other.on("download", () => downloads++);
        await other.getByRole("button", { name: "Download CSV" }).click();
        await other.getByRole("heading", { name: "Sign in" }).waitFor();
        await other.getByText("Your session expired: please sign in again.").waitFor();
        expect(await other.getByText("has been revoked").count()).toBe(0);
        expect(await other.evaluate(() => sessionStorage.getItem("passerelle.session"))).toBeNull();
        expect(downloads).toBe(0);
        await other.close();
        const exchanged = await fetch(`${rig.base}/auth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ grant_type: "client_credentials", client_id: keyId, client_secret: secret }),
        });
        expect(exchanged.status).toBe(401);
        expect(asked).toEqual([`Revoke key ${keyId}? Servers using it will lose access.`]);

        // The key this tab signed in with: a dialog says what it means (Cancel keeps it), and the tab is signed out.
        await page.locator(`tr[data-key-id="${tenant.keyId}"]`).getByRole("button", { name: "Revoke" }).click();
        const dialog = page.getByRole("dialog", { name: "Revoke the key you signed in with?" });
        expect(await dialog.textContent()).toContain(
          `Revoke key ${tenant.keyId}? It is the key you signed in with: you will be signed out, and servers using it will lose access.`,
        );
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "detached" });
        expect(await page.locator(`tr[data-key-id="${tenant.keyId}"]`).getAttribute("data-revoked")).toBe("false");
        await page.locator(`tr[data-key-id="${tenant.keyId}"]`).getByRole("button", { name: "Revoke" }).click();
        await dialog.getByRole("button", { name: "Revoke" }).click();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        expect(asked).toHaveLength(1);
        await page.close();
      }, 30_000);

      it("sends a test event to an endpoint, shows it in the delivery log, narrows its events, and rotates the callback secret", async () => {
        const tenant = await newTenant("Outils Abidjan");
        const page = await openDashboard();
        page.on("dialog", (dialog) => void dialog.accept());
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/webhooks"]').click();
        await page.locator('input[name="url"]').fill(`${rig.receiver.url}/tools`);
        await page.getByRole("button", { name: "Add", exact: true }).click();
        await page.getByRole("button", { name: "I have copied the secret" }).click();
        await page.locator('[data-testid="endpoints"] li a').click();
        await page.getByRole("heading", { name: "Endpoint" }).waitFor();
        await page.getByText("No notifications yet.").waitFor();

        await page.getByRole("button", { name: "Send a test event" }).click();
        await page.getByText("Test event sent.").waitFor();
        const delivery = page.locator('li[data-event-type="webhook.test"]');
        await waitUntil(
          async () => {
            await page.getByRole("button", { name: "Refresh" }).click();
            return (await delivery.count()) === 1 && (await delivery.getAttribute("data-state")) === "succeeded";
          },
          { what: "the test event delivered", timeoutMs: 10_000, intervalMs: 300 },
        );
        expect(rig.receiver.receipts.filter((receipt) => receipt.path === "/tools")).toHaveLength(1);

        // The endpoint's secret rotated (the new one shown once), and the last day's events sent again.
        await page.getByRole("button", { name: "New signing secret" }).click();
        expect(await page.locator('[data-testid="secret"]').textContent()).toMatch(/^whsec_/);
        await page.getByRole("button", { name: "I have copied the secret" }).click();
        await page.getByRole("button", { name: "Send again", exact: true }).click();
        await page.getByText(/^\d+ event\(s\) sent again\.$/).waitFor();

        await page.getByText("Change the events received").click();
        await page.locator('input[name="events"][value="payment.completed"]').check();
        await page.locator('input[name="events"][value="payment.failed"]').check();
        await page.locator("details form").getByRole("button", { name: "Save" }).click();
        await page.getByText("Saved.").waitFor();
        await page.getByText("payment.completed, payment.failed").waitFor();

        // The event log has the test event.
        await page.locator('nav a[href="#/events"]').click();
        await page.locator('[data-testid="events"] li[data-event-type="webhook.test"]').waitFor();

        await page.locator('nav a[href="#/settings"]').click();
        const callback = page.locator('[data-testid="callback-secret"]');
        await callback.getByRole("button", { name: "Make a new secret" }).click();
        expect(await callback.locator('[data-testid="secret"]').textContent()).toMatch(/\S{16,}/);
        await callback.getByText("the old one still signs until", { exact: false }).waitFor();
        await page.close();
      }, 30_000);
    });

    describe("an endpoint's health", () => {
      it("shows an endpoint refused for good as disabled with its last error, lists its failed deliveries only, and delivers them again once enabled", async () => {
        const tenant = await newTenant("Santé Cotonou");
        // This endpoint's address answers 410 Gone (the receiver is gone for good) until the merchant fixes it.
        let gone = true;
        rig.receiver.respondWith((receipt) => (receipt.path === "/gone" && gone ? new Response("gone", { status: 410 }) : new Response("ok")));
        try {
          const page = await openDashboard();
          await signInWithKey(page, tenant.keyId, tenant.secret);
          await page.locator('nav a[href="#/webhooks"]').click();
          await page.locator('input[name="url"]').fill(`${rig.receiver.url}/gone`);
          await page.getByRole("button", { name: "Add", exact: true }).click();
          await page.getByRole("button", { name: "I have copied the secret" }).click();
          await page.locator('[data-testid="endpoints"] [data-health="idle"]').getByText("Nothing sent yet").waitFor();

          await page.locator('[data-testid="endpoints"] li a').click();
          await page.getByRole("button", { name: "Send a test event" }).click();
          const delivery = page.locator('li[data-event-type="webhook.test"]');
          await waitUntil(
            async () => {
              await page.getByRole("button", { name: "Refresh" }).click();
              return (await delivery.getAttribute("data-state").catch(() => null)) === "failed";
            },
            { what: "the test event refused for good", timeoutMs: 10_000, intervalMs: 300 },
          );

          // The list says so in words, with the receiver's answer.
          await page.locator('nav a[href="#/webhooks"]').click();
          const listed = page.locator('[data-testid="endpoints"] li');
          await listed.locator('[data-health="disabled"]').getByText("Disabled").waitFor();
          await listed.getByText("0% of the last 1 delivered").waitFor();
          expect(await listed.locator(".mono").last().textContent()).toContain("410");

          // On its page: the failed deliveries only, then fixed, enabled and sent again.
          await listed.locator("a").click();
          await page.locator('[data-testid="endpoint-health"]').getByText("Disabled").waitFor();
          await page.locator('select[name="state"]').selectOption("failed");
          await waitUntil(async () => (await page.locator('li[data-state="failed"]').count()) === 1, {
            what: "the failed delivery listed",
            timeoutMs: 5_000,
            intervalMs: 100,
          });
          await page.locator('select[name="state"]').selectOption("succeeded");
          await page.getByText("No notifications yet.").waitFor();
          gone = false;
          await page.getByRole("button", { name: "Enable" }).click();
          await page.getByText("Saved.").waitFor();
          await page.getByRole("button", { name: "Deliver the failed ones" }).click();
          await page.getByText("1 failed delivery(ies) sent again.").waitFor();
          await waitUntil(
            async () => {
              await page.getByRole("button", { name: "Refresh" }).click();
              return (await page.locator('li[data-state="succeeded"]').count()) === 1;
            },
            { what: "the recovered delivery delivered", timeoutMs: 10_000, intervalMs: 300 },
          );
          expect(rig.receiver.receipts.filter((receipt) => receipt.path === "/gone").map((receipt) => receipt.status)).toEqual([410, 200]);
          await page.locator('nav a[href="#/webhooks"]').click();
          await page.locator('[data-testid="endpoints"] [data-health="healthy"]').getByText("Healthy").waitFor();
          await page.close();
        } finally {
          rig.receiver.respondWith(() => new Response("ok"));
        }
      }, 30_000);
    });

    describe("wallets and routing", () => {
      it("shows the wallets a merchant can take with their flow and limits, its routes with their live health, saves a new order, and offers only the providers that serve each wallet", async () => {
        const tenant = await newTenant("Routage Porto-Novo");
        const token = await rig.tg.tenantToken(tenant.id);
        await paidPayment(token, "mtn", 700, "+22997000011");
        // The merchant's server set airtel in Niger to provider A only (a list of its own, with nothing else offered by the API).
        const set = await api("PUT", "/routing", { token, json: { rules: [{ operator: "airtel", country: "ne", providers: ["providerA"] }] } });
        expect(set.status, JSON.stringify(set.body)).toBe(200);

        const page = await openDashboard();
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.locator('nav a[href="#/routing"]').click();
        await page.getByRole("heading", { name: "Wallets and routing" }).waitFor();

        // The wallets of Benin: MTN through provider A (no provider B keys stored), a push, with its limits.
        const methods = page.locator('[data-testid="methods"][data-country="bj"]');
        await methods.waitFor();
        const mtnMethod = methods.locator('li[data-operator="mtn"]');
        expect(await mtnMethod.getAttribute("data-flow")).toBe("push");
        const mtnText = (await mtnMethod.textContent())!;
        expect(mtnText).toContain("MTN Mobile Money");
        expect(mtnText).toContain("The customer gets a prompt on their phone and approves it with their PIN.");
        expect(mtnText).toContain("Through Provider A");
        // Provider A publishes no limits for its pushes (the API's null), and the card says so rather than inventing some.
        const published = await api("GET", "/payment-methods?country=bj", { token });
        expect(published.body.methods.find((m: { operator: string }) => m.operator === "mtn").routes).toEqual([
          { provider: "providerA", method: "mnoA_open", limits: null },
        ]);
        expect(await mtnMethod.locator('dd[data-provider="providerA"]').textContent()).toBe("limits not published");
        expect(mtnText).not.toContain("Provider B");

        // MTN in Benin: the default order (provider A, then B), with provider A's live success rate.
        const mtn = page.locator('li.route[data-operator="mtn"][data-country="bj"]');
        expect(await mtn.getAttribute("data-configured")).toBe("false");
        const order = (card: typeof mtn) =>
          card
            .locator("li[data-provider]")
            .evaluateAll((items) => items.map((item) => `${item.getAttribute("data-provider")}:${item.getAttribute("data-enabled")}`));
        expect(await order(mtn)).toEqual(["providerA:true", "providerB:true"]);
        expect(await mtn.locator('li[data-provider="providerA"] [data-testid="success-rate"]').textContent()).toBe("100 % succeeded (1 of 1)");
        expect(await mtn.locator('li[data-provider="providerB"] [data-testid="success-rate"]').textContent()).toBe("no recent payments");
        // Provider A's circuit for MTN in Benin carried the payment and is closed: working.
        expect(await mtn.locator('li[data-provider="providerA"] [data-circuit]').textContent()).toBe("Working");
        expect(await mtn.locator('li[data-provider="providerB"] [data-circuit]').count()).toBe(0);
        await screenshot(page, "dashboard-routing");
        // Mali is provider B's only: nothing to take there without its keys, and the screen says where to store them.
        await page.locator('select[name="methodsCountry"]').selectOption("ml");
        await page.getByText("No wallet you can take in Mali yet.", { exact: false }).waitFor();

        // Provider B first, saved: the API has the merchant's order.
        await mtn.getByRole("button", { name: "Move Provider B up for MTN Mobile Money" }).click();
        await mtn.getByRole("button", { name: "Save" }).click();
        const saved = page.locator('li.route[data-operator="mtn"][data-country="bj"][data-configured="true"]');
        await saved.getByText("Order saved.").waitFor();
        expect(await order(saved)).toEqual(["providerB:true", "providerA:true"]);
        const routing = await api("GET", "/routing", { token });
        expect(routing.body.routes.find((r: { operator: string; country: string }) => r.operator === "mtn" && r.country === "bj")).toMatchObject({
          providers: ["providerB", "providerA"],
          configured: true,
        });
        // Provider B switched off (from the keyboard): still offered, as it serves the wallet; then the default order back.
        await saved.getByRole("checkbox", { name: "Use Provider B for MTN Mobile Money" }).focus();
        await page.keyboard.press("Space");
        await page.keyboard.press("Tab");
        await saved.getByRole("button", { name: "Save" }).click();
        await waitUntil(async () => (await order(saved)).join() === "providerA:true,providerB:false", {
          what: "provider B off",
          timeoutMs: 5_000,
          intervalMs: 100,
        });
        await saved.getByRole("button", { name: "Back to the default order" }).click();
        const reset = page.locator('li.route[data-operator="mtn"][data-country="bj"][data-configured="false"]');
        await reset.getByText("Default order back.").waitFor();
        expect(await order(reset)).toEqual(["providerA:true", "providerB:true"]);

        // Airtel in Niger, the list the merchant's server set: only provider A serves it (GET /routing's serving), so
        // only provider A is offered; provider B, which the API would refuse there, is not.
        const airtel = page.locator('li.route[data-operator="airtel"][data-country="ne"]');
        expect(await airtel.getAttribute("data-configured")).toBe("true");
        const airtelView = routing.body.routes.find((r: { operator: string; country: string }) => r.operator === "airtel" && r.country === "ne");
        expect(airtelView.serving).toEqual(["providerA"]);
        expect(await order(airtel)).toEqual(["providerA:true"]);
        expect(await airtel.getByRole("checkbox", { name: "Use Provider B for Airtel Money" }).count()).toBe(0);

        // In French, for a shop owner in Cotonou.
        await page.locator('button[data-language="fr"]').click();
        await page.getByRole("heading", { name: "Portefeuilles et routage" }).waitFor();
        await page.getByText("Ordre par défaut").first().waitFor();
        await page.close();
      }, 30_000);
      it("shows the API's refusal of a route list: an operator in live saving one for a tenant not enabled for live, in French too", async () => {
        const tenant = await newTenant("Routage Niamey");
        const page = await openDashboard();
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.adminToken("live"));
        await page.locator('form button[type="submit"]').click();
        await page.locator(`tr[data-tenant-id="${tenant.id}"]`).getByRole("button", { name: "Open" }).click();
        await page.locator('[data-testid="acting-for"]').waitFor();
        await page.locator('nav a[href="#/routing"]').click();
        const mtn = page.locator('li.route[data-operator="mtn"][data-country="bj"]');
        await mtn.getByRole("button", { name: "Move Provider B up for MTN Mobile Money" }).click();
        await mtn.getByRole("button", { name: "Save" }).click();
        const refusal = mtn.getByRole("alert");
        await refusal.waitFor();
        // In words first (its code: forbidden), then the API's own message.
        expect(await refusal.textContent()).toBe("You are not allowed to do this. Tenant is not enabled for live");
        expect(await mtn.getAttribute("data-configured")).toBe("false");
        const live = await api("GET", "/routing", { token: await rig.tg.adminToken("live"), tenantId: tenant.id });
        expect(live.body.routes.find((r: { operator: string; country: string }) => r.operator === "mtn" && r.country === "bj").configured).toBe(false);

        // In French, for a shop owner in Cotonou: the words around it change, the API's message is the API's.
        await page.locator('button[data-language="fr"]').click();
        await page.getByRole("heading", { name: "Portefeuilles et routage" }).waitFor();
        expect(await refusal.textContent()).toBe("Vous n’avez pas le droit de faire cela. Tenant is not enabled for live");
        await page.close();
      }, 30_000);
    });

    describe("the operator's screens", () => {
      it("creates a tenant, whose first key is shown once and signs in, opens its screens, and disables it", async () => {
        const page = await openDashboard();
        const asked: string[] = [];
        page.on("dialog", (dialog) => {
          asked.push(dialog.message());
          void dialog.accept();
        });
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.adminToken());
        await page.locator('form button[type="submit"]').click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();
        expect(await page.locator('[data-testid="environment"]').textContent()).toBe("Sandbox");
        await page.locator('input[name="name"]').fill("Nouvelle Boutique");
        await page.getByRole("button", { name: "Create a tenant" }).click();
        const secret = (await page.locator('[data-testid="secret"]').textContent())!;
        const keyId = (await page.getByText(/its first sandbox key is key_\w+/).textContent())!.match(/key_\w+/)![0];
        const row = page.locator("tr", { hasText: "Nouvelle Boutique" });
        await row.waitFor();
        const tenantId = (await row.getAttribute("data-tenant-id"))!;

        const merchant = await openDashboard();
        await signInWithKey(merchant, keyId, secret);
        await merchant.getByRole("heading", { name: "Home", exact: true }).waitFor();
        await merchant.close();

        // The operator opens the tenant: its screens, through x-tenant-id, with a banner saying so.
        await row.getByRole("button", { name: "Open" }).click();
        await page.getByRole("heading", { name: "Home", exact: true }).waitFor();
        expect(await page.locator('[data-testid="acting-for"]').textContent()).toContain(`Nouvelle Boutique (${tenantId})`);
        await page.locator('nav a[href="#/payments"]').click();
        await page.getByText("No payments yet.", { exact: false }).waitFor();
        // A payment of the tenant's, then its reconciliation downloaded as CSV (sent with the tenant's x-tenant-id).
        await paidPayment(await rig.tg.tenantToken(tenantId), "moov", 450, "+22996000012");
        await page.locator('nav a[href="#/reports"]').click();
        await page.locator('[data-testid="reconciliation-rows"] tr[data-kind="payment"][data-state="succeeded"]').waitFor();
        const mine = await downloadedCsv(page);
        expect(mine.name).toMatch(/^reconciliation-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
        expect(mine.text.split(/\r?\n/)[0]).toBe(CSV_HEADER);
        expect(mine.text).toContain("total,payment,providerA,moov,succeeded,XOF,1,450,");
        await page.locator('nav a[href="#/api-keys"]').click();
        await page.locator(`tr[data-key-id="${keyId}"]`).waitFor();
        await page.getByRole("button", { name: "Back to tenants" }).click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();
        expect(await page.locator('[data-testid="acting-for"]').count()).toBe(0);

        // Every tenant's reconciliation, on the page and as CSV: the tenant's Moov payment.
        await page.locator('nav a[href="#/operator/reports"]').click();
        await page.locator('[data-testid="reconciliation-rows"] tr[data-kind="payment"]').first().waitFor();
        const all = await downloadedCsv(page);
        expect(all.name).toMatch(/^reconciliation-all-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
        expect(all.text.split(/\r?\n/)[0]).toBe(CSV_HEADER);
        expect(all.text).toContain("total,payment,providerA,moov,succeeded,XOF,1,450,");
        await page.locator('nav a[href="#/operator/tenants"]').click();
        await row.waitFor();

        await row.getByRole("button", { name: "Disable" }).click();
        // Asked first, with what it does, and why.
        const dialog = page.getByRole("dialog", { name: "Disable Nouvelle Boutique?" });
        expect(await dialog.textContent()).toContain("Disable Nouvelle Boutique? Its keys and tokens stop working at once");
        await dialog.getByLabel("Reason", { exact: false }).fill("Asked by the merchant");
        await dialog.getByRole("button", { name: "Disable" }).click();
        await page.locator(`tr[data-tenant-id="${tenantId}"]`, { hasText: "disabled" }).waitFor();
        const refused = await openDashboard();
        await refused.locator('[role="tab"][data-mode="tenant"]').click();
        await refused.locator('input[name="keyId"]').fill(keyId);
        await refused.locator('input[name="secret"]').fill(secret);
        await refused.locator('form button[type="submit"]').click();
        await refused.getByRole("alert").waitFor();
        expect(await refused.locator('[data-testid="environment"]').count()).toBe(0);
        await refused.close();
        await page.close();
      }, 30_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
