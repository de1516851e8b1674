/**
 * Issue 18, point 4: the metrics an operator pages on. A gateway served over real HTTP (its public and
 * metrics listeners) with both simulators on their own ports: a provider A direct payment, a provider B
 * checkout, its IPN (accepted) and a forged one (refused), the webhook delivery that follows; then a scrape
 * of `/metrics`. Every metric the Grafana dashboard and the Prometheus alert rules under `deploy/` use must be
 * exposed, and the values must have moved.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mintToken } from "../../../src/mod.ts";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { startSimulator, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const DEPLOY = join(import.meta.dir, "..", "..", "..", "deploy");
const dashboard = readFileSync(join(DEPLOY, "grafana", "passerelle.json"), "utf8");
const alertRules = readFileSync(join(DEPLOY, "prometheus", "alerts.yml"), "utf8");

/** The metric names an expression text uses, histogram series reduced to their family. */
function metricNames(text: string): string[] {
  return [...new Set([...text.matchAll(/passerelle_[a-z_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, "")))].sort();
}

/** The families a scrape exposes (its `# TYPE` lines). */
function exposedFamilies(exposition: string): Set<string> {
  return new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
}

/** The value of one sample, by its full name and labels as exposed (`name{a="x",b="y"}`); undefined when absent. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

let simA: ProviderASimulator;
let simAServer: ReturnType<typeof Bun.serve>;
let simB: SimulatorServer;
let receiver: WebhookReceiver;
let tg: TestGateway;
let base: string;
let metricsUrl: string;
let tenant: { id: string; token: string };
let keysB: Awaited<ReturnType<SimulatorServer["account"]>>;

type Call = { method?: string; token?: string; json?: unknown; body?: string; type?: string };

async function api(path: string, init: Call = {}): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (tenant) headers["x-tenant-id"] = tenant.id;
  if (init.json !== undefined || init.type) headers["content-type"] = init.type ?? "application/json";
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  const response = await fetch(`${base}${path}`, { method: init.method ?? "GET", headers, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const scrape = async (): Promise<string> => (await fetch(`${metricsUrl}/metrics`)).text();

beforeAll(async () => {
  simA = createProviderASimulator({ approveDelayMs: 100 });
  simAServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simA.fetch });
  const simABase = simAServer.url.toString().replace(/\/$/, "");
  const account = (await (await fetch(`${simABase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator();
  // An endpoint that answers 410 Gone is disabled by its first delivery.
  receiver = await startReceiver({ respond: (receipt) => new Response("ok", { status: receipt.path === "/gone" ? 410 : 200 }) });
  tg = await startTestGateway({
    PROVIDER_A_SANDBOX_URL: simABase,
    PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
    PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`,
    PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`,
  });
  const started = await tg.gateway.start();
  base = started.url!;
  metricsUrl = started.metricsUrl!;
  const admin = await mintToken(tg.config.jwt, { sub: "operator", role: "admin", environment: "sandbox" });
  const created = await api("/tenants", { method: "POST", token: admin, json: { name: "Metrics shop" } });
  expect(created.status).toBe(200);
  tenant = { id: created.body.tenant.id, token: await tg.tenantToken(created.body.tenant.id) };
  keysB = await simB.account();
  const credentials = { ...keysB, environment: "sandbox" };
  expect((await api(`/tenants/${tenant.id}/credentials/providerB`, { method: "PUT", token: tenant.token, json: credentials })).status).toBe(200);
  for (const path of ["/hooks", "/gone"]) {
    expect((await api("/webhooks", { method: "POST", token: tenant.token, json: { url: `${receiver.url}${path}` } })).status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  simA?.close();
  await tg?.close();
  await simAServer?.stop(true);
  await simB?.stop();
  await receiver?.stop();
});

describe("the deploy/ dashboard and alert rules", () => {
  it("are a Grafana dashboard and Prometheus rule groups", () => {
    const parsed = JSON.parse(dashboard) as { title: string; panels: { title: string; targets: { expr: string }[] }[] };
    expect(parsed.title).toBe("Passerelle");
    expect(parsed.panels.length).toBeGreaterThan(8);
    for (const panel of parsed.panels)
      expect(
        panel.targets.every((target) => target.expr.includes("passerelle_")),
        panel.title,
      ).toBe(true);
    type Rule = { alert: string; expr: string; for?: string; labels: { severity: string } };
    const rules = Bun.YAML.parse(alertRules) as { groups: { name: string; rules: Rule[] }[] };
    const all = rules.groups.flatMap((group) => group.rules);
    const paged = ["PasserelleStuckPayments", "PasserelleWebhookDeliveryFailureRate", "PasserelleQueueBacklog", "PasserelleProviderErrorRate"];
    expect(all.map((rule) => rule.alert)).toEqual(expect.arrayContaining(paged));
    for (const rule of all) {
      expect(rule.expr, rule.alert).toContain("passerelle_");
      expect(["info", "warning", "critical"]).toContain(rule.labels.severity);
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    }
    const stuck = all.find((rule) => rule.alert === "PasserelleStuckPayments");
    expect(stuck).toMatchObject({ for: "15m", expr: expect.stringContaining("passerelle_payments_stuck_pending") });
  });

  it("use only metrics a gateway exposes, and the counts move with the traffic", async () => {
    // Provider A: a direct payment against the simulator (a provider call that succeeds).
    const direct = await api("/providerA/direct-payment", {
      method: "POST",
      token: tenant.token,
      json: { description: "Metrics", amount: 1000, payment_method: "mnoA_open", phone_number: { number: "+22997000000", country: "bj" } },
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);

    expect((await api(`/payments/${direct.body.paymentId}`, { token: tenant.token })).status).toBe(200);

    // Provider B: a checkout, paid on the hosted page, its IPN posted (accepted), a forged one (refused).
    const checkout = await api("/providerB/checkout", {
      method: "POST",
      token: tenant.token,
      json: { amount: 5000, description: "Commande", returnUrl: "https://shop.example/ok", cancelUrl: "https://shop.example/ko", customer: { name: "Awa" } },
    });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
    expect((await simB.press(checkout.body.token, "pay")).status).toBe(200);
    const confirm = await fetch(`${simB.url}/sandbox-api/v1/checkout-invoice/confirm/${checkout.body.token}`, {
      headers: { "PAYDUNYA-MASTER-KEY": keysB.masterKey, "PAYDUNYA-PRIVATE-KEY": keysB.privateKey, "PAYDUNYA-TOKEN": keysB.token },
    });
    const answer = (await confirm.json()) as Record<string, any>;
    const form = "application/x-www-form-urlencoded";
    expect((await api("/providerB/webhook", { method: "POST", type: form, body: encodePhpForm({ data: answer }) })).status).toBe(200);
    const forged = encodePhpForm({ data: { ...answer, hash: "0".repeat(128) } });
    expect((await api("/providerB/webhook", { method: "POST", type: form, body: forged })).status).toBe(401);

    // The IPN is processed (confirmed with provider B): the payment succeeds and the tenant's webhook is delivered.
    await waitUntil(() => receiver.receipts.find((receipt) => receipt.path === "/hooks"), { what: "the tenant's webhook", timeoutMs: 15_000 });
    const exposition = await waitUntil(
      async () => {
        const text = await scrape();
        const delivered = sample(text, 'passerelle_webhook_delivery_duration_seconds_count{outcome="succeeded"}');
        return delivered && sample(text, 'passerelle_webhook_delivery_duration_seconds_count{outcome="failed"}') ? text : undefined;
      },
      { what: "both deliveries counted", timeoutMs: 10_000 },
    );

    const exposed = exposedFamilies(exposition);
    const used = metricNames(`${dashboard}\n${alertRules}`);
    expect(used.length).toBeGreaterThan(8);
    expect(used.filter((name) => !exposed.has(name))).toEqual([]);

    const calls = (provider: string, operation: string) =>
      sample(exposition, `passerelle_provider_call_duration_seconds_count{provider="${provider}",operation="${operation}",outcome="ok"}`);
    expect(calls("providerA", "POST /v1/transactions")).toBeGreaterThanOrEqual(1);
    expect(calls("providerB", "POST /checkout-invoice/create")).toBe(1);
    expect(calls("providerB", "GET /checkout-invoice/confirm/{token}")).toBeGreaterThanOrEqual(1);
    expect(sample(exposition, 'passerelle_ipns_total{outcome="accepted",reason="stored"}')).toBe(1);
    expect(sample(exposition, 'passerelle_ipns_total{outcome="refused",reason="unauthorized"}')).toBe(1);
    expect(sample(exposition, 'passerelle_webhook_endpoints_disabled_total{reason="gone"}')).toBe(1);
    expect(sample(exposition, 'passerelle_webhook_endpoints_disabled_total{reason="failing"}')).toBe(0);
    expect(sample(exposition, 'passerelle_payments{provider="providerB",state="succeeded"}')).toBe(1);
    expect(sample(exposition, 'passerelle_payments{provider="providerA",state="pending"}')).toBe(1);
    expect(sample(exposition, 'passerelle_payments_stuck_pending{provider="providerA"}')).toBe(0);
    // Requests by route template: the REST lookup's, and the others' (a raw-body route).
    expect(sample(exposition, 'passerelle_http_requests_total{method="GET",route="/payments/{payment_id}",status="200"}')).toBe(1);
    expect(sample(exposition, 'passerelle_http_requests_total{method="POST",route="/providerB/checkout",status="200"}')).toBe(1);
    expect(sample(exposition, 'passerelle_http_requests_total{method="POST",route="/providerB/webhook",status="401"}')).toBe(1);
    // The queues the workers serve are listed; no worker is behind by minutes.
    const depths = [...exposition.matchAll(/^passerelle_queue_oldest_waiting_seconds\{queue="([^"]+)"\} (\S+)$/gm)];
    expect(depths.map((match) => match[1])).toEqual(expect.arrayContaining(["webhooks", "ipn"]));
    for (const [, , age] of depths) expect(Number(age)).toBeLessThan(60);
    // No raw path (an id, a token) in any label: the routes are templates.
    expect(exposition).not.toContain(checkout.body.token);
    expect(exposition).not.toContain(direct.body.paymentId);
  }, 60_000);
});
