/**
 * The provider B simulator over real HTTP (providers.md, "Provider B" and the simulators' control
 * surface): accounts and key headers, checkout invoices in sandbox and live, the hosted page's buttons,
 * IPNs in the provider's form encoding, and our PERMIT protocol. Only 127.0.0.1 is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import { createSimulatorApp, simulatorMountPath } from "../../../src/providers/simulators.ts";
import { createProviderBSimulator, type ProviderBSimulator } from "../../../src/providers/providerB/simulator/mod.ts";
import { waitUntil } from "../../support/wait.ts";
import type { Json } from "../../support/json.ts";

interface Keys {
  masterKey: string;
  privateKey: string;
  publicKey: string;
  token: string;
}

interface ReceivedIpn {
  path: string;
  contentType: string;
  raw: string;
  fields: Record<string, string>;
}

/** A merchant's IPN endpoint on 127.0.0.1; `failFirst` paths answer 500 to their first request. */
function startIpnReceiver() {
  const received: ReceivedIpn[] = [];
  const failFirst = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const raw = await request.text();
      received.push({ path, contentType: request.headers.get("content-type") ?? "", raw, fields: Object.fromEntries(new URLSearchParams(raw)) });
      if (failFirst.delete(path)) return new Response("down", { status: 500 });
      return new Response("ok");
    },
  });
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  return { server, received, failFirst, url, at: (path: string) => received.filter((ipn) => ipn.path === path) };
}

const sha512 = (text: string) => createHash("sha512").update(text).digest("hex");

let simulator: ProviderBSimulator;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let receiver: ReturnType<typeof startIpnReceiver>;
let merchant: Keys;
let other: Keys;

const keyHeaders = (keys: Keys): Record<string, string> => ({
  "PAYDUNYA-MASTER-KEY": keys.masterKey,
  "PAYDUNYA-PRIVATE-KEY": keys.privateKey,
  "PAYDUNYA-PUBLIC-KEY": keys.publicKey,
  "PAYDUNYA-TOKEN": keys.token,
  "content-type": "application/json",
});

const API = { test: "/sandbox-api/v1", live: "/api/v1" } as const;

async function call(method: string, path: string, body?: unknown, keys: Keys = merchant, root = base) {
  const response = await fetch(`${root}${path}`, { method, headers: keyHeaders(keys), body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Json };
}

async function createAccount(root = base): Promise<Keys> {
  const response = await fetch(`${root}/_sim/accounts`, { method: "POST" });
  expect(response.status).toBe(201);
  return (await response.json()) as Keys;
}

function invoiceBody(ipnPath: string, extra: Json = {}): Json {
  return {
    invoice: {
      total_amount: 5000,
      description: "Abonnement mensuel",
      customer: { name: "Moussa Ndiaye", email: "moussa@example.com", phone: "770000001" },
      items: { item_0: { name: "Abonnement", quantity: 1, unit_price: 5000, total_price: 5000 } },
    },
    store: { name: "Boutique Teranga" },
    custom_data: { payment_id: "pay_01TEST", plan: "gold" },
    actions: { return_url: "https://shop.example/return", cancel_url: "https://shop.example/cancel", callback_url: receiver.url(ipnPath) },
    ...extra,
  };
}

async function createInvoice(ipnPath: string, mode: "test" | "live" = "test"): Promise<{ token: string; pageUrl: string }> {
  const { status, body } = await call("POST", `${API[mode]}/checkout-invoice/create`, invoiceBody(ipnPath));
  expect(status).toBe(200);
  expect(body.response_code).toBe("00");
  return { token: body.token, pageUrl: body.response_text };
}

/** The page's form buttons, as `{ Pay: "<absolute action URL>", … }`. */
async function buttonsOf(pageUrl: string): Promise<Record<string, string>> {
  const response = await fetch(pageUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/html");
  const html = await response.text();
  const buttons: Record<string, string> = {};
  for (const match of html.matchAll(/<button[^>]*formaction="([^"]+)"[^>]*>([^<]+)<\/button>/g))
    buttons[match[2]!] = new URL(match[1]!.replaceAll("&#38;", "&"), pageUrl).toString();
  return buttons;
}

/** What a browser sends when a button of a page's form is pressed. */
const postForm = (url: string, fields: Record<string, string> = { payment_method: "orange-money-senegal" }) =>
  fetch(url, { method: "POST", body: new URLSearchParams(fields), redirect: "manual", headers: { accept: "text/html,application/xhtml+xml" } });

beforeAll(async () => {
  receiver = startIpnReceiver();
  simulator = createProviderBSimulator({ ipnRetryDelaysMs: [50, 100, 200], ipnAttemptTimeoutMs: 2_000 });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  base = `http://127.0.0.1:${server.port}`;
  merchant = await createAccount();
  other = await createAccount();
});

afterAll(async () => {
  simulator.close();
  await server.stop(true);
  await receiver.server.stop(true);
});

describe("POST /_sim/accounts", () => {
  it("creates a test merchant account with keys shaped like the provider's", async () => {
    expect(merchant.masterKey).toMatch(/^[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}$/);
    expect(merchant.privateKey).toStartWith("test_private_");
    expect(merchant.publicKey).toStartWith("test_public_");
    expect(merchant.token).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(other.masterKey).not.toBe(merchant.masterKey);
  });

  it("is what createSimulatorApp('providerB') serves, beside its liveness route", async () => {
    const app = createSimulatorApp("providerB");
    try {
      const health = await app.handle(new Request("http://localhost/_sim/health"));
      expect(await health.json()).toEqual({ status: "ok", simulator: "providerB" });
      const account = await app.handle(new Request("http://localhost/_sim/accounts", { method: "POST" }));
      expect(account.status).toBe(201);
    } finally {
      app.close();
    }
  });
});

describe("key headers", () => {
  it("refuse an unknown master key with the provider's answer", async () => {
    const { status, body } = await call("POST", `${API.test}/checkout-invoice/create`, invoiceBody("/ipn/none"), { ...merchant, masterKey: "nope" });
    expect(status).toBe(401);
    expect(body).toEqual({ response_code: "1001", response_text: "Invalid Masterkey Specified" });
  });

  it("refuse another account's private key, token or public key", async () => {
    for (const [wrong, text] of [
      [{ privateKey: other.privateKey }, "Invalid Private Key Specified"],
      [{ token: other.token }, "Invalid Token Specified"],
      [{ publicKey: other.publicKey }, "Invalid Public Key Specified"],
    ] as const) {
      const { status, body } = await call("GET", `${API.live}/checkout-invoice/confirm/whatever`, undefined, { ...merchant, ...wrong });
      expect(status).toBe(401);
      expect(body.response_code).toBe("1001");
      expect(body.response_text).toBe(text);
    }
  });

  it("refuse a call without keys", async () => {
    const response = await fetch(`${base}${API.test}/permit/confirm/x`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as Json).response_code).toBe("1001");
  });

  it("accept a call without the optional public key", async () => {
    const headers = keyHeaders(merchant);
    delete headers["PAYDUNYA-PUBLIC-KEY"];
    const response = await fetch(`${base}${API.test}/checkout-invoice/create`, { method: "POST", headers, body: JSON.stringify(invoiceBody("/ipn/none")) });
    expect(((await response.json()) as Json).response_code).toBe("00");
  });
});

describe("POST …/checkout-invoice/create", () => {
  it("answers the sandbox checkout page URL and the token on the sandbox path", async () => {
    const { status, body } = await call("POST", `${API.test}/checkout-invoice/create`, invoiceBody("/ipn/none"));
    expect(status).toBe(200);
    expect(body.response_code).toBe("00");
    expect(body.description).toBe("Checkout Invoice Created");
    expect(body.token).toStartWith("test_");
    expect(body.response_text).toBe(`${base}/sandbox-checkout/invoice/${body.token}`);
  });

  it("answers the live checkout page URL on the live path", async () => {
    const { body } = await call("POST", `${API.live}/checkout-invoice/create`, invoiceBody("/ipn/none"));
    expect(body.response_code).toBe("00");
    expect(body.token).not.toStartWith("test_");
    expect(body.response_text).toBe(`${base}/checkout/invoice/${body.token}`);
  });

  it("needs only invoice.total_amount and store.name, and takes the amount as a numeric string", async () => {
    const { body } = await call("POST", `${API.test}/checkout-invoice/create`, { invoice: { total_amount: "1500" }, store: { name: "S" } });
    expect(body.response_code).toBe("00");
    const confirmed = await call("GET", `${API.test}/checkout-invoice/confirm/${body.token}`);
    expect(confirmed.body.invoice.total_amount).toBe("1500");
  });

  it("refuses a missing or malformed field with a clear response_text", async () => {
    const cases: [unknown, string][] = [
      [{ store: { name: "S" } }, "Invalid request: invoice is required"],
      [{ invoice: { description: "x" }, store: { name: "S" } }, "Invalid request: invoice.total_amount is required"],
      [{ invoice: { total_amount: -5 }, store: { name: "S" } }, "Invalid request: invoice.total_amount must be greater than 0"],
      [{ invoice: { total_amount: 100 } }, "Invalid request: store is required"],
      [{ invoice: { total_amount: 100 }, store: { name: "  " } }, "Invalid request: store.name is required"],
      [
        { invoice: { total_amount: 100, items: [{ name: "a" }] }, store: { name: "S" } },
        "Invalid request: invoice.items must be an object keyed item_0, item_1, … (not an array)",
      ],
      [
        { invoice: { total_amount: 100 }, store: { name: "S" }, actions: { callback_url: "ftp://x" } },
        "Invalid request: actions.callback_url must be an http(s) URL",
      ],
    ];
    for (const [body, text] of cases) {
      const answer = await call("POST", `${API.test}/checkout-invoice/create`, body);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ response_code: "1002", response_text: text });
    }
    const response = await fetch(`${base}${API.test}/checkout-invoice/create`, { method: "POST", headers: keyHeaders(merchant), body: "{not json" });
    expect(response.status).toBe(422);
    expect(((await response.json()) as Json).response_code).toBe("1002");
  });

  it("gives page URLs under the mount prefix when mounted, or under publicBaseUrl when given", async () => {
    const mounted = createSimulatorApp("providerB", { basePath: simulatorMountPath("providerB") });
    const publicOne = createProviderBSimulator({ publicBaseUrl: "https://pay.example/sandbox/providerB/" });
    const gateway = new Elysia().mount(simulatorMountPath("providerB"), mounted.fetch);
    const gatewayServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: gateway.fetch });
    const publicServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: publicOne.fetch });
    try {
      const root = `http://127.0.0.1:${gatewayServer.port}/sandbox/providerB`;
      const keys = await createAccount(root);
      const { body } = await call("POST", `${API.test}/checkout-invoice/create`, invoiceBody("/ipn/none"), keys, root);
      expect(body.response_text).toBe(`${root}/sandbox-checkout/invoice/${body.token}`);
      const buttons = await buttonsOf(body.response_text);
      expect(buttons.Pay).toBe(`${root}/_sim/invoices/${body.token}/pay`);
      const paid = await fetch(buttons.Pay!, { method: "POST" });
      expect(((await paid.json()) as Json).status).toBe("completed");

      const publicRoot = `http://127.0.0.1:${publicServer.port}`;
      const publicKeys = await createAccount(publicRoot);
      const created = await call("POST", `${API.live}/checkout-invoice/create`, invoiceBody("/ipn/none"), publicKeys, publicRoot);
      expect(created.body.response_text).toBe(`https://pay.example/sandbox/providerB/checkout/invoice/${created.body.token}`);
    } finally {
      mounted.close();
      publicOne.close();
      await gatewayServer.stop(true);
      await publicServer.stop(true);
    }
  });
});

describe("GET …/checkout-invoice/confirm/{token}", () => {
  it("answers a pending invoice with the provider's fields, the amount as a string", async () => {
    const { token } = await createInvoice("/ipn/none");
    const { status, body } = await call("GET", `${API.test}/checkout-invoice/confirm/${token}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      response_code: "00",
      hash: sha512(merchant.masterKey),
      invoice: { token, total_amount: "5000", description: "Abonnement mensuel" },
      custom_data: { payment_id: "pay_01TEST", plan: "gold" },
      actions: { return_url: "https://shop.example/return", cancel_url: "https://shop.example/cancel", callback_url: receiver.url("/ipn/none") },
      mode: "test",
      status: "pending",
      fail_reason: null,
      customer: { name: "Moussa Ndiaye", phone: "770000001", email: "moussa@example.com", payment_method: null },
      receipt_url: null,
    });
    expect(typeof body.response_text).toBe("string");
  });

  it("says mode live for an invoice made on the live path", async () => {
    const { token } = await createInvoice("/ipn/none", "live");
    const { body } = await call("GET", `${API.live}/checkout-invoice/confirm/${token}`);
    expect(body.mode).toBe("live");
  });

  it("does not find an unknown token, another account's invoice, or one of the other mode", async () => {
    const { token } = await createInvoice("/ipn/none");
    for (const [keys, path] of [
      [merchant, `${API.test}/checkout-invoice/confirm/test_unknown`],
      [other, `${API.test}/checkout-invoice/confirm/${token}`],
      [merchant, `${API.live}/checkout-invoice/confirm/${token}`],
    ] as const) {
      const { status, body } = await call("GET", path, undefined, keys);
      expect(status).toBe(404);
      expect(body).toEqual({ response_code: "1003", response_text: "Invoice Not Found" });
    }
  });
});

describe("hosted checkout page", () => {
  it("shows the store, amount and description with Pay, Fail and Cancel buttons", async () => {
    const { pageUrl } = await createInvoice("/ipn/none");
    const html = await (await fetch(pageUrl)).text();
    expect(html).toContain("Boutique Teranga");
    expect(html).toContain("5 000 FCFA");
    expect(html).toContain("Abonnement mensuel");
    expect(Object.keys(await buttonsOf(pageUrl)).sort()).toEqual(["Cancel", "Fail", "Pay"]);
  });

  it("serves live invoices under /checkout and sandbox ones only under /sandbox-checkout", async () => {
    const live = await createInvoice("/ipn/none", "live");
    expect(Object.keys(await buttonsOf(live.pageUrl))).toHaveLength(3);
    const sandbox = await createInvoice("/ipn/none");
    expect((await fetch(`${base}/checkout/invoice/${sandbox.token}`)).status).toBe(404);
    expect((await fetch(`${base}/sandbox-checkout/invoice/test_nothing`)).status).toBe(404);
  });

  it("Pay completes the invoice, redirects to the return URL and sends the IPN form-encoded with bracket keys", async () => {
    const { token, pageUrl } = await createInvoice("/ipn/pay");
    const buttons = await buttonsOf(pageUrl);
    const answer = await postForm(buttons.Pay!, {
      customer_name: "Fatou Sow",
      customer_phone: "781112233",
      customer_email: "",
      payment_method: "wave-senegal",
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`https://shop.example/return?token=${token}`);

    const ipn = await waitUntil(() => receiver.at("/ipn/pay")[0], { what: "the IPN" });
    expect(ipn.contentType).toBe("application/x-www-form-urlencoded");
    expect(ipn.raw).toContain("data%5Binvoice%5D%5Btoken%5D=");
    expect(ipn.fields).toMatchObject({
      "data[response_code]": "00",
      "data[hash]": sha512(merchant.masterKey),
      "data[invoice][token]": token,
      "data[invoice][total_amount]": "5000",
      "data[invoice][description]": "Abonnement mensuel",
      "data[invoice][items][item_0][name]": "Abonnement",
      "data[status]": "completed",
      "data[mode]": "test",
      "data[custom_data][payment_id]": "pay_01TEST",
      "data[custom_data][plan]": "gold",
      "data[customer][name]": "Fatou Sow",
      "data[customer][phone]": "781112233",
      "data[customer][email]": "moussa@example.com",
      "data[customer][payment_method]": "wave-senegal",
      "data[actions][callback_url]": receiver.url("/ipn/pay"),
      "data[receipt_url]": `${base}/sandbox-checkout/receipt/${token}`,
    });
    expect(ipn.fields["data[receipt_identifier]"]).toBeTruthy();
    expect(ipn.fields["data[provider_reference]"]).toBeTruthy();
    expect("data[fail_reason]" in ipn.fields).toBe(false);

    const { body } = await call("GET", `${API.test}/checkout-invoice/confirm/${token}`);
    expect(body.status).toBe("completed");
    expect(body.customer.payment_method).toBe("wave-senegal");
    expect(body.receipt_identifier).toBe(ipn.fields["data[receipt_identifier]"]);
    const receipt = await fetch(body.receipt_url);
    expect(receipt.status).toBe(200);
    expect(await receipt.text()).toContain("wave-senegal");

    const again = await fetch(pageUrl).then((r) => r.text());
    expect(again).not.toContain("<button");
  });

  it("retries the IPN when the receiver first answers 500, and stops once it answers 200", async () => {
    receiver.failFirst.add("/ipn/flaky");
    const { token } = await createInvoice("/ipn/flaky");
    const paid = await fetch(`${base}/_sim/invoices/${token}/pay`, { method: "POST" });
    expect(await paid.json()).toEqual({ token, status: "completed", fail_reason: null });
    await waitUntil(() => receiver.at("/ipn/flaky").length >= 2, { what: "the retried IPN" });
    const [first, second] = receiver.at("/ipn/flaky");
    expect(second!.raw).toBe(first!.raw);
    await Bun.sleep(400);
    expect(receiver.at("/ipn/flaky")).toHaveLength(2);
    const log = (await (await fetch(`${base}/_sim/ipns`)).json()) as { deliveries: Json[] };
    expect(log.deliveries.find((delivery) => delivery.token === token)).toMatchObject({ attempts: 2, delivered: true, lastHttpStatus: 200 });
  });

  it("sends a kept IPN again on POST /_sim/ipns/{id}/resend (a duplicate), and lists every invoice on GET /_sim/invoices", async () => {
    const { token } = await createInvoice("/ipn/twice");
    await fetch(`${base}/_sim/invoices/${token}/pay`, { method: "POST" });
    await waitUntil(() => receiver.at("/ipn/twice").length >= 1, { what: "the IPN" });
    const log = (await (await fetch(`${base}/_sim/ipns`)).json()) as { deliveries: Json[] };
    const original = log.deliveries.find((delivery) => delivery.token === token)!;
    const resent = await fetch(`${base}/_sim/ipns/${original.id}/resend`, { method: "POST" });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toMatchObject({ token, status: "completed", resendOf: original.id });
    await waitUntil(() => receiver.at("/ipn/twice").length >= 2, { what: "the resent IPN" });
    const [first, second] = receiver.at("/ipn/twice");
    expect(second!.raw).toBe(first!.raw);
    expect((await fetch(`${base}/_sim/ipns/999999/resend`, { method: "POST" })).status).toBe(404);

    const { invoices } = (await (await fetch(`${base}/_sim/invoices`)).json()) as { invoices: Json[] };
    expect(invoices.find((invoice) => invoice.token === token)).toMatchObject({ token, status: "completed", mode: "test", permit_token: null });
  });

  it("gives up after a bounded number of attempts, and never holds the button's answer", async () => {
    const dead = createProviderBSimulator({ ipnRetryDelaysMs: [20, 20], fetch: (async () => new Response("no", { status: 503 })) as unknown as typeof fetch });
    const deadServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: dead.fetch });
    try {
      const root = `http://127.0.0.1:${deadServer.port}`;
      const keys = await createAccount(root);
      const created = await call("POST", `${API.test}/checkout-invoice/create`, invoiceBody("/ipn/dead"), keys, root);
      const started = performance.now();
      expect((await fetch(`${root}/_sim/invoices/${created.body.token}/pay`, { method: "POST" })).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1_000);
      const last = await waitUntil(
        async () => {
          const delivery = ((await (await fetch(`${root}/_sim/ipns`)).json()) as { deliveries: Json[] }).deliveries[0];
          return delivery?.gaveUp ? delivery : undefined;
        },
        { what: "the simulator to give up on the IPN", intervalMs: 10 },
      );
      expect(last).toMatchObject({ token: created.body.token, attempts: 3, delivered: false, gaveUp: true, lastHttpStatus: 503 });
    } finally {
      dead.close();
      await deadServer.stop(true);
    }
  });

  it("Fail marks the invoice failed with a reason and sends the IPN; the customer may still pay", async () => {
    const { token, pageUrl } = await createInvoice("/ipn/fail");
    const buttons = await buttonsOf(pageUrl);
    const answer = await postForm(buttons.Fail!);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Payment failed");
    const ipn = await waitUntil(() => receiver.at("/ipn/fail")[0], { what: "the failure IPN" });
    expect(ipn.fields["data[status]"]).toBe("failed");
    expect(ipn.fields["data[fail_reason]"]).toBe("insufficient_funds");
    expect((await call("GET", `${API.test}/checkout-invoice/confirm/${token}`)).body).toMatchObject({ status: "failed", fail_reason: "insufficient_funds" });

    expect(Object.keys(await buttonsOf(pageUrl))).toContain("Pay");
    expect((await postForm(buttons.Pay!)).status).toBe(303);
    expect((await call("GET", `${API.test}/checkout-invoice/confirm/${token}`)).body).toMatchObject({ status: "completed", fail_reason: null });
  });

  it("Cancel marks the invoice cancelled, redirects to the cancel URL and sends the IPN; a completed invoice stays so", async () => {
    const { token, pageUrl } = await createInvoice("/ipn/cancel");
    const buttons = await buttonsOf(pageUrl);
    const answer = await postForm(buttons.Cancel!);
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`https://shop.example/cancel?token=${token}`);
    const ipn = await waitUntil(() => receiver.at("/ipn/cancel")[0], { what: "the cancel IPN" });
    expect(ipn.fields["data[status]"]).toBe("cancelled");
    expect((await call("GET", `${API.test}/checkout-invoice/confirm/${token}`)).body.status).toBe("cancelled");

    await fetch(`${base}/_sim/invoices/${token}/pay`, {
      method: "POST",
      body: JSON.stringify({ payment_method: "card" }),
      headers: { "content-type": "application/json" },
    });
    const refused = await fetch(`${base}/_sim/invoices/${token}/cancel`, { method: "POST" });
    expect(refused.status).toBe(409);
    expect((await call("GET", `${API.test}/checkout-invoice/confirm/${token}`)).body).toMatchObject({
      status: "completed",
      customer: { payment_method: "card" },
    });
    expect((await fetch(`${base}/_sim/invoices/test_unknown/pay`, { method: "POST" })).status).toBe(404);
  });
});

describe("PERMIT", () => {
  function permitBody(ipnPath: string, extra: Json = {}): Json {
    return {
      customer: { name: "Aminata Fall", email: "aminata@example.com", phone: "770000002" },
      description: "Abonnement Gold, renouvelé chaque mois",
      max_amount: 100_000,
      custom_data: { permit_id: "prm_01TEST" },
      actions: { return_url: "https://shop.example/permit/ok", cancel_url: "https://shop.example/permit/no", callback_url: receiver.url(ipnPath) },
      ...extra,
    };
  }

  async function createPermit(ipnPath: string, extra: Json = {}): Promise<{ token: string; pageUrl: string }> {
    const { status, body } = await call("POST", `${API.test}/permit/create`, permitBody(ipnPath, extra));
    expect(status).toBe(200);
    expect(body.response_code).toBe("00");
    return { token: body.token, pageUrl: body.response_text };
  }

  async function activePermit(ipnPath: string, extra: Json = {}): Promise<string> {
    const { token } = await createPermit(ipnPath, extra);
    const authorised = await fetch(`${base}/_sim/permits/${token}/authorize`, { method: "POST" });
    expect(((await authorised.json()) as Json).status).toBe("active");
    return token;
  }

  const charge = (body: Json, keys: Keys = merchant) => call("POST", `${API.test}/permit/charge`, body, keys);

  it("create answers the authorisation page URL and a token; confirm says pending", async () => {
    const { token, pageUrl } = await createPermit("/ipn/permit-none");
    expect(pageUrl).toBe(`${base}/permit/authorize/${token}`);
    const { body } = await call("GET", `${API.test}/permit/confirm/${token}`);
    expect(body).toMatchObject({
      response_code: "00",
      status: "pending",
      max_amount: 100_000,
      hash: sha512(merchant.masterKey),
      customer: { name: "Aminata Fall", phone: "770000002", email: "aminata@example.com" },
      permit: { token },
      custom_data: { permit_id: "prm_01TEST" },
      mode: "test",
    });
    expect((await call("GET", `${API.test}/permit/confirm/${token}`, undefined, other)).status).toBe(404);
    expect((await call("GET", `${API.live}/permit/confirm/${token}`)).body.response_code).toBe("1003");
  });

  it("create refuses a missing customer phone or description", async () => {
    const noPhone = await call("POST", `${API.test}/permit/create`, permitBody("/x", { customer: { name: "A" } }));
    expect(noPhone).toEqual({ status: 422, body: { response_code: "1002", response_text: "Invalid request: customer.phone is required" } });
    const noDescription = await call("POST", `${API.test}/permit/create`, permitBody("/x", { description: undefined }));
    expect(noDescription.body.response_text).toBe("Invalid request: description is required");
  });

  it("the page's Authorise activates the permit, returns to the merchant and sends the permit IPN", async () => {
    const { token, pageUrl } = await createPermit("/ipn/permit-authorise");
    const buttons = await buttonsOf(pageUrl);
    expect(Object.keys(buttons).sort()).toEqual(["Authorise", "Decline"]);
    const answer = await postForm(buttons.Authorise!, { payment_method: "free-money-senegal" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`https://shop.example/permit/ok?token=${token}`);

    const ipn = await waitUntil(() => receiver.at("/ipn/permit-authorise")[0], { what: "the permit IPN" });
    expect(ipn.contentType).toBe("application/x-www-form-urlencoded");
    expect(ipn.fields).toMatchObject({
      "data[response_code]": "00",
      "data[hash]": sha512(merchant.masterKey),
      "data[permit][token]": token,
      "data[status]": "active",
      "data[mode]": "test",
      "data[max_amount]": "100000",
      "data[customer][name]": "Aminata Fall",
      "data[customer][payment_method]": "free-money-senegal",
      "data[custom_data][permit_id]": "prm_01TEST",
    });
    expect("data[invoice][token]" in ipn.fields).toBe(false);
    expect((await call("GET", `${API.test}/permit/confirm/${token}`)).body.status).toBe("active");
    expect(await (await fetch(pageUrl)).text()).not.toContain("<button");
  });

  it("the page's Decline declines the permit, returns to the cancel URL and sends the IPN", async () => {
    const { token, pageUrl } = await createPermit("/ipn/permit-decline");
    const answer = await postForm((await buttonsOf(pageUrl)).Decline!);
    expect(answer.headers.get("location")).toBe(`https://shop.example/permit/no?token=${token}`);
    const ipn = await waitUntil(() => receiver.at("/ipn/permit-decline")[0], { what: "the decline IPN" });
    expect(ipn.fields["data[status]"]).toBe("declined");
    expect((await call("GET", `${API.test}/permit/confirm/${token}`)).body.status).toBe("declined");
    expect((await fetch(`${base}/_sim/permits/${token}/authorize`, { method: "POST" })).status).toBe(409);
  });

  it("charges up to 50 000 complete at once and send a checkout-like IPN carrying the permit token", async () => {
    const permit = await activePermit("/ipn/permit-charge");
    const { status, body } = await charge({
      permit_token: permit,
      amount: 50_000,
      description: "Mars",
      custom_data: { charge_id: "chg_01" },
      idempotency_key: "chg_01",
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ response_code: "00", status: "completed", fail_reason: null, permit_token: permit, amount: 50_000 });
    expect(body.invoice_token).toStartWith("test_");

    const ipn = await waitUntil(() => receiver.at("/ipn/permit-charge").find((i) => i.fields["data[invoice][token]"] === body.invoice_token), {
      what: "the charge IPN",
    });
    expect(ipn.fields).toMatchObject({
      "data[hash]": sha512(merchant.masterKey),
      "data[status]": "completed",
      "data[permit_token]": permit,
      "data[invoice][total_amount]": "50000",
      "data[invoice][description]": "Mars",
      "data[custom_data][charge_id]": "chg_01",
      "data[customer][name]": "Aminata Fall",
      "data[customer][payment_method]": "orange-money-senegal",
    });
    expect("data[permit][token]" in ipn.fields).toBe(false);
    const confirmed = await call("GET", `${API.test}/checkout-invoice/confirm/${body.invoice_token}`);
    expect(confirmed.body).toMatchObject({ status: "completed", permit_token: permit, invoice: { total_amount: "50000" } });
  });

  it("a charge above 50 000 fails in the sandbox", async () => {
    const permit = await activePermit("/ipn/permit-big");
    const { body } = await charge({ permit_token: permit, amount: 50_001, idempotency_key: "big-1" });
    expect(body).toMatchObject({ response_code: "00", status: "failed", fail_reason: "amount_limit_exceeded" });
    const ipn = await waitUntil(() => receiver.at("/ipn/permit-big").find((i) => i.fields["data[invoice][token]"] === body.invoice_token), {
      what: "the failure IPN",
    });
    expect(ipn.fields["data[status]"]).toBe("failed");
    expect(ipn.fields["data[fail_reason]"]).toBe("amount_limit_exceeded");
  });

  it("fail-next makes the following charges fail with insufficient_funds, succeed-next brings them back", async () => {
    const permit = await activePermit("/ipn/permit-switch");
    expect(await (await fetch(`${base}/_sim/permits/${permit}/fail-next`, { method: "POST" })).json()).toEqual({ token: permit, charges: "fail" });
    for (const key of ["sw-1", "sw-2"]) {
      const { body } = await charge({ permit_token: permit, amount: 1_000, idempotency_key: key });
      expect(body).toMatchObject({ status: "failed", fail_reason: "insufficient_funds" });
    }
    await fetch(`${base}/_sim/permits/${permit}/succeed-next`, { method: "POST" });
    expect((await charge({ permit_token: permit, amount: 1_000, idempotency_key: "sw-3" })).body.status).toBe("completed");
  });

  it("pending-next leaves charges pending until their invoice is settled through /_sim", async () => {
    const permit = await activePermit("/ipn/permit-pending");
    await fetch(`${base}/_sim/permits/${permit}/pending-next`, { method: "POST" });
    const { body } = await charge({ permit_token: permit, amount: 2_000, idempotency_key: "pend-1" });
    expect(body).toMatchObject({ response_code: "00", status: "pending", fail_reason: null });
    expect((await call("GET", `${API.test}/checkout-invoice/confirm/${body.invoice_token}`)).body.status).toBe("pending");
    await fetch(`${base}/_sim/invoices/${body.invoice_token}/pay`, { method: "POST" });
    const ipn = await waitUntil(() => receiver.at("/ipn/permit-pending").find((i) => i.fields["data[invoice][token]"]), { what: "the settling IPN" });
    expect(ipn.fields).toMatchObject({ "data[invoice][token]": body.invoice_token, "data[status]": "completed", "data[permit_token]": permit });
  });

  it("the same idempotency_key never charges twice and answers the first result again", async () => {
    const permit = await activePermit("/ipn/permit-idem");
    const first = await charge({ permit_token: permit, amount: 3_000, idempotency_key: "idem-1" });
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => charge({ permit_token: permit, amount: 99_999, idempotency_key: "idem-1" })));
    for (const again of concurrent) expect(again).toEqual(first);
    await fetch(`${base}/_sim/permits/${permit}/fail-next`, { method: "POST" });
    expect((await charge({ permit_token: permit, amount: 3_000, idempotency_key: "idem-1" })).body).toEqual(first.body);
    await Bun.sleep(50);
    expect(receiver.at("/ipn/permit-idem").filter((i) => i.fields["data[invoice][token]"] !== undefined)).toHaveLength(1);
    // Keys are the account's own: another account's same key is another charge (and here another permit).
    expect((await charge({ permit_token: permit, amount: 3_000, idempotency_key: "idem-1" }, other)).status).toBe(404);
  });

  it("refuses a charge on a permit that is not active, unknown, or above max_amount", async () => {
    const pending = await createPermit("/ipn/permit-refusals");
    const notActive = await charge({ permit_token: pending.token, amount: 100, idempotency_key: "r-1" });
    expect(notActive).toEqual({ status: 409, body: { response_code: "1004", response_text: "Permit is not active (status: pending)" } });
    expect((await charge({ permit_token: "test_pmt_unknown", amount: 100 })).body).toEqual({ response_code: "1003", response_text: "Permit Not Found" });
    const active = await activePermit("/ipn/permit-refusals", { max_amount: 10_000 });
    const over = await charge({ permit_token: active, amount: 10_001 });
    expect(over).toEqual({ status: 422, body: { response_code: "1005", response_text: "Amount exceeds the permit's max_amount (10000)" } });
    expect((await charge({ permit_token: active, amount: "abc" })).body.response_text).toBe("Invalid request: amount must be a number");
    // A refusal is not remembered under its key: once active, the same key charges.
    await fetch(`${base}/_sim/permits/${pending.token}/authorize`, { method: "POST" });
    expect((await charge({ permit_token: pending.token, amount: 100, idempotency_key: "r-1" })).body.status).toBe("completed");
  });

  it("revoke ends the permit, sends the IPN, and later charges are refused", async () => {
    const permit = await activePermit("/ipn/permit-revoke");
    expect((await call("POST", `${API.test}/permit/revoke`, { permit_token: permit }, other)).status).toBe(404);
    const revoked = await call("POST", `${API.test}/permit/revoke`, { permit_token: permit });
    expect(revoked.body).toMatchObject({ response_code: "00", status: "revoked" });
    expect((await call("POST", `${API.test}/permit/revoke`, { permit_token: permit })).body.response_code).toBe("00");
    expect((await call("GET", `${API.test}/permit/confirm/${permit}`)).body.status).toBe("revoked");
    const ipn = await waitUntil(() => receiver.at("/ipn/permit-revoke").find((i) => i.fields["data[status]"] === "revoked"), { what: "the revoke IPN" });
    expect(ipn.fields["data[permit][token]"]).toBe(permit);
    const refused = await charge({ permit_token: permit, amount: 100 });
    expect(refused.body).toEqual({ response_code: "1004", response_text: "Permit is not active (status: revoked)" });
    expect((await call("POST", `${API.test}/permit/revoke`, {})).body.response_text).toBe("Invalid request: permit_token is required");
  });

  it("a permit can be made to expire through /_sim", async () => {
    const permit = await activePermit("/ipn/permit-expire");
    expect(await (await fetch(`${base}/_sim/permits/${permit}/expire`, { method: "POST" })).json()).toEqual({ token: permit, status: "expired" });
    expect((await call("GET", `${API.test}/permit/confirm/${permit}`)).body.status).toBe("expired");
    const ipn = await waitUntil(() => receiver.at("/ipn/permit-expire").find((i) => i.fields["data[status]"] === "expired"), { what: "the expiry IPN" });
    expect(ipn.fields["data[permit][token]"]).toBe(permit);
  });
});
