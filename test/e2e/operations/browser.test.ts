/**
 * The sandbox pages in a real browser (issue 5 point 5, issue 6 point 5, issue 7): headless Chromium clicks
 * Approve on provider A's console, Pay on provider B's hosted checkout page and Authorise on provider B's
 * permit page, and the gateway sees the outcome come back over real HTTP — provider A's signed webhook and
 * status reads, provider B's IPNs and the tenant's signed `payment.completed` / `permit.*` events.
 *
 * One gateway serves on a real port with both simulators mounted (`SIMULATORS=on`) and
 * `PUBLIC_BASE_URL` pointing at that port, as `bun run start` does; the gateway makes its own provider A
 * sandbox account on the mounted simulator at start-up. Only 127.0.0.1 is contacted. Skipped, under a
 * name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { chromiumInstalled, describeWithChromium, isPng, launchChromium, type Chromium } from "../../support/browser.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";

describeWithChromium("browser: the simulators' pages in headless Chromium", () => {
  let tg: TestGateway;
  let base: string;
  let browser: Chromium;
  let receiver: WebhookReceiver;
  let shots: string;

  /** A JSON call to the gateway over HTTP; `tenantId` sends `x-tenant-id` too. */
  async function api(method: string, path: string, options: { token: string; tenantId?: string; json?: unknown }): Promise<{ status: number; body: Json }> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}` };
    if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
    if (options.json !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${base}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  async function newTenant(name: string): Promise<{ id: string; token: string }> {
    const created = await api("POST", "/tenants", { token: await tg.adminToken(), json: { name } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.tenant.id as string;
    return { id, token: await tg.tenantToken(id) };
  }

  async function screenshotIsPng(page: import("playwright-core").Page, name: string): Promise<void> {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    const bytes = new Uint8Array(await readFile(path));
    expect(bytes.length).toBeGreaterThan(1_000);
    expect(isPng(bytes)).toBe(true);
  }

  // Registered only when the suite runs: bun would list the hooks of a skipped suite as skipped tests.
  if (chromiumInstalled)
    beforeAll(async () => {
      const port = await freePort();
      tg = await startTestGateway({ SIMULATORS: "on", PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
      base = (await tg.gateway.start()).url!;
      expect(base).toBe(`http://127.0.0.1:${port}`);
      receiver = await startReceiver();
      shots = process.env.BROWSER_SCREENSHOT_DIR ?? (await mkdtemp(join(tmpdir(), "passerelle-shots-")));
      browser = await launchChromium();
    }, 60_000);

  if (chromiumInstalled)
    afterAll(async () => {
      await browser?.close();
      await tg?.close();
      await receiver?.stop();
      if (shots && !process.env.BROWSER_SCREENSHOT_DIR) await rm(shots, { recursive: true, force: true });
    });

  describe("provider A sandbox console", () => {
    it("clicking Approve on a pending 2500 payment makes the gateway report it approved", async () => {
      const tenant = await newTenant("Console Shop");
      const created = await api("POST", "/providerA/direct-payment", {
        token: tenant.token,
        json: {
          description: "Order 2500",
          amount: 2500,
          payment_method: "mnoA_open",
          phone_number: { number: "+22997000000", country: "bj" },
          firstname: "Ada",
          lastname: "Lovelace",
          email: "ada@example.com",
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body).toMatchObject({ ok: true, status: "pending", amount: 2500 });
      const id = created.body.transactionId as number;

      const page = await browser.newPage();
      await page.goto(`${base}/sandbox/providerA/console`);
      expect(await page.title()).toBe("Provider A sandbox console");
      const approve = page.locator(`button[data-action="approve"][data-transaction-id="${id}"]`);
      expect(await approve.count()).toBe(1);
      await approve.click();
      // The form post answers 303 back to the console, which now lists the payment as settled.
      await page.waitForURL((url) => url.pathname.endsWith("/sandbox/providerA/console") && url.searchParams.get("id") === String(id));
      await page.locator(`#recent tr[data-transaction-id="${id}"][data-status="approved"]`).waitFor();
      expect(await page.locator(`button[data-transaction-id="${id}"]`).count()).toBe(0);
      await screenshotIsPng(page, "provider-a-console");
      await page.close();

      const status = await waitUntil(
        async () => {
          const read = await api("GET", `/providerA/transaction/${id}/status`, { token: tenant.token });
          return read.body.status === "approved" ? read.body : undefined;
        },
        { what: `transaction ${id} approved`, timeoutMs: 10_000, intervalMs: 200 },
      );
      expect(status).toMatchObject({ ok: true, approved: true, status: "approved", amount: 2500, paymentId: created.body.paymentId });
      const quick = await api("GET", `/providerA/transaction/${id}/is-approved`, { token: tenant.token });
      expect(quick.body).toEqual({ transactionId: id, approved: true, status: "approved" });
    }, 30_000);
  });

  describe("provider B hosted checkout page", () => {
    it("clicking Pay completes the payment and the tenant's webhook gets a signed payment.completed", async () => {
      const tenant = await newTenant("Boutique Dakar");
      const keysResponse = await fetch(`${base}/sandbox/providerB/_sim/accounts`, { method: "POST" });
      expect(keysResponse.status).toBe(201);
      const keys = (await keysResponse.json()) as Json;
      const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, {
        token: tenant.token,
        tenantId: tenant.id,
        json: { ...keys, environment: "sandbox" },
      });
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
      const endpoint = await api("POST", "/webhooks", { token: tenant.token, tenantId: tenant.id, json: { url: `${receiver.url}/hooks` } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
      const secret = endpoint.body.secret as string;

      const checkout = await api("POST", "/providerB/checkout", {
        token: tenant.token,
        tenantId: tenant.id,
        json: {
          amount: 5000,
          description: "Commande 42",
          // Local pages, so the browser's redirect after paying stays on this machine.
          returnUrl: `${receiver.url}/merci`,
          cancelUrl: `${receiver.url}/panier`,
          customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
          customData: { orderRef: "ORD-42" },
        },
      });
      expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
      const { response_text: pageUrl, token, paymentId } = checkout.body as { response_text: string; token: string; paymentId: string };
      expect(pageUrl).toBe(`${base}/sandbox/providerB/sandbox-checkout/invoice/${token}`);

      const page = await browser.newPage();
      await page.goto(pageUrl);
      await page.getByRole("button", { name: "Pay", exact: true }).waitFor();
      await screenshotIsPng(page, "provider-b-checkout");
      await page.getByRole("button", { name: "Pay", exact: true }).click();
      // Paid: the provider sends the customer back to the merchant's return URL with the token.
      await page.waitForURL((url) => url.toString().startsWith(`${receiver.url}/merci`) && url.searchParams.get("token") === token);
      await page.close();

      const payment = await waitUntil(
        async () => {
          const read = await api("GET", `/payments/${paymentId}`, { token: tenant.token, tenantId: tenant.id });
          return read.body.state === "succeeded" ? read.body : undefined;
        },
        { what: `payment ${paymentId} succeeded`, timeoutMs: 10_000, intervalMs: 200 },
      );
      expect(payment).toMatchObject({ provider: "providerB", kind: "checkout", amount: 5000, providerTransactionId: token });

      const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/hooks"), {
        what: "the tenant's webhook",
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      const event = new Webhook(secret).verify(receipt.body, receipt.headers) as Json;
      expect(event).toMatchObject({ type: "payment.completed", data: { paymentId } });
      expect(receiver.receipts.filter((r) => r.path === "/hooks")).toHaveLength(1);
    }, 30_000);
  });

  describe("provider B permit authorisation page", () => {
    it("clicking Authorise makes the permit active through the IPN, and it can be charged at once", async () => {
      const tenant = await newTenant("Abonnements Dakar");
      const keys = (await (await fetch(`${base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Json;
      const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, {
        token: tenant.token,
        tenantId: tenant.id,
        json: { ...keys, environment: "sandbox" },
      });
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
      const endpoint = await api("POST", "/webhooks", { token: tenant.token, tenantId: tenant.id, json: { url: `${receiver.url}/permit-hooks` } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
      const secret = endpoint.body.secret as string;

      const created = await api("POST", "/providerB/permits", {
        token: tenant.token,
        tenantId: tenant.id,
        json: {
          customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
          description: "Abonnement mensuel",
          maxAmount: 20_000,
          returnUrl: `${receiver.url}/autorise`,
          cancelUrl: `${receiver.url}/refuse`,
          customData: { plan: "gold" },
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const { permitId, authorizationUrl, token } = created.body as { permitId: string; authorizationUrl: string; token: string };
      expect(authorizationUrl).toBe(`${base}/sandbox/providerB/permit/authorize/${token}`);

      const page = await browser.newPage();
      await page.goto(authorizationUrl);
      await page.getByRole("button", { name: "Authorise", exact: true }).waitFor();
      await screenshotIsPng(page, "provider-b-permit");
      await page.getByRole("button", { name: "Authorise", exact: true }).click();
      // Authorised: the provider sends the customer back to the merchant's return URL with the token.
      await page.waitForURL((url) => url.toString().startsWith(`${receiver.url}/autorise`) && url.searchParams.get("token") === token);
      await page.close();

      const permit = await waitUntil(
        async () => {
          const read = await api("GET", `/providerB/permits/${permitId}`, { token: tenant.token, tenantId: tenant.id });
          return read.body.status === "active" ? read.body : undefined;
        },
        { what: `permit ${permitId} active`, timeoutMs: 10_000, intervalMs: 200 },
      );
      expect(permit).toMatchObject({ permitId, token, maxAmount: 20_000, customData: { plan: "gold" } });
      expect(permit.activatedAt).not.toBeNull();

      const charged = await api("POST", `/providerB/permits/${permitId}/charges`, {
        token: tenant.token,
        tenantId: tenant.id,
        json: { amount: 5000, description: "Mai" },
      });
      expect(charged.status, JSON.stringify(charged.body)).toBe(200);
      expect(charged.body).toMatchObject({ status: "succeeded", amount: 5000, permitId });

      const events = await waitUntil(
        () => {
          const got = receiver.receipts.filter((r) => r.path === "/permit-hooks").map((r) => new Webhook(secret).verify(r.body, r.headers) as Json);
          return got.length === 2 ? got : undefined;
        },
        { what: "permit.activated and permit.charge.succeeded", timeoutMs: 10_000, intervalMs: 100 },
      );
      expect(events.map((e) => e.type).sort()).toEqual(["permit.activated", "permit.charge.succeeded"]);
      expect(events.find((e) => e.type === "permit.charge.succeeded")).toMatchObject({
        data: { permitId, chargeId: charged.body.chargeId, paymentId: charged.body.paymentId, amount: 5000 },
      });
    }, 30_000);
  });
});
