/**
 * What `bun run bench` measures, as data. A later issue adds a scenario with one entry in {@link scenarios}
 * (and, when it needs a new yardstick, one in {@link references}).
 *
 * Header, path and body values — and a flow's fields — may hold `{{name}}` placeholders (dotted for the
 * provider set-ups: `{{providerA.tenantToken}}`), filled from the run's {@link BenchVariables} once the
 * gateway is up and the set-ups an entry names in `setup` have run.
 */
import type { Flow } from "./load/flow-driver.ts";

/** One HTTP request, sent again and again by every connection of the load generator. */
export interface BenchRequest {
  method: string;
  /** Path and query, e.g. `/auth/whoami`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Reference servers `run.ts` can start: each is a script in `bench/reference-servers/`, listed in `harness/servers.ts`. */
export type ReferenceServerName = "elysia-constant" | "webhook-receiver" | "provider-a-proxy";

/** Where a reference's load goes: a reference server, or one of the simulators of the `passerelle sandbox` process. */
export type ReferenceTarget = ReferenceServerName | "provider-a-simulator" | "provider-b-simulator";

/**
 * What an entry needs set up through the gateway's API before it is measured (`harness/provider-setup.ts`):
 * `providerA` — a tenant, its token, an approved direct payment; `providerB` — a tenant with provider B
 * credentials and a webhook endpoint.
 */
export type SetupName = "providerA" | "providerB";

/** A yardstick measured in the same run: a request to a reference server, not to the gateway. */
export interface Reference {
  name: string;
  server: ReferenceTarget;
  /** The request of the load (or, with `flow`, of the probe only). */
  request: BenchRequest;
  /** Load with `load/flow-driver.ts` running this flow instead of with wrk / the Bun generator. */
  flow?: Flow;
  setup?: SetupName;
  /**
   * When in a round its group runs (lower first). Rows that leave background work behind them (webhooks,
   * sync jobs) come after the ones that leave none; the fan-out is {@link FANOUT_PHASE}, the IPN intake
   * {@link IPN_PHASE}.
   */
  phase: number;
  /** One line for the README and the JSON: what this rate stands for. */
  measures: string;
}

/** A request to the gateway, compared with a {@link Reference} by name. */
export interface Scenario {
  name: string;
  /** The `name` of the reference whose requests/s this scenario's requests/s is divided by. */
  reference: string;
  request: BenchRequest;
  /** Load with `load/flow-driver.ts` running this flow (so that it is measured as its reference is). */
  flow?: Flow;
  setup?: SetupName;
  /**
   * A floor: the load goes to this reference server instead of the gateway — the least any program in
   * the gateway's place does for the same request (no database, queue or validation) — so the table shows
   * what the topology alone allows next to what the gateway reaches.
   */
  server?: ReferenceServerName;
  measures: string;
}

/**
 * A webhook fan-out (issue 4 point 7), measured by `harness/fanout.ts` rather than by a load generator:
 * `events` events for one tenant with `endpoints` endpoints at a local receiver (`reference-servers/
 * webhook-receiver.ts`), timed per delivery from its event's commit to its 2xx. Its reference is a
 * plain fetch loop to the same receiver (`load/fetch-loop.ts`). `--fanout-events` and
 * `--fanout-endpoints` override the sizes.
 */
export interface FanoutScenario {
  name: string;
  /** The name of the fetch-loop reference row. */
  reference: string;
  events: number;
  endpoints: number;
  /** Events started per second, steadily; undefined: a burst, as fast as the producers go. */
  eventsPerSecond?: number;
  measures: string;
}

/**
 * The IPN intake (issue 6 point 6, issue 8), measured by `harness/ipn-intake.ts`: verified IPNs — the
 * bodies the provider B simulator posted when the invoices of checkouts made in set-up were paid — replayed
 * at `POST /providerB/webhook` by the flow driver, and the time until the tenant's webhook gets each
 * `payment.completed`. Its reference is a single-row INSERT loop on the same PostgreSQL (`load/insert-loop.ts`).
 */
export interface IpnScenario {
  name: string;
  reference: string;
  referenceMeasures: string;
  /** The second row: IPN posted → the tenant's webhook receiver got the event. */
  webhookName: string;
  webhookMeasures: string;
  measures: string;
}

export const FANOUT_PHASE = 3;
export const IPN_PHASE = 5;

/** Values known only once the gateway runs (and the set-ups ran), for `{{name}}` placeholders. */
export interface BenchVariables {
  adminToken: string;
  providerA?: { tenantToken: string; approvedTransactionId: string; referenceSecretKey: string };
  providerB?: { tenantId: string; tenantToken: string; masterKey: string; privateKey: string; token: string; storeName: string; callbackUrl: string };
}

/** What the POST /payments row pays: the direct payment's, in the one call's words. */
export const ROUTED_PAYMENT = {
  amount: 500,
  description: "Order 1042",
  operator: "mtn",
  customer: { phone: { number: "+22997000000", country: "bj" }, firstname: "Ada", lastname: "Lovelace" },
};

/** What every direct-payment row pays: below 1000, so the sandbox approves it after `--approve-delay-ms`. */
export const DIRECT_PAYMENT = {
  description: "Order 1042",
  amount: 500,
  payment_method: "mnoA_open",
  phone_number: { number: "+22997000000", country: "bj" },
  firstname: "Ada",
  lastname: "Lovelace",
  email: "ada@example.com",
};

/** The same payment on provider A's wire, as the gateway's adapter sends it (`mnoA_open` → `mtn_open`, bj → XOF). */
const WIRE_PAYMENT = {
  description: DIRECT_PAYMENT.description,
  amount: DIRECT_PAYMENT.amount,
  currency: "XOF",
  mode: "mtn_open",
  customer: { firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", phone_number: { number: "+22997000000", country: "bj" } },
};

const CHECKOUT = {
  amount: 5000,
  description: "Commande 42",
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/panier",
  customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
  customData: { orderRef: "ORD-42", quantity: 3, gift: true },
};

/** The same invoice on provider B's wire, as the gateway's adapter builds it (`services/checkout/create-checkout.ts`). */
const WIRE_CHECKOUT = {
  invoice: {
    total_amount: CHECKOUT.amount,
    description: CHECKOUT.description,
    customer: CHECKOUT.customer,
    items: { item_0: { name: CHECKOUT.description, quantity: 1, unit_price: CHECKOUT.amount, total_price: CHECKOUT.amount } },
  },
  store: { name: "{{providerB.storeName}}" },
  custom_data: { ...CHECKOUT.customData, passerelle_payment_id: "pay_01JBENCH0000000000000000000" },
  actions: { cancel_url: CHECKOUT.cancelUrl, return_url: CHECKOUT.returnUrl, callback_url: "{{providerB.callbackUrl}}" },
};

const tenantA = { authorization: "Bearer {{providerA.tenantToken}}" };

const PROVIDER_A_REFERENCE = "provider A simulator direct: create + token + push";
const PROVIDER_B_REFERENCE = "provider B simulator direct: checkout-invoice/create";
const PROVIDER_B_DISBURSE_REFERENCE = "provider B simulator direct: disburse get-invoice";

/** What the payout row sends: 500 XOF (below 1000: the sandbox sends it) to a Wave wallet in Senegal, which only provider B reaches. */
export const PAYOUT = {
  amount: 500,
  description: "Rider 12",
  recipient: { phone: { number: "+221770000012", country: "sn" }, operator: "wave", firstname: "Moussa" },
};

export const references: Reference[] = [
  {
    name: "bare Elysia constant route",
    server: "elysia-constant",
    request: { method: "GET", path: "/", headers: {} },
    phase: 1,
    measures: "new Elysia().get('/', () => 'ok') in its own process: the most this machine and generator can do",
  },
  {
    name: PROVIDER_A_REFERENCE,
    server: "provider-a-simulator",
    setup: "providerA",
    // The probe: the first of the three calls (the flow driver makes all three).
    request: {
      method: "POST",
      path: "/v1/transactions",
      headers: { authorization: "Bearer {{providerA.referenceSecretKey}}", "content-type": "application/json", accept: "application/json" },
      // No merchant_reference: the simulator refuses one it has seen, and the probe runs once per round.
      body: JSON.stringify({ ...WIRE_PAYMENT, currency: { iso: WIRE_PAYMENT.currency } }),
    },
    flow: { flow: "provider-a-direct-payment", secretKey: "{{providerA.referenceSecretKey}}", payment: WIRE_PAYMENT },
    phase: 2,
    measures:
      "the flow driver (own process) making, per payment, the three provider A calls the gateway makes — POST /v1/transactions (Idempotency-Key), POST /v1/transactions/{id}/token, POST /v1/mtn_open — straight at the simulator (own process), on an account whose approval webhooks go to a sink: what the provider side costs at all",
  },
  {
    name: PROVIDER_B_REFERENCE,
    server: "provider-b-simulator",
    setup: "providerB",
    request: {
      method: "POST",
      path: "/sandbox-api/v1/checkout-invoice/create",
      headers: {
        "PAYDUNYA-MASTER-KEY": "{{providerB.masterKey}}",
        "PAYDUNYA-PRIVATE-KEY": "{{providerB.privateKey}}",
        "PAYDUNYA-TOKEN": "{{providerB.token}}",
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(WIRE_CHECKOUT),
    },
    phase: 4,
    measures: "the create call the gateway makes, with the tenant's keys and the same wire body, straight at the simulator (own process)",
  },
  {
    name: PROVIDER_B_DISBURSE_REFERENCE,
    server: "provider-b-simulator",
    setup: "providerB",
    request: {
      method: "POST",
      path: "/api/v2/disburse/get-invoice",
      headers: {
        "PAYDUNYA-MASTER-KEY": "{{providerB.masterKey}}",
        "PAYDUNYA-PRIVATE-KEY": "{{providerB.privateKey}}",
        "PAYDUNYA-TOKEN": "{{providerB.token}}",
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({ account_alias: "770000012", amount: PAYOUT.amount, withdraw_mode: "wave-senegal", callback_url: "{{providerB.callbackUrl}}" }),
    },
    phase: 4,
    measures:
      "the first disburse call the gateway's payout job makes (the simulator first POSTs to the callback URL, a sink here, as provider B does), with the tenant's keys, straight at the simulator (own process)",
  },
];

export const scenarios: Scenario[] = [
  {
    name: "GET /auth/whoami (REST, admin JWT)",
    reference: "bare Elysia constant route",
    request: { method: "GET", path: "/auth/whoami", headers: { authorization: "Bearer {{adminToken}}" } },
    measures:
      "the REST bridge end to end: request id, JWT verification (cached after the first hit), the tRPC procedure with output validation, the JSON body, metrics",
  },
  {
    name: "GET /providerA/transaction/{id}/is-approved (final)",
    reference: "bare Elysia constant route",
    setup: "providerA",
    request: { method: "GET", path: "/providerA/transaction/{{providerA.approvedTransactionId}}/is-approved", headers: tenantA },
    measures:
      "a tenant token from POST /auth/token, the tenant lookup and rate limiter, the payment (one SELECT per second: a final answer is kept 1 s per process); approved is final, so no provider call (refresh-on-read only touches pending rows)",
  },
  {
    name: "GET /providerA/transaction/{id}/status (final)",
    reference: "bare Elysia constant route",
    setup: "providerA",
    request: { method: "GET", path: "/providerA/transaction/{{providerA.approvedTransactionId}}/status", headers: tenantA },
    measures: "the same read with the detailed view (more fields through output validation)",
  },
  {
    name: "floor of the direct-payment: a bare proxy making the same three calls",
    reference: PROVIDER_A_REFERENCE,
    setup: "providerA",
    server: "provider-a-proxy",
    request: { method: "POST", path: "/providerA/direct-payment", headers: { "content-type": "application/json" }, body: JSON.stringify(DIRECT_PAYMENT) },
    flow: {
      flow: "repeat",
      request: { method: "POST", path: "/providerA/direct-payment", headers: { "content-type": "application/json" }, body: JSON.stringify(DIRECT_PAYMENT) },
    },
    measures:
      "the flow driver posting the same body to `reference-servers/provider-a-proxy.ts` (own process): an Elysia route that makes the three provider A calls with fetch, on the reference's account, and answers — no validation, auth, database or queue. What one more hop costs on this machine: the most any proxy could reach here",
  },
  {
    name: "POST /providerA/direct-payment (500 XOF)",
    reference: PROVIDER_A_REFERENCE,
    setup: "providerA",
    request: {
      method: "POST",
      path: "/providerA/direct-payment",
      headers: { ...tenantA, "content-type": "application/json" },
      body: JSON.stringify(DIRECT_PAYMENT),
    },
    flow: {
      flow: "repeat",
      request: {
        method: "POST",
        path: "/providerA/direct-payment",
        headers: { ...tenantA, "content-type": "application/json" },
        body: JSON.stringify(DIRECT_PAYMENT),
      },
    },
    measures:
      "the flow driver posting direct payments: validation, the payment row, the three provider A calls over HTTP to the simulator, the provider id stored, the providerA-sync job enqueued; in the background, the simulator's approval webhook 2 s later (verified, re-read from the simulator, applied) and the first sync run at 5 s",
  },
  {
    name: "POST /payments (500 XOF, MTN Benin: routed to provider A)",
    reference: PROVIDER_A_REFERENCE,
    setup: "providerA",
    request: { method: "POST", path: "/payments", headers: { ...tenantA, "content-type": "application/json" }, body: JSON.stringify(ROUTED_PAYMENT) },
    flow: {
      flow: "repeat",
      request: { method: "POST", path: "/payments", headers: { ...tenantA, "content-type": "application/json" }, body: JSON.stringify(ROUTED_PAYMENT) },
    },
    measures:
      "the same payment as the direct-payment row through the one call for any operator: the tenant's route list, its accounts, the routes' success rates over the window (one provider here: not read), the payment and its attempt rows, the circuit breaker around the three provider A calls, nextAction stored, the answer read back with its attempts",
  },
  {
    name: "POST /providerB/checkout",
    reference: PROVIDER_B_REFERENCE,
    setup: "providerB",
    request: {
      method: "POST",
      path: "/providerB/checkout",
      headers: { authorization: "Bearer {{providerB.tenantToken}}", "x-tenant-id": "{{providerB.tenantId}}", "content-type": "application/json" },
      body: JSON.stringify(CHECKOUT),
    },
    measures:
      "the tenant's provider B credentials opened (AES-GCM), the create call to the simulator, the pending checkout row, the providerB-sync job enqueued, the orphan re-match; in the background, the first sync run (a confirm call) 5 s after each checkout",
  },
  {
    name: "POST /payouts (500 XOF to Wave Senegal, provider B)",
    reference: PROVIDER_B_DISBURSE_REFERENCE,
    setup: "providerB",
    request: {
      method: "POST",
      path: "/payouts",
      headers: { authorization: "Bearer {{providerB.tenantToken}}", "x-tenant-id": "{{providerB.tenantId}}", "content-type": "application/json" },
      body: JSON.stringify(PAYOUT),
    },
    measures:
      "validation, the route (provider B: the tenant's own account, credentials opened), one transaction holding the tenant's row (the per-number limit, the payout row, its ledger reservation), the advance-payout job enqueued; in the background the job's get-invoice, submit-invoice and check-status calls to the simulator and the applied result with its ledger journal and payout.sent",
  },
];

export const fanoutScenarios: FanoutScenario[] = [
  {
    name: "webhook fan-out, event committed → 2xx received",
    reference: "plain fetch loop to the receiver (100 in flight)",
    events: 1000,
    endpoints: 4,
    measures:
      "a burst: N events recorded as fast as 8 producers go (recordEvent + scheduleDeliveries) for one tenant with E endpoints at a local receiver; the gateway's workers (BullMQ, PostgreSQL) lease, sign, POST through safeFetch and record each attempt; deliveries/s over the batch (throughput) and per-delivery latency from commit to 2xx (backlog included)",
  },
  {
    name: "webhook fan-out at 100 events/s, event committed → 2xx received",
    reference: "plain fetch loop to the receiver (100 in flight)",
    events: 500,
    endpoints: 4,
    eventsPerSecond: 100,
    measures:
      "the same path at a steady 100 events/s (400 deliveries/s), below the burst's throughput: the latency of a delivery when nothing is queued ahead of it",
  },
];

export const ipnScenarios: IpnScenario[] = [
  {
    name: "POST /providerB/webhook (IPN intake: verified, stored, 200)",
    reference: "single-row INSERT loop (same PostgreSQL)",
    referenceMeasures:
      "load/insert-loop.ts (own process): single-row autocommitted INSERTs of an IPN-sized row into a copy of ipn_messages (same checks and indexes), as many in flight as the load's connections over a pool of 10 (the gateway's)",
    measures:
      "the flow driver replaying verified IPNs (form-encoded, the real hash; each sent once) of invoices paid at the simulator: the body parsed, the checkout found by token, the master key of its credential version opened, the SHA-512 hash checked, the IPN stored, the ipn job enqueued — answered 200; the ipn jobs (confirm with the simulator, the completion, the event and its delivery) run alongside",
    webhookName: "IPN posted → tenant webhook received payment.completed",
    webhookMeasures:
      "per IPN of the intake row, from the moment it was posted to the moment the tenant's webhook receiver got its payment.completed: the ipn job (confirm call, one transaction), the delivery job (lease, sign, POST); the rate is deliveries over the whole batch, the latencies include the backlog when the intake outruns the processing",
  },
];

/** Fills `{{name}}` / `{{group.name}}` placeholders in every string of `value`. Throws on an unknown name. */
export function fillPlaceholders<T>(value: T, variables: BenchVariables): T {
  const fill = (text: string) =>
    text.replace(/\{\{([\w.]+)\}\}/g, (_, name: string) => {
      let found: unknown = variables;
      for (const part of name.split(".")) found = (found as Record<string, unknown> | undefined)?.[part];
      if (typeof found !== "string") throw new Error(`bench: unknown placeholder {{${name}}} (is its set-up missing?)`);
      return found;
    });
  const walk = (inner: unknown): unknown => {
    if (typeof inner === "string") return fill(inner);
    if (Array.isArray(inner)) return inner.map(walk);
    if (inner && typeof inner === "object") return Object.fromEntries(Object.entries(inner).map(([k, v]) => [k, walk(v)]));
    return inner;
  };
  return walk(value) as T;
}

/** Fills `{{name}}` placeholders in a request's path, headers and body. Throws on an unknown name. */
export function fillRequest(request: BenchRequest, variables: BenchVariables): BenchRequest {
  return fillPlaceholders(request, variables);
}
