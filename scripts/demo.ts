#!/usr/bin/env bun
/**
 * `bun run demo`: against a gateway started with `bun run start` (development defaults, simulators on),
 * makes one payment of each kind through the public API, as a merchant would:
 *   1. an operator token creates a demo tenant, whose API key is exchanged for a bearer token;
 *   2. a direct payment of 500 FCFA (approved by the sandbox within seconds) is followed to `approved`;
 *   3. part of that payment is refunded to the phone that paid it (a payout through provider A), a payout
 *      is sent to another phone, and the tenant's balance shows what is left;
 *   4. provider B credentials from a sandbox account are stored and a hosted checkout is created: open
 *      its page, press Pay, and the checkout completes;
 *   5. a failover: MTN Benin's route list set to provider B first, the provider B simulator told to refuse its
 *      next call, and a `POST /payments` that provider A takes instead — its attempts printed.
 * It reads the same configuration as the server (so the same JWT secret) and talks to it over HTTP:
 * `DEMO_URL` is the gateway's base URL (default `http://localhost:$PORT`); `PORT`, `DATA_DIR` and `JWT_SECRET`
 * are the server's, read as `bun run start` reads them. It ends with the demo tenant's id and bearer token
 * and the follow-up calls that use them, ready to paste.
 */
import { loadConfig } from "../src/config.ts";
import { mintToken } from "../src/services/auth/tokens.ts";

const config = loadConfig(process.env);
const base = (process.env.DEMO_URL ?? `http://localhost:${config.port}`).replace(/\/$/, "");

async function call<T>(method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

const say = (text: string) => process.stdout.write(`${text}\n`);

try {
  await call("GET", "/health/ready", null);
} catch {
  say(`No gateway answers at ${base}. Start it first with: bun run start`);
  process.exit(1);
}

const admin = await mintToken(config.jwt, { sub: "demo-operator", role: "admin", ttlSeconds: 600 });
const created = await call<{ tenant: { id: string }; apiKey: { id: string; secret: string } }>("POST", "/tenants", admin, { name: "Demo shop" });
const { access_token: token } = await call<{ access_token: string }>("POST", "/auth/token", null, {
  grant_type: "client_credentials",
  client_id: created.apiKey.id,
  client_secret: created.apiKey.secret,
});
say(`1. Tenant ${created.tenant.id} created; its API key was exchanged for a sandbox bearer token.`);

const payment = await call<{ transactionId: number; paymentId: string; status: string }>("POST", "/providerA/direct-payment", token, {
  description: "Demo order",
  amount: 500,
  payment_method: "mnoA_open",
  phone_number: { number: "+22997000000", country: "bj" },
  firstname: "Awa",
  lastname: "Diallo",
  email: "awa@example.com",
});
say(`2. Direct payment ${payment.paymentId} (provider transaction ${payment.transactionId}) is ${payment.status}…`);
let status = payment.status;
for (let i = 0; i < 40 && status === "pending"; i++) {
  await Bun.sleep(250);
  status = (await call<{ status: string }>("GET", `/providerA/transaction/${payment.transactionId}/is-approved`, token)).status;
}
say(`   … and now ${status}.`);

/** Reads `path` until its `state` leaves `pending` (the sandbox sends amounts below 1000 within a second or two). */
async function settled(path: string): Promise<{ state: string; id: string; amount: number }> {
  let read = await call<{ state: string; id: string; amount: number }>("GET", path, token);
  for (let i = 0; i < 40 && read.state === "pending"; i++) {
    await Bun.sleep(250);
    read = await call("GET", path, token);
  }
  return read;
}

const refund = await call<{ id: string }>("POST", `/payments/${payment.paymentId}/refunds`, token, { amount: 200, reason: "One item out of stock" });
say(`3. Refund ${refund.id} of 200 FCFA to the phone that paid is ${(await settled(`/refunds/${refund.id}`)).state};`);
const payout = await call<{ id: string }>("POST", "/payouts", token, {
  amount: 200,
  description: "Delivery rider",
  recipient: { phone: { number: "+22996000001", country: "bj" }, operator: "mtn", firstname: "Kofi" },
});
say(`   payout ${payout.id} of 200 FCFA to +22996000001 is ${(await settled(`/payouts/${payout.id}`)).state};`);
const { balances } = await call<{ balances: { currency: string; available: number; pending: number }[] }>("GET", "/balance", token);
say(`   the balance now: ${balances.map((b) => `${b.available} ${b.currency} available, ${b.pending} pending`).join("; ")}.`);

const account = await call<{ masterKey: string; privateKey: string; publicKey: string; token: string }>("POST", "/sandbox/providerB/_sim/accounts", null, {});
await call("PUT", `/tenants/${created.tenant.id}/credentials/providerB`, token, { ...account, environment: "sandbox" });
const checkout = await call<{ response_text: string; token: string; paymentId: string }>(
  "POST",
  "/providerB/checkout",
  token,
  {
    amount: 5000,
    description: "Demo basket",
    returnUrl: "https://example.com/thanks",
    cancelUrl: "https://example.com/cart",
    customer: { name: "Awa Diallo", email: "awa@example.com", phone: "+221770000000" },
    customData: { orderRef: "demo-1" },
  },
  { "x-tenant-id": created.tenant.id },
);
say(`4. Checkout ${checkout.paymentId} created. Open ${checkout.response_text} and press Pay;`);
say(`   the checkout then shows as succeeded, and the events list payment.completed.`);

// 5. Failover: MTN Benin is served by both providers; provider B first for this tenant, told to refuse its next call.
await call("PUT", "/routing", token, { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
await call("POST", "/sandbox/providerB/_sim/softpay/next", null, { answer: "refuse" });
const routed = await call<{ id: string; provider: string; attempts: { attempt: number; provider: string; outcome: string; reason: string }[] }>(
  "POST",
  "/payments",
  token,
  { amount: 500, description: "Demo failover", operator: "mtn", customer: { phone: { number: "+22997000000", country: "bj" }, email: "awa@example.com" } },
);
say(`5. Payment ${routed.id} to an MTN Benin phone, provider B first (told to refuse), taken by ${routed.provider}:`);
for (const a of routed.attempts) say(`   attempt ${a.attempt}: ${a.provider} ${a.outcome} — ${a.reason}`);
say(`   it is ${(await settled(`/payments/${routed.id}`)).state}; provider B's refusal counts in GET /routing/stats.`);
say(`   API reference: ${base}/docs · provider A sandbox console: ${base}/sandbox/providerA/console`);
say("");
say("Follow-up calls as the demo tenant (its token lasts an hour; paste these lines in a shell):");
say(`export TENANT=${created.tenant.id}`);
say(`export TOKEN=${token}`);
for (const path of [
  `/payments/${checkout.paymentId}`,
  `/payments/${payment.paymentId}`,
  `/payments/${payment.paymentId}/refunds`,
  "/payouts",
  "/balance",
  "/events",
  "/auth/whoami",
])
  say(`curl -s ${base}${path} -H "authorization: Bearer $TOKEN"`);

// 6. A payment link, last: what a merchant sends a customer, who pays it from a phone on the pay page.
const link = await call<{ id: string; url: string; share: { whatsapp: { fr: { url: string } } } }>("POST", "/payment-links", token, {
  amount: 900,
  description: "Demo payment link",
  returnUrl: "https://example.com/thanks",
});
say("");
say(`6. Payment link ${link.id}: open it on a phone (390 px is enough), type an MTN Benin number such as 97 00 00 00`);
say("   (MTN is proposed from the number), press Payer: the sandbox approves it within seconds and shows the receipt.");
say("   A link of 3000 FCFA instead waits for the sandbox console: after RESCUE_AFTER (90 s) the stalled push offers, on the");
say("   same page, to try again or another wallet — one charge kept (docs/payment-links.md). The dashboard lists links: #/links.");
say(`   Share it on WhatsApp: ${link.share.whatsapp.fr.url}`);
say(`   ${link.url}`);
