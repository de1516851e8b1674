/**
 * What the dashboard's browser tests share: a gateway serving on a real port with the simulators mounted
 * (`SIMULATORS=on`, `PUBLIC_BASE_URL` at that port, as `bun run start` does), a webhook receiver, headless
 * Chromium, and the steps a merchant takes — open the dashboard with a browser language, sign in with an
 * API key. `BROWSER_SCREENSHOT_DIR=docs/screenshots` keeps the screenshots the tests take there.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { chromiumInstalled, type Chromium, launchChromium } from "../../support/browser.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { Json } from "../../support/json.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

export interface DashboardRig {
  tg: TestGateway;
  /** The gateway's address, `http://127.0.0.1:<port>`. */
  base: string;
  browser: Chromium;
  receiver: WebhookReceiver;
  /** The errors the dashboard's pages wrote to the console (a Content-Security-Policy violation would be one), and their uncaught exceptions. */
  pageErrors: string[];
  /** A JSON call to the gateway over HTTP, as a merchant's server or the operator makes it. */
  api(method: string, path: string, options: { token: string; tenantId?: string; json?: unknown }): Promise<{ status: number; body: Json }>;
  /** A sandbox payment of 900 XOF from an MTN Benin phone, waited for until the simulator paid it; its id. */
  paidPayment(token: string): Promise<string>;
  /** A tenant made by the operator, with its first sandbox API key. */
  newTenant(name: string): Promise<{ id: string; keyId: string; secret: string }>;
  /** A page whose browser prefers `languages` (navigator.languages), opened on `/` and sent on to `/dashboard`. */
  openDashboard(languages?: string[]): Promise<Page>;
  /** Fills the tenant sign-in form and waits for the signed-in frame. */
  /** A developer's sign-in with an API key (offered outside production only): its tab, then the key. */
  signInWithKey(page: Page, keyId: string, secret: string): Promise<void>;
  /** A shop's owner invited by the operator, joined through the e-mailed link (read from the log: no SMTP_URL). */
  newPerson(tenantId: string, email: string, password: string): Promise<void>;
  /** A person's sign-in: e-mail, password and, when given, a two-factor code. */
  signInAsPerson(page: Page, email: string, password: string, code?: string): Promise<void>;
  screenshot(page: Page, name: string): Promise<void>;
}

/**
 * Registers the `beforeAll` and `afterAll` that start and stop the rig (only when Chromium is installed:
 * bun would list the hooks of a skipped suite as skipped tests); call it inside `describeWithChromium`.
 * The returned object is filled in by `beforeAll`.
 */
export function useDashboardRig(): DashboardRig {
  const rig = { pageErrors: [] as string[] } as DashboardRig;
  let shots = "";
  if (!chromiumInstalled) return rig;

  beforeAll(async () => {
    const port = await freePort();
    rig.tg = await startTestGateway({ SIMULATORS: "on", PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    rig.base = (await rig.tg.gateway.start()).url!;
    rig.receiver = await startReceiver();
    shots = process.env.BROWSER_SCREENSHOT_DIR ?? (await mkdtemp(join(tmpdir(), "passerelle-dashboard-shots-")));
    await mkdir(shots, { recursive: true });
    rig.browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await rig.browser?.close();
    await rig.tg?.close();
    await rig.receiver?.stop();
    if (shots && !process.env.BROWSER_SCREENSHOT_DIR) await rm(shots, { recursive: true, force: true });
  });

  rig.api = async (method, path, options) => {
    const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
    if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
    if (options.json !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${rig.base}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  };

  rig.paidPayment = async (token) => {
    const created = await rig.api("POST", "/payments", {
      token,
      json: { amount: 900, description: "Pagne wax", operator: "mtn", customer: { phone: { number: "+22997000061", country: "bj" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const paymentId = created.body.id as string;
    await waitUntil(async () => (await rig.api("GET", `/payments/${paymentId}`, { token })).body.state === "succeeded", {
      what: "the payment paid",
      timeoutMs: 15_000,
      intervalMs: 200,
    });
    return paymentId;
  };

  rig.newTenant = async (name) => {
    const created = await rig.api("POST", "/tenants", { token: await rig.tg.adminToken(), json: { name } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return { id: created.body.tenant.id as string, keyId: created.body.apiKey.id as string, secret: created.body.apiKey.secret as string };
  };

  rig.openDashboard = async (languages = ["en-US", "en"]) => {
    const page = await rig.browser.newPage();
    page.on("console", (message) => {
      if (message.type() === "error" && !/Failed to load resource/.test(message.text())) rig.pageErrors.push(message.text());
    });
    page.on("pageerror", (error) => rig.pageErrors.push(error.message));
    await page.addInitScript((preferred: string[]) => {
      Object.defineProperty(navigator, "languages", { get: () => preferred });
      Object.defineProperty(navigator, "language", { get: () => preferred[0] });
    }, languages);
    await page.goto(`${rig.base}/`);
    await page.waitForURL(`${rig.base}/dashboard`);
    return page;
  };

  rig.signInWithKey = async (page, keyId, secret) => {
    await page.locator('[role="tab"][data-mode="tenant"]').click();
    await page.locator('input[name="keyId"]').fill(keyId);
    await page.locator('input[name="secret"]').fill(secret);
    await page.locator('form button[type="submit"]').click();
    await page.locator('[data-testid="environment"]').waitFor();
  };

  rig.newPerson = async (tenantId, email, password) => {
    const invited = await rig.api("POST", `/tenants/${tenantId}/invitations`, { token: await rig.tg.adminToken(), json: { email, role: "owner" } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    const line = await waitUntil(() => rig.tg.logs.find((l) => l.msg === "e-mail (no SMTP_URL)" && l.to === email), { what: `the invitation to ${email}` });
    const token = /#\/invitation\/([A-Za-z0-9_-]+)/.exec(String(line.text))![1]!;
    const accepted = await rig.api("POST", "/people/invitations/accept", { token: "", json: { token, password } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  };

  rig.signInAsPerson = async (page, email, password, code) => {
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(password);
    if (code) await page.locator('input[name="code"]').fill(code);
    await page.locator('form button[type="submit"]').click();
    await page.locator('[data-testid="environment"]').waitFor();
  };

  rig.screenshot = async (page, name) => {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  };

  return rig;
}
