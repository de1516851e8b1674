/**
 * The merchant's dashboard in a real browser (issue 17 points 2–6): headless Chromium on a gateway that
 * serves on a real port with the simulators mounted, as `bun run start` does. A merchant signs in with a
 * fresh tenant's API key, switches the language, stores provider B credentials, adds a webhook endpoint,
 * sees a sandbox checkout paid on the simulator's page turn `succeeded` with its `payment.completed`
 * delivery, and delivers it again; the session is kept in sessionStorage only and ends with its token.
 * A tenant's session reaches neither the operator's screens nor another tenant's data.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 * `BROWSER_SCREENSHOT_DIR=docs/screenshots` keeps the screenshots of the main screens there.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { chromiumInstalled, describeWithChromium, launchChromium, type Chromium } from "../../support/browser.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { Json } from "../../support/json.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

describeWithChromium("browser: the merchant's dashboard", () => {
  let tg: TestGateway;
  let base: string;
  let browser: Chromium;
  let receiver: WebhookReceiver;
  let shots: string;

  /** A JSON call to the gateway over HTTP, as a merchant's server or the operator makes it. */
  async function api(method: string, path: string, options: { token: string; tenantId?: string; json?: unknown }): Promise<{ status: number; body: Json }> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}` };
    if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
    if (options.json !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${base}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  /** A tenant made by the operator, with its first sandbox API key. */
  async function newTenant(name: string): Promise<{ id: string; keyId: string; secret: string }> {
    const created = await api("POST", "/tenants", { token: await tg.adminToken(), json: { name } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return { id: created.body.tenant.id as string, keyId: created.body.apiKey.id as string, secret: created.body.apiKey.secret as string };
  }

  /** A page whose browser prefers `languages` (navigator.languages), opened on `/`. */
  async function openDashboard(languages: string[] = ["en-US", "en"]): Promise<Page> {
    const page = await browser.newPage();
    await page.addInitScript((preferred: string[]) => {
      Object.defineProperty(navigator, "languages", { get: () => preferred });
      Object.defineProperty(navigator, "language", { get: () => preferred[0] });
    }, languages);
    await page.goto(`${base}/`);
    await page.waitForURL(`${base}/dashboard`);
    return page;
  }

  async function signInWithKey(page: Page, keyId: string, secret: string): Promise<void> {
    await page.locator('input[name="keyId"]').fill(keyId);
    await page.locator('input[name="secret"]').fill(secret);
    await page.locator('form button[type="submit"]').click();
    await page.locator("main#main h1").first().waitFor();
    await page.locator('[data-testid="environment"]').waitFor();
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }

  // Registered only when the suite runs: bun would list the hooks of a skipped suite as skipped tests.
  if (chromiumInstalled)
    beforeAll(async () => {
      const port = await freePort();
      tg = await startTestGateway({ SIMULATORS: "on", PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
      base = (await tg.gateway.start()).url!;
      receiver = await startReceiver();
      shots = process.env.BROWSER_SCREENSHOT_DIR ?? (await mkdtemp(join(tmpdir(), "passerelle-dashboard-shots-")));
      await mkdir(shots, { recursive: true });
      browser = await launchChromium();
    }, 60_000);

  if (chromiumInstalled)
    afterAll(async () => {
      await browser?.close();
      await tg?.close();
      await receiver?.stop();
      if (shots && !process.env.BROWSER_SCREENSHOT_DIR) await rm(shots, { recursive: true, force: true });
    });

  describe("signing in", () => {
    it("a fresh tenant signs in with its API key, sees its empty payments list in French, and switches to English", async () => {
      const tenant = await newTenant("Boutique Awa");
      const page = await openDashboard(["fr-FR", "fr"]);
      expect(await page.locator("html").getAttribute("lang")).toBe("fr");
      await page.getByRole("heading", { name: "Connexion" }).waitFor();
      await signInWithKey(page, tenant.keyId, tenant.secret);

      await page.getByRole("heading", { name: "Paiements" }).waitFor();
      expect(await page.locator('[data-testid="environment"]').textContent()).toBe("Bac à sable");
      await page.getByText("Aucun paiement pour l’instant.", { exact: false }).waitFor();
      expect(await page.locator('[data-testid="live-banner"]').count()).toBe(0);
      // The tenant's navigation has no operator screens.
      expect(await page.locator('nav a[href^="#/operator"]').count()).toBe(0);

      // The token is in sessionStorage, the key's secret nowhere, localStorage untouched.
      const storage = await page.evaluate(() => ({ session: sessionStorage.getItem("passerelle.session") ?? "", local: localStorage.length }));
      expect(storage.local).toBe(0);
      expect(JSON.parse(storage.session)).toMatchObject({ role: "tenant", tenantId: tenant.id, environment: "sandbox" });
      expect(storage.session).not.toContain(tenant.secret);
      expect(await page.content()).not.toContain(tenant.secret);

      await page.locator('button[data-language="en"]').click();
      await page.getByRole("heading", { name: "Payments" }).waitFor();
      expect(await page.locator("html").getAttribute("lang")).toBe("en");
      expect(await page.locator('[data-testid="environment"]').textContent()).toBe("Sandbox");
      await page.getByText("No payments yet.", { exact: false }).waitFor();
      await screenshot(page, "dashboard-payments-empty");

      // The choice holds across a reload, and so does the session.
      await page.reload();
      await page.getByRole("heading", { name: "Payments" }).waitFor();
      await page.close();
    }, 30_000);

    it("shows the API's message for a wrong secret, and English by default for a browser that prefers it", async () => {
      const tenant = await newTenant("Wrong Secret Shop");
      const page = await openDashboard();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await page.locator('input[name="keyId"]').fill(tenant.keyId);
      await page.locator('input[name="secret"]').fill("psk_not-the-secret");
      await page.keyboard.press("Enter");
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/invalid|client/i);
      expect(await page.locator('[data-testid="environment"]').count()).toBe(0);
      await page.close();
    }, 30_000);

    it("signs out when the token expires", async () => {
      const tenant = await newTenant("Expiring Shop");
      const page = await openDashboard();
      await signInWithKey(page, tenant.keyId, tenant.secret);
      await page.getByRole("heading", { name: "Payments" }).waitFor();
      // The token's expiry as the page knows it, brought to a second from now.
      await page.evaluate(() => {
        const session = JSON.parse(sessionStorage.getItem("passerelle.session")!);
        sessionStorage.setItem("passerelle.session", JSON.stringify({ ...session, expiresAt: new Date(Date.now() + 1_000).toISOString() }));
      });
      await page.reload();
      await page.getByRole("heading", { name: "Payments" }).waitFor();
      await page.getByText("Your session expired", { exact: false }).waitFor({ timeout: 5_000 });
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem("passerelle.session"))).toBeNull();
      await page.close();
    }, 30_000);

    it("marks a live session unmistakably on every screen", async () => {
      const page = await openDashboard();
      await page.getByRole("tab", { name: "Operator (admin token)" }).click();
      await page.locator('input[name="token"]').fill(await tg.adminToken("live"));
      await page.locator('form button[type="submit"]').click();
      await page.getByRole("heading", { name: "Tenants" }).waitFor();
      expect(await page.locator('[data-testid="environment"]').textContent()).toBe("LIVE");
      expect(await page.locator('[data-testid="live-banner"]').textContent()).toContain("LIVE");
      await page.locator('nav a[href="#/operator/stuck"]').click();
      await page.getByRole("heading", { name: "Stuck payments" }).waitFor();
      expect(await page.locator('[data-testid="live-banner"]').count()).toBe(1);
      await page.close();
    }, 30_000);
  });

  describe("a sandbox checkout, from the credentials to the replayed webhook", () => {
    it("stores provider B keys, adds an endpoint, sees the paid checkout succeed with its payment.completed delivery, and delivers it again", async () => {
      const tenant = await newTenant("Boutique Dakar");
      const page = await openDashboard();
      await signInWithKey(page, tenant.keyId, tenant.secret);

      // Tenant Config: provider B's sandbox keys, from the simulator's account maker.
      const keys = (await (await fetch(`${base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
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
      await screenshot(page, "dashboard-settings");

      // A webhook endpoint: its secret shown once, with a copy button.
      await page.locator('nav a[href="#/webhooks"]').click();
      await page.getByText("No endpoints.", { exact: false }).waitFor();
      await page.locator('input[name="url"]').fill(`${receiver.url}/hooks`);
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
      expect(payUrl).toStartWith(`${base}/sandbox/providerB/`);
      const followHref = (await page.getByRole("link", { name: "Follow this payment" }).getAttribute("href"))!;
      const paymentId = decodeURIComponent(followHref.replace("#/payments/", ""));
      expect(paymentId).toMatch(/^pay_/);
      const payPage = await browser.newPage();
      await payPage.goto(payUrl);
      await payPage.getByRole("button", { name: "Pay", exact: true }).click();
      // Paid: the provider sends the customer back to the dashboard.
      await payPage.waitForURL((url) => url.toString().startsWith(`${base}/dashboard`));
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
      const delivery = page.locator('li[data-event-type="payment.completed"]');
      await waitUntil(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          await delivery.waitFor();
          return (await delivery.getAttribute("data-state")) === "succeeded";
        },
        { what: "the payment.completed delivery succeeded", timeoutMs: 15_000, intervalMs: 300 },
      );
      expect(await page.locator('[data-testid="timeline"] li').count()).toBeGreaterThanOrEqual(3);
      expect(await delivery.locator('tr[data-status="200"]').count()).toBe(1);
      await screenshot(page, "dashboard-payment");
      const receivedBefore = receiver.receipts.filter((receipt) => receipt.path === "/hooks").length;
      expect(receivedBefore).toBe(1);

      // Delivered again: the receiver gets it a second time, and the log shows the second attempt.
      await delivery.getByRole("button", { name: "Deliver again" }).click();
      await page.getByText("Asked to deliver again.").waitFor();
      await waitUntil(() => receiver.receipts.filter((receipt) => receipt.path === "/hooks").length === 2, {
        what: "the delivery sent again",
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      await waitUntil(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return (await delivery.locator('tr[data-status="200"]').count()) === 2;
        },
        { what: "the second attempt in the log", timeoutMs: 10_000, intervalMs: 300 },
      );

      // The same in French: the amount as a merchant in Dakar reads it.
      await page.locator('button[data-language="fr"]').click();
      await page.locator('nav a[href="#/payments"]').click();
      await page.getByRole("heading", { name: "Paiements" }).waitFor();
      expect(await page.locator(`tr[data-payment-id="${paymentId}"]`).textContent()).toContain("5\u00a0000\u00a0FCFA");
      await page.close();
    }, 60_000);
  });

  describe("permits", () => {
    it("lists a permit authorised on the simulator's page, and shows its charge", async () => {
      const tenant = await newTenant("Abonnements Cotonou");
      const token = await tg.tenantToken(tenant.id);
      const keys = (await (await fetch(`${base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Json;
      const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { ...keys, environment: "sandbox" } });
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
      const created = await api("POST", "/providerB/permits", {
        token,
        tenantId: tenant.id,
        json: {
          customer: { name: "Koffi Mensah", phone: "+22997000000" },
          description: "Abonnement mensuel",
          maxAmount: 20_000,
          returnUrl: `${receiver.url}/autorise`,
          cancelUrl: `${receiver.url}/refuse`,
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const { permitId, authorizationUrl } = created.body as { permitId: string; authorizationUrl: string };
      const authorise = await browser.newPage();
      await authorise.goto(authorizationUrl);
      await authorise.getByRole("button", { name: "Authorise", exact: true }).click();
      await authorise.waitForURL((url) => url.toString().startsWith(`${receiver.url}/autorise`));
      await authorise.close();
      await waitUntil(async () => (await api("GET", `/providerB/permits/${permitId}`, { token, tenantId: tenant.id })).body.status === "active", {
        what: `permit ${permitId} active`,
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      const charged = await api("POST", `/providerB/permits/${permitId}/charges`, { token, tenantId: tenant.id, json: { amount: 7_500, description: "Mars" } });
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
      const charges = page.locator('[data-testid="charges"]');
      await charges.waitFor();
      expect(await charges.textContent()).toContain("7,500\u00a0FCFA");
      await charges.getByRole("link").click();
      await page.locator('[data-testid="payment-facts"]').waitFor();
      expect(await page.locator('[data-testid="payment-facts"]').textContent()).toContain("Permit charge");
      await page.close();
    }, 45_000);
  });

  describe("the merchant's tools", () => {
    it("creates an API key whose secret is shown once and copied, signs in with it, and revokes it", async () => {
      const tenant = await newTenant("Cles Bamako");
      const page = await openDashboard();
      await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
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
      const exchanged = await fetch(`${base}/auth/token`, {
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
      await page.locator('input[name="url"]').fill(`${receiver.url}/tools`);
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
      expect(receiver.receipts.filter((receipt) => receipt.path === "/tools")).toHaveLength(1);

      await page.getByText("Change the events received").click();
      await page.locator('input[name="events"][value="payment.completed"]').check();
      await page.locator('input[name="events"][value="payment.failed"]').check();
      await page.locator("details form").getByRole("button", { name: "Save" }).click();
      await page.getByText("Saved.").waitFor();
      await page.getByText("payment.completed, payment.failed").waitFor();

      await page.locator('nav a[href="#/settings"]').click();
      const callback = page.locator('[data-testid="callback-secret"]');
      await callback.getByRole("button", { name: "Make a new secret" }).click();
      expect(await callback.locator('[data-testid="secret"]').textContent()).toMatch(/\S{16,}/);
      await callback.getByText("the old one still signs until", { exact: false }).waitFor();
      await page.close();
    }, 30_000);
  });

  describe("the operator's screens", () => {
    it("creates a tenant, whose first key is shown once and signs in, and disables it", async () => {
      const page = await openDashboard();
      page.on("dialog", (dialog) => void dialog.accept());
      await page.getByRole("tab", { name: "Operator (admin token)" }).click();
      await page.locator('input[name="token"]').fill(await tg.adminToken());
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

  describe("what a tenant's session cannot reach", () => {
    it("gets the API's refusal on the operator's screens and another tenant's endpoint", async () => {
      const mine = await newTenant("Mine");
      const other = await newTenant("Other");
      const otherToken = await tg.tenantToken(other.id);
      const theirs = await api("POST", "/webhooks", { token: otherToken, json: { url: `${receiver.url}/theirs` } });
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);

      const page = await openDashboard();
      await signInWithKey(page, mine.keyId, mine.secret);
      await page.getByRole("heading", { name: "Payments" }).waitFor();

      await page.evaluate(() => (location.hash = "#/operator/tenants"));
      const refused = page.getByRole("alert");
      await refused.waitFor();
      expect(await refused.textContent()).toMatch(/admin/i);
      expect(await page.locator('[data-testid="tenants"]').count()).toBe(0);
      expect(await page.content()).not.toContain(other.id);

      await page.evaluate((id) => (location.hash = `#/webhooks/${id}`), theirs.body.id as string);
      await page.getByRole("heading", { name: "Endpoint" }).waitFor();
      const notFound = page.getByRole("alert");
      await notFound.waitFor();
      expect(await notFound.textContent()).toMatch(/not found/i);
      expect(await page.content()).not.toContain(`${receiver.url}/theirs`);

      // Nor does the operator's sign-in take a tenant's token.
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("tab", { name: "Operator (admin token)" }).click();
      await page.locator('input[name="token"]').fill(await tg.tenantToken(mine.id));
      await page.locator('form button[type="submit"]').click();
      expect(await page.getByRole("alert").textContent()).toContain("This token is not an operator's token.");
      await page.close();
    }, 30_000);
  });

  describe("on a phone", () => {
    it("fits a 390 px wide screen without sideways scrolling, and works from the keyboard", async () => {
      const tenant = await newTenant("Petit Écran");
      const page = await openDashboard();
      await page.setViewportSize({ width: 390, height: 844 });
      // Keyboard only: Tab to the key id field, type, Tab to the secret, Enter.
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press("Tab");
        if (await page.evaluate(() => document.activeElement?.getAttribute("name") === "keyId")) break;
      }
      await page.keyboard.type(tenant.keyId);
      await page.keyboard.press("Tab");
      await page.keyboard.type(tenant.secret);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Payments" }).waitFor();
      for (const hash of ["#/payments", "#/webhooks", "#/api-keys", "#/settings"]) {
        await page.evaluate((next) => (location.hash = next), hash);
        await page.locator("main#main h1").first().waitFor();
        await page.waitForLoadState("networkidle");
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, hash).toBeLessThanOrEqual(390);
      }
      await screenshot(page, "dashboard-phone-settings");
      await page.close();
    }, 30_000);
  });
});
