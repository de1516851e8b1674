/**
 * The dashboard's tools in a real browser (issue 17 point 3): API keys (the secret shown once and copied,
 * revoked), a webhook endpoint's test event, events and the callback secret, and the operator's tenants.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

describeWithChromium(
  "browser: the dashboard's tools",
  () => {
    const rig = useDashboardRig();
    const { newTenant, openDashboard, signInWithKey } = rig;

    describe("the merchant's tools", () => {
      it("creates an API key whose secret is shown once and copied, signs in with it, and revokes it", async () => {
        const tenant = await newTenant("Cles Bamako");
        const page = await openDashboard();
        await rig.browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.base });
        page.on("dialog", (dialog) => void dialog.accept());
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

        // The new key signs in (another tab), then is revoked here.
        const other = await openDashboard();
        await signInWithKey(other, keyId, secret);
        await other.getByRole("heading", { name: "Payments" }).waitFor();
        await other.close();
        await row.getByRole("button", { name: "Revoke" }).click();
        await page.locator(`tr[data-key-id="${keyId}"][data-revoked="true"]`).waitFor();
        const exchanged = await fetch(`${rig.base}/auth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ grant_type: "client_credentials", client_id: keyId, client_secret: secret }),
        });
        expect(exchanged.status).toBe(401);
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

    describe("the operator's screens", () => {
      it("creates a tenant, whose first key is shown once and signs in, opens its screens, and disables it", async () => {
        const page = await openDashboard();
        page.on("dialog", (dialog) => void dialog.accept());
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
        await merchant.getByRole("heading", { name: "Payments" }).waitFor();
        await merchant.close();

        // The operator opens the tenant: its screens, through x-tenant-id, with a banner saying so.
        await row.getByRole("button", { name: "Open" }).click();
        await page.getByRole("heading", { name: "Payments" }).waitFor();
        expect(await page.locator('[data-testid="acting-for"]').textContent()).toContain(`Nouvelle Boutique (${tenantId})`);
        await page.getByText("No payments yet.", { exact: false }).waitFor();
        await page.locator('nav a[href="#/api-keys"]').click();
        await page.locator(`tr[data-key-id="${keyId}"]`).waitFor();
        await page.getByRole("button", { name: "Back to tenants" }).click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();
        expect(await page.locator('[data-testid="acting-for"]').count()).toBe(0);

        // Every tenant's reconciliation: this file made no payment.
        await page.locator('nav a[href="#/operator/reports"]').click();
        await page.getByText("Nothing in this period.").waitFor();
        await page.locator('nav a[href="#/operator/tenants"]').click();
        await row.waitFor();

        await row.getByRole("button", { name: "Disable" }).click();
        await page.locator(`tr[data-tenant-id="${tenantId}"]`, { hasText: "disabled" }).waitFor();
        const refused = await openDashboard();
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
