/**
 * The campaign's merchants: tenants with a webhook endpoint each (a receiver of the campaign's, which a fault
 * may make fail or hang a while), and the flows they run through the API — payments on every wallet provider A
 * serves, refunds, payouts, payments approved late at the sandbox console, provider B's hosted checkouts and
 * permits (charged at once, or renewed by the renewal sweep). A client retries what a fault cut short with the
 * same Idempotency-Key, on the next API node, as a merchant's client behind a load balancer does.
 */
import { loadConfig } from "../../src/config.ts";
import { mintToken } from "../../src/mod.ts";
import { freePort } from "../../test/support/ports.ts";
import type { Cluster } from "./cluster.ts";
import type { Flow } from "./schedule.ts";

type Body = Record<string, any>;

/** A webhook endpoint of the campaign's: the event ids it received (`webhook-id`), and its mood. */
export interface Receiver {
  url: string;
  received: Map<string, number>;
  mode: "ok" | "fails" | "hangs";
  stop(): void;
}

export interface Tenant {
  index: number;
  id: string;
  token: string;
  receiver: Receiver;
  endpointId: string;
}

/** What the flows left for the checks: the ids the gateway gave, and the refusals it answered. */
export interface Outcome {
  /** Payments the flows made (`flow`), and the renewal sweep's charges found at the checks. */
  payments: { id: string; tenant: number; flow?: Flow }[];
  refunds: { id: string; tenant: number; paymentId: string }[];
  payouts: { id: string; tenant: number }[];
  /**
   * Provider B permits the customer authorised; a `renewal` one has a daily schedule whose first period the sweep
   * charges: when the campaign made it (its own clock) and when the gateway made its first period due
   * (`nextChargeAt`), which a clock jump on the API node that made it moves ahead.
   */
  permits: { id: string; tenant: number; token: string; renewal: boolean; scheduledAt?: number; firstDueAt?: number }[];
  /** Calls the gateway refused in the contract's terms (e.g. 422 insufficient_balance): not violations. */
  refused: string[];
  /** Calls that never got an answer within the client's patience. */
  unanswered: string[];
  /**
   * Calls answered `500 internal`: the gateway did not know what went wrong. During a fault the contract's
   * answer is 503 `unavailable` (which a client tries again) or a 502/504 naming the payment; a merchant's client
   * does not try a 500 again, so its payment, payout or refund is dropped. A violation, counted in `mismatches`.
   */
  internalErrors: string[];
  /** Payments a `provider-refund` fault refunded at provider A's console: the wait before the checks lasts until each is learnt. */
  refundedAtProvider: string[];
}

function startReceiver(port: number): Receiver {
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    received: new Map(),
    mode: "ok",
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(request) {
      await request.text();
      if (receiver.mode === "fails") return new Response("down for maintenance", { status: 503 });
      if (receiver.mode === "hangs") {
        // Longer than the gateway waits for an answer: the attempt times out on its side.
        await Bun.sleep(40_000);
        return new Response("late", { status: 200 });
      }
      const id = request.headers.get("webhook-id") ?? "?";
      receiver.received.set(id, (receiver.received.get(id) ?? 0) + 1);
      return new Response(null, { status: 204 });
    },
  });
  return receiver;
}

/** What {@link apiClient} tells of its calls. */
export interface ClientHooks {
  /** A call tried until its patience ran out, with what it last saw. */
  onGiveUp?: (what: string) => void;
  /** A call answered 500 (never tried again), with the answer's start (its `requestId`, for the logs). */
  onInternalError?: (what: string) => void;
}

/**
 * An HTTP client of the gateway's API that tries the next node when one is down or busy. `serverErrors` counts
 * the 5xx answers it got, by status (each 503 or 502 it tried again counts once per answer).
 */
export function apiClient(cluster: Cluster, hooks: ClientHooks = {}) {
  const serverErrors = new Map<number, number>();
  const call = async function call(
    token: string,
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string; node?: number; patienceMs?: number; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Body } | undefined> {
    const deadline = Date.now() + (options.patienceMs ?? 60_000);
    let node = options.node ?? 0;
    let lastSeen = "no attempt";
    for (;;) {
      const base = cluster.apiUrls[node % cluster.apiUrls.length]!;
      try {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            ...(options.idempotencyKey && { "idempotency-key": options.idempotencyKey }),
            ...options.headers,
          },
          ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        if (response.status >= 500) serverErrors.set(response.status, (serverErrors.get(response.status) ?? 0) + 1);
        if (response.status === 500) hooks.onInternalError?.(`${method} ${path}: ${text.slice(0, 200)}`);
        // 502/504 naming a payment: the provider may have acted and not answered; the payment is settled from the provider.
        if ((response.status === 502 || response.status === 504) && text.includes('"paymentId"'))
          return { status: response.status, body: JSON.parse(text) as Body };
        // 503 (the database or Redis away), 409 (the same key still in flight): the same call again, a bit later.
        if (response.status !== 503 && response.status !== 409 && response.status !== 502) {
          return { status: response.status, body: text ? (JSON.parse(text) as Body) : {} };
        }
        lastSeen = `HTTP ${response.status} from node ${node % cluster.apiUrls.length}: ${text.slice(0, 200)}`;
      } catch (error) {
        // The node was killed under the call, or did not answer in time: the next node, same key.
        lastSeen = `${error instanceof Error ? error.message : String(error)} (node ${node % cluster.apiUrls.length})`;
      }
      if (Date.now() > deadline) {
        hooks.onGiveUp?.(`${method} ${path}: last ${lastSeen}`);
        return undefined;
      }
      node++;
      await Bun.sleep(250);
    }
  };
  return Object.assign(call, { serverErrors });
}

export type ApiCall = ReturnType<typeof apiClient>;

/** An admin token, and `tenants` tenants each with a webhook endpoint on a receiver of their own. */
export async function createTenants(cluster: Cluster, call: ApiCall, count: number): Promise<{ admin: string; tenants: Tenant[] }> {
  const config = loadConfig(cluster.env, { createDevelopmentSecrets: false });
  const admin = await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox", ttlSeconds: 86_400 });
  const tenants: Tenant[] = [];
  for (let index = 0; index < count; index++) {
    const created = await call(admin, "POST", "/tenants", { body: { name: `Campaign merchant ${index + 1}` } });
    if (created?.status !== 200) throw new Error(`campaign: could not create a tenant: ${JSON.stringify(created)}`);
    const id = created.body.tenant.id as string;
    const token = await mintToken(config.jwt, { sub: `tenant:${id}`, tenantId: id, environment: "sandbox", ttlSeconds: 86_400 });
    const receiver = startReceiver(await freePort());
    // Each merchant has its own provider B account too; every other one sends Benin's MTN payments there first
    // (provider A behind it), so that both providers' payments, and failover between them, are in the campaign.
    const keys = await fetch(`${cluster.simulatorB}/_sim/accounts`, { method: "POST" }).then((r) => r.json() as Promise<Body>);
    const stored = await call(token, "PUT", `/tenants/${id}/credentials/providerB`, { body: { environment: "sandbox", ...keys } });
    if (stored?.status !== 200) throw new Error(`campaign: could not store provider B keys: ${JSON.stringify(stored)}`);
    if (index % 2 === 1) {
      const routed = await call(token, "PUT", "/routing", { body: { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] } });
      if (routed?.status !== 200) throw new Error(`campaign: could not set the routing: ${JSON.stringify(routed)}`);
    }
    const endpoint = await call(token, "POST", "/webhooks", { body: { url: receiver.url, description: "campaign receiver" } });
    if (endpoint?.status !== 200) throw new Error(`campaign: could not create a webhook endpoint: ${JSON.stringify(endpoint)}`);
    tenants.push({ index, id, token, receiver, endpointId: endpoint.body.id as string });
  }
  return { admin, tenants };
}

const FINAL = new Set(["succeeded", "failed", "cancelled", "refunded", "expired", "sent"]);

/** Polls a record until it leaves `pending` (or its patience runs out); its last state. */
export async function settle(call: ApiCall, token: string, path: string, patienceMs: number): Promise<string | undefined> {
  const deadline = Date.now() + patienceMs;
  let state: string | undefined;
  while (Date.now() < deadline) {
    const read = await call(token, "GET", path, { patienceMs: Math.max(1000, deadline - Date.now()) });
    state = read?.body.state as string | undefined;
    if (state && FINAL.has(state)) return state;
    await Bun.sleep(300);
  }
  return state;
}

/** A hosted checkout at provider B; the customer presses the page's button (`flow.button`) a little later. */
async function runCheckout(input: FlowInput, key: string): Promise<void> {
  const { flow, tenant, call, outcome, cluster } = input;
  const created = await call(tenant.token, "POST", "/providerB/checkout", {
    node: flow.node,
    idempotencyKey: key,
    headers: { "x-tenant-id": tenant.id },
    body: {
      amount: flow.amount,
      description: `Campaign checkout ${flow.id}`,
      returnUrl: "https://merchant.example/paid",
      cancelUrl: "https://merchant.example/cancelled",
      customer: { name: `Client ${flow.id}`, phone: flow.phone },
    },
  });
  if (!created) return void outcome.unanswered.push(`flow ${flow.id} POST /providerB/checkout`);
  const paymentId = created.body.paymentId as string | undefined;
  if (!paymentId) return void outcome.refused.push(`flow ${flow.id} checkout: ${created.status} ${created.body.code ?? ""}`);
  outcome.payments.push({ id: paymentId, tenant: tenant.index, flow });
  if (created.status !== 200) return;
  await Bun.sleep(flow.consoleDelayMs);
  await fetch(`${cluster.simulatorB}/_sim/invoices/${encodeURIComponent(String(created.body.token))}/${flow.button}`, { method: "POST" }).catch(
    () => undefined,
  );
}

/** A provider B permit the customer authorises; then charged at once, or (`permit-renewal`) given a daily schedule. */
async function runPermit(input: FlowInput, key: string): Promise<void> {
  const { flow, tenant, call, outcome, cluster } = input;
  const headers = { "x-tenant-id": tenant.id };
  const created = await call(tenant.token, "POST", "/providerB/permits", {
    node: flow.node,
    idempotencyKey: key,
    headers,
    body: {
      customer: { name: `Abonné ${flow.id}`, phone: flow.phone },
      description: `Campaign subscription ${flow.id}`,
      maxAmount: flow.amount * 2,
      returnUrl: "https://merchant.example/subscribed",
      cancelUrl: "https://merchant.example/declined",
    },
  });
  if (!created) return void outcome.unanswered.push(`flow ${flow.id} POST /providerB/permits`);
  if (created.status !== 200) return void outcome.refused.push(`flow ${flow.id} permit: ${created.status} ${created.body.code ?? ""}`);
  const permitId = created.body.permitId as string;
  const token = created.body.token as string;
  const permit: Outcome["permits"][number] = { id: permitId, tenant: tenant.index, token, renewal: flow.kind === "permit-renewal" };
  outcome.permits.push(permit);
  await Bun.sleep(flow.consoleDelayMs);
  await fetch(`${cluster.simulatorB}/_sim/permits/${encodeURIComponent(token)}/authorize`, { method: "POST" }).catch(() => undefined);
  const state = await settlePermit(call, tenant, permitId, 60_000);
  if (state !== "active") return void outcome.refused.push(`flow ${flow.id} permit ${permitId} is ${state ?? "unreadable"} after its authorisation`);
  if (flow.kind === "permit-renewal") {
    const schedule = await call(tenant.token, "PUT", `/providerB/permits/${permitId}/schedule`, {
      node: flow.node + 1,
      headers,
      body: { amount: flow.amount, interval: "day", description: `Campaign renewal ${flow.id}` },
    });
    if (schedule?.status !== 200) return void outcome.refused.push(`flow ${flow.id} schedule: ${schedule?.status ?? "no answer"} ${schedule?.body.code ?? ""}`);
    permit.scheduledAt = Date.now();
    if (typeof schedule.body.nextChargeAt === "string") permit.firstDueAt = Date.parse(schedule.body.nextChargeAt);
    return;
  }
  const charge = await call(tenant.token, "POST", `/providerB/permits/${permitId}/charges`, {
    node: flow.node + 1,
    idempotencyKey: `${key}-charge`,
    headers,
    body: { amount: flow.amount, description: `Campaign charge ${flow.id}` },
  });
  if (!charge) return void outcome.unanswered.push(`flow ${flow.id} POST charge`);
  const paymentId = charge.body.paymentId as string | undefined;
  if (!paymentId) return void outcome.refused.push(`flow ${flow.id} charge: ${charge.status} ${charge.body.code ?? ""}`);
  outcome.payments.push({ id: paymentId, tenant: tenant.index, flow });
}

/** Polls a permit until it leaves `pending` (or its patience runs out); its last status. */
async function settlePermit(call: ApiCall, tenant: Tenant, permitId: string, patienceMs: number): Promise<string | undefined> {
  const deadline = Date.now() + patienceMs;
  let status: string | undefined;
  while (Date.now() < deadline) {
    const read = await call(tenant.token, "GET", `/providerB/permits/${permitId}`, {
      headers: { "x-tenant-id": tenant.id },
      patienceMs: Math.max(1000, deadline - Date.now()),
    });
    status = read?.body.status as string | undefined;
    if (status && status !== "pending") return status;
    await Bun.sleep(300);
  }
  return status;
}

type FlowInput = { flow: Flow; tenant: Tenant; call: ApiCall; cluster: Cluster; outcome: Outcome; seed: number };

/** Runs one flow to its end (or its refusal), recording what the gateway created. */
export async function runFlow(input: FlowInput): Promise<void> {
  const { flow, tenant, call, outcome, cluster } = input;
  const key = `campaign-${input.seed}-${flow.id}`;
  if (flow.kind === "checkout") return runCheckout(input, key);
  if (flow.kind === "permit-charge" || flow.kind === "permit-renewal") return runPermit(input, key);
  const customer = { phone: { number: flow.phone, country: flow.wallet.country } };
  if (flow.kind === "payout") {
    const payout = await call(tenant.token, "POST", "/payouts", {
      node: flow.node,
      idempotencyKey: key,
      body: { amount: flow.amount, description: `Campaign payout ${flow.id}`, recipient: { ...customer, operator: flow.wallet.operator } },
    });
    if (!payout) return void outcome.unanswered.push(`flow ${flow.id} POST /payouts`);
    if (payout.status !== 200) return void outcome.refused.push(`flow ${flow.id} payout: ${payout.status} ${payout.body.code ?? payout.body.error ?? ""}`);
    outcome.payouts.push({ id: payout.body.id as string, tenant: tenant.index });
    return;
  }
  const payment = await call(tenant.token, "POST", "/payments", {
    node: flow.node,
    idempotencyKey: key,
    body: { amount: flow.amount, description: `Campaign order ${flow.id}`, operator: flow.wallet.operator, customer },
  });
  if (!payment) return void outcome.unanswered.push(`flow ${flow.id} POST /payments`);
  const paymentId = (payment.status === 200 ? payment.body.id : payment.body.paymentId) as string | undefined;
  if (!paymentId) return void outcome.refused.push(`flow ${flow.id} payment: ${payment.status} ${payment.body.code ?? payment.body.error ?? ""}`);
  outcome.payments.push({ id: paymentId, tenant: tenant.index, flow });
  if (flow.kind === "pay-console") {
    // The customer confirms late, at whichever provider the payment went to: its sandbox console approves it.
    await Bun.sleep(flow.consoleDelayMs);
    const read = await call(tenant.token, "GET", `/payments/${paymentId}`);
    const at = read?.body as Body | undefined;
    if (at?.providerTransactionId) {
      const reference = encodeURIComponent(String(at.providerTransactionId));
      const approve =
        at.provider === "providerB"
          ? `${cluster.simulatorB}/_sim/softpay/${reference}/approve`
          : `${cluster.simulatorA}/_sim/transactions/${reference}/approve`;
      await fetch(approve, { method: "POST" }).catch(() => undefined);
    }
  }
  if (flow.kind === "pay-refund") {
    const state = await settle(call, tenant.token, `/payments/${paymentId}`, 60_000);
    if (state !== "succeeded") return;
    const refund = await call(tenant.token, "POST", `/payments/${paymentId}/refunds`, {
      node: flow.node + 1,
      idempotencyKey: `${key}-refund`,
      body: { amount: flow.refundAmount, reason: "Campaign refund" },
    });
    if (!refund) return void outcome.unanswered.push(`flow ${flow.id} POST refund`);
    if (refund.status !== 200) return void outcome.refused.push(`flow ${flow.id} refund: ${refund.status} ${refund.body.code ?? ""}`);
    outcome.refunds.push({ id: refund.body.id as string, tenant: tenant.index, paymentId });
  }
}

export interface SimTransaction {
  id: number;
  merchant_reference: string | null;
  status: string;
  amount: number;
}

/** One SoftPay payment at provider B's simulator, with the invoice's custom data (where our payment id is). */
export interface SimSoftpay {
  token: string;
  status: string;
  amount: number;
  custom_data: Record<string, unknown>;
}

/** Every SoftPay payment provider B's simulator holds, from its own records. */
export async function simulatorSoftpays(cluster: Cluster): Promise<SimSoftpay[]> {
  const response = await fetch(`${cluster.simulatorB}/_sim/softpay`);
  return ((await response.json()) as { payments: SimSoftpay[] }).payments;
}

/** One invoice at provider B's simulator (a checkout, a SoftPay payment or a permit charge), with its custom data. */
export interface SimInvoice {
  token: string;
  status: string;
  amount: number;
  permit_token: string | null;
  custom_data: Record<string, unknown>;
}

/** Every invoice provider B's simulator holds, from its own records. */
export async function simulatorInvoices(cluster: Cluster): Promise<SimInvoice[]> {
  const response = await fetch(`${cluster.simulatorB}/_sim/invoices`);
  return ((await response.json()) as { invoices: SimInvoice[] }).invoices;
}

/** Every transaction provider A's simulator holds, from its own records. */
export async function simulatorTransactions(cluster: Cluster): Promise<SimTransaction[]> {
  const response = await fetch(`${cluster.simulatorA}/_sim/transactions`);
  return ((await response.json()) as { transactions: SimTransaction[] }).transactions;
}
