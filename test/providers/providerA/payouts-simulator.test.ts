/**
 * The provider A simulator's payouts over real HTTP (providers-money-out.md, "A (FedaPay) payouts"): create
 * (a blank 500 without `mode`, a unique `merchant_reference`, the documented modes and the 1,000,000 XOF
 * limit), start (`{"payouts":[…]}` → `{"v1/payouts":[…]}`, pending ones only, at most 3 per number per
 * 24 h), the reads, the sandbox outcomes by amount with signed `payout.sent`/`payout.failed` webhooks,
 * balances per mode, and the console. Only 127.0.0.1 is used.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { verifyProviderASignature } from "../../../src/providers/providerA/mod.ts";
import { createProviderASimulator, type ProviderASimulatorOptions, SANDBOX_PAYOUT_FAILURE_CODE } from "../../../src/providers/providerA/simulator/mod.ts";
import type { Json } from "../../support/json.ts";
import { waitUntil } from "../../support/wait.ts";

interface Running {
  base: string;
  stop(): Promise<void>;
}

function startSimulator(options: ProviderASimulatorOptions = {}): Running {
  const simulator = createProviderASimulator({ approveDelayMs: 40, webhookRetryDelaysMs: [], ...options });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: simulator.fetch });
  return {
    base: server.url.toString().replace(/\/$/, ""),
    async stop() {
      simulator.close();
      await server.stop(true);
    },
  };
}

interface Received {
  signature: string;
  rawBody: string;
  body: Json;
}

function startReceiver() {
  const received: Received[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const rawBody = await request.text();
      received.push({ signature: request.headers.get("x-fedapay-signature") ?? "", rawBody, body: JSON.parse(rawBody) });
      return new Response("ok");
    },
  });
  return { url: server.url.toString(), received, stop: () => server.stop(true) };
}

interface Account {
  secretKey: string;
  webhookSecret: string;
}

async function newAccount(run: Running, webhookUrl?: string): Promise<Account> {
  const account = (await (await fetch(`${run.base}/_sim/accounts`, { method: "POST" })).json()) as Account;
  if (webhookUrl)
    await fetch(`${run.base}/_sim/accounts/${account.secretKey}/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: webhookUrl }),
    });
  return account;
}

let counter = 0;
const uniqueNumber = () => `+229970${String(++counter).padStart(5, "0")}`;

function api(run: Running, account: Account) {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> => {
    const response = await fetch(`${run.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.secretKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : null };
  };
  return {
    call,
    payoutBody: (extra: Json = {}): Json => ({
      amount: 500,
      currency: { iso: "XOF" },
      mode: "mtn_open",
      description: "Supplier",
      merchant_reference: `po_${crypto.randomUUID()}`,
      customer: { firstname: "Awa", lastname: "Dossou", phone_number: { number: uniqueNumber(), country: "bj" } },
      ...extra,
    }),
    async create(extra: Json = {}): Promise<Json> {
      const { status, body } = await call("POST", "/v1/payouts", this.payoutBody(extra));
      expect(status).toBe(200);
      return body["v1/payout"];
    },
    start: (items: Json[]) => call("PUT", "/v1/payouts/start", { payouts: items }),
    async read(id: number): Promise<Json> {
      return (await call("GET", `/v1/payouts/${id}`)).body["v1/payout"];
    },
    async until(id: number, status: string): Promise<Json> {
      return waitUntil(async () => ((await this.read(id)).status === status ? this.read(id) : undefined), { what: `payout ${id} ${status}` });
    },
  };
}

let run: Running;
let receiver: ReturnType<typeof startReceiver>;
let account: Account;
let a: ReturnType<typeof api>;

beforeAll(async () => {
  run = startSimulator();
  receiver = startReceiver();
  account = await newAccount(run, receiver.url);
  a = api(run, account);
});

afterAll(async () => {
  await run.stop();
  await receiver.stop();
});

describe("POST /v1/payouts", () => {
  it("records a pending payout and answers the v1/payout object", async () => {
    const body = a.payoutBody({ amount: 750, mode: "moov" });
    const { status, body: answer } = await a.call("POST", "/v1/payouts", body);
    expect(status).toBe(200);
    expect(answer["v1/payout"]).toMatchObject({
      klass: "v1/payout",
      status: "pending",
      mode: "moov",
      amount: 750,
      currency_id: 1,
      fees: 0,
      last_error_code: null,
      merchant_reference: body.merchant_reference,
      sent_at: null,
    });
    expect(answer["v1/payout"].id).toBeGreaterThan(0);
    expect(typeof answer["v1/payout"].reference).toBe("string");
  });

  it("answers a blank 500 when `mode` is missing, as the provider does", async () => {
    const { mode: _mode, ...withoutMode } = a.payoutBody();
    const { status, text } = await a.call("POST", "/v1/payouts", withoutMode);
    expect(status).toBe(500);
    expect(text).toBe("");
  });

  it("refuses a merchant_reference already used on the account with a validation error; another account may use it", async () => {
    const first = await a.create();
    const again = await a.call("POST", "/v1/payouts", a.payoutBody({ merchant_reference: first.merchant_reference }));
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ message: "Payout could not be created", errors: { merchant_reference: ["has already been taken"] } });
    const other = api(run, await newAccount(run));
    expect((await other.call("POST", "/v1/payouts", other.payoutBody({ merchant_reference: first.merchant_reference }))).status).toBe(200);
  });

  it("refuses a withdrawn mode, another currency and an amount above 1,000,000, listing the fields", async () => {
    const refused = await a.call("POST", "/v1/payouts", a.payoutBody({ mode: "moov_tg", currency: { iso: "GNF" }, amount: 1_000_001 }));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({
      amount: ["must be less than or equal to 1000000"],
      currency: ["is not supported"],
      mode: ["is not a valid mode"],
    });
    expect((await a.call("POST", "/v1/payouts", a.payoutBody({ amount: 1_000_000 }))).status).toBe(200);
  });

  it("refuses a call without the account's secret key", async () => {
    const response = await fetch(`${run.base}/v1/payouts`, { method: "POST", body: JSON.stringify(a.payoutBody()) });
    expect(response.status).toBe(401);
  });
});

describe("PUT /v1/payouts/start", () => {
  it('starts pending payouts and answers {"v1/payouts": […]}; starting one again is refused', async () => {
    const first = await a.create({ amount: 2_000 });
    const second = await a.create({ amount: 2_000 });
    const started = await a.start([{ id: first.id }, { id: second.id }]);
    expect(started.status).toBe(200);
    expect(started.body["v1/payouts"].map((p: Json) => [p.id, p.status])).toEqual([
      [first.id, "started"],
      [second.id, "started"],
    ]);
    const again = await a.start([{ id: first.id }]);
    expect(again.status).toBe(422);
    expect(again.body.message).toMatch(/only a pending payout can be started/);
  });

  it("starts none when one of the call's payouts cannot be started", async () => {
    const fresh = await a.create();
    const refused = await a.start([{ id: fresh.id }, { id: 999_999 }]);
    expect(refused.status).toBe(404);
    expect((await a.read(fresh.id)).status).toBe("pending");
  });

  it("does not start another account's payout (as absent as a missing one)", async () => {
    const other = api(run, await newAccount(run));
    const theirs = await other.create();
    expect((await a.start([{ id: theirs.id }])).status).toBe(404);
    expect((await a.call("GET", `/v1/payouts/${theirs.id}`)).status).toBe(404);
  });

  it("refuses OpenAPI's bare array body (the SDKs' object is the real shape)", async () => {
    const fresh = await a.create();
    expect((await a.call("PUT", "/v1/payouts/start", [{ id: fresh.id }])).status).toBe(400);
  });

  it("sends to the start call's phone_number when given, and refuses one outside the mode's country", async () => {
    const fresh = await a.create();
    const abroad = await a.start([{ id: fresh.id, phone_number: { number: "+22890000001", country: "tg" } }]);
    expect(abroad.status).toBe(422);
    expect(abroad.body.errors).toEqual({ phone_number: ["country tg is not served by mode mtn_open"] });
    const number = uniqueNumber();
    const started = await a.start([{ id: fresh.id, phone_number: { number, country: "bj" } }]);
    expect(started.body["v1/payouts"][0].phone_number).toEqual({ number, country: "bj" });
  });

  it("holds a payout scheduled for later until its scheduled_at (`Y-m-d H:i:s`, UTC)", async () => {
    const fresh = await a.create();
    const at = new Date(Date.now() + 1_500);
    const text = at.toISOString().slice(0, 19).replace("T", " ");
    const started = await a.start([{ id: fresh.id, scheduled_at: text }]);
    expect(started.body["v1/payouts"][0].status).toBe("scheduled");
    await Bun.sleep(300);
    expect((await a.read(fresh.id)).status).toBe("scheduled");
    await a.until(fresh.id, "sent");
  });
});

describe("payout sandbox outcomes and webhooks", () => {
  it("sends a payout below 1000, with a signed payout.sent webhook carrying the payout", async () => {
    const payout = await a.create({ amount: 999 });
    await a.start([{ id: payout.id }]);
    const sent = await a.until(payout.id, "sent");
    expect(sent.sent_at).not.toBeNull();
    const hook = await waitUntil(() => receiver.received.find((r) => r.body.name === "payout.sent" && r.body.entity.id === payout.id), {
      what: "payout.sent",
    });
    expect(hook.body).toMatchObject({ klass: "v1/event", object: "payout", entity: { merchant_reference: payout.merchant_reference, status: "sent" } });
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(verifyProviderASignature({ header: hook.signature, rawBody: Buffer.from(hook.rawBody), secrets: [account.webhookSecret], nowSeconds })).toBe(true);
  });

  it("fails a payout above 5000 with its error code and a payout.failed webhook", async () => {
    const payout = await a.create({ amount: 5_001 });
    await a.start([{ id: payout.id }]);
    const failed = await a.until(payout.id, "failed");
    expect(failed.last_error_code).toBe(SANDBOX_PAYOUT_FAILURE_CODE);
    await waitUntil(() => receiver.received.find((r) => r.body.name === "payout.failed" && r.body.entity.id === payout.id), { what: "payout.failed" });
  });

  it("keeps a payout of 1000 to 5000 processing until the console ends it; an ended payout cannot be ended again", async () => {
    const payout = await a.create({ amount: 1_000 });
    await a.start([{ id: payout.id }]);
    await a.until(payout.id, "processing");
    await Bun.sleep(150);
    expect((await a.read(payout.id)).status).toBe("processing");
    const sent = await fetch(`${run.base}/_sim/payouts/${payout.id}/send`, { method: "POST" });
    expect(((await sent.json()) as Json)["v1/payout"].status).toBe("sent");
    expect((await fetch(`${run.base}/_sim/payouts/${payout.id}/fail`, { method: "POST" })).status).toBe(409);
  });

  it("cannot end a payout that was never started", async () => {
    const payout = await a.create();
    expect((await fetch(`${run.base}/_sim/payouts/${payout.id}/send`, { method: "POST" })).status).toBe(409);
  });
});

describe("the per-number limit: 3 payouts per number per 24 h", () => {
  it("refuses the fourth start to one number, not counting failed payouts, and allows it again after 24 h", async () => {
    let now = Date.parse("2026-11-20T10:00:00Z");
    const own = startSimulator({ now: () => new Date(now) });
    try {
      const b = api(own, await newAccount(own));
      const phone = { number: "+22997123456", country: "bj" };
      const failing = await b.create({ amount: 9_000, customer: { phone_number: phone } });
      await b.start([{ id: failing.id }]);
      await b.until(failing.id, "failed");
      for (let i = 0; i < 3; i++) {
        const payout = await b.create({ customer: { phone_number: phone } });
        expect((await b.start([{ id: payout.id }])).status).toBe(200);
      }
      const fourth = await b.create({ customer: { phone_number: { number: "22997123456", country: "bj" } } });
      const refused = await b.start([{ id: fourth.id }]);
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual({ phone_number: ["has reached the limit of 3 payouts in 24 hours"] });
      expect((await b.start([{ id: fourth.id, phone_number: { number: "+22997123457", country: "bj" } }])).status).toBe(200);
      const fifth = await b.create({ customer: { phone_number: phone } });
      now += 24 * 3_600_000 + 1_000;
      expect((await b.start([{ id: fifth.id }])).status).toBe(200);
    } finally {
      await own.stop();
    }
  });
});

describe("reads", () => {
  it("finds a payout by merchant reference (404 when none) and lists only the account's payouts", async () => {
    const b = api(run, await newAccount(run));
    const payout = await b.create();
    const found = await b.call("GET", `/v1/payouts/merchant/${payout.merchant_reference}`);
    expect(found.body["v1/payout"].id).toBe(payout.id);
    const missing = await b.call("GET", "/v1/payouts/merchant/po_nothing");
    expect(missing.status).toBe(404);
    expect(typeof missing.body.message).toBe("string");
    const list = await b.call("GET", "/v1/payouts");
    expect(list.body["v1/payouts"].map((p: Json) => p.id)).toEqual([payout.id]);
    expect(list.body.meta.total_count).toBe(1);
  });
});

describe("GET /v1/balances", () => {
  it("keeps one balance per mode: approved payments and credits in, sent payouts and their fees out", async () => {
    const own = startSimulator({ payoutFeeRate: 0.01 });
    try {
      const b = api(own, await newAccount(own));
      const trx = (
        await b.call("POST", "/v1/transactions", {
          description: "in",
          amount: 800,
          currency: { iso: "XOF" },
          customer: { phone_number: { number: "+22997000001", country: "bj" } },
        })
      ).body["v1/transaction"];
      const { token } = (await b.call("POST", `/v1/transactions/${trx.id}/token`)).body;
      await b.call("POST", "/v1/moov", { token });
      const payout = await b.create({ amount: 600, mode: "moov" });
      expect(payout.fees).toBe(6);
      await b.start([{ id: payout.id }]);
      await b.until(payout.id, "sent");
      const balances = await waitUntil(
        async () => {
          const list = (await b.call("GET", "/v1/balances")).body["v1/balances"] as Json[];
          return list.find((x) => x.mode === "moov")?.amount === 800 - 606 ? list : undefined;
        },
        { what: "the moov balance" },
      );
      expect(balances).toEqual([expect.objectContaining({ klass: "v1/balance", mode: "moov", currency_id: 1, amount: 194 })]);
      const one = await b.call("GET", `/v1/balances/${balances[0]!.id}`);
      expect(one.body["v1/balance"].amount).toBe(194);
    } finally {
      await own.stop();
    }
  });

  it("is credited by hand through the control surface", async () => {
    const fresh = await newAccount(run);
    const credited = await fetch(`${run.base}/_sim/accounts/${fresh.secretKey}/balances`, {
      method: "POST",
      body: JSON.stringify({ mode: "togocel", amount: 25_000 }),
    });
    expect(((await credited.json()) as Json).balances).toEqual([{ mode: "togocel", currency: "XOF", amount: 25_000 }]);
    const list = (await api(run, fresh).call("GET", "/v1/balances")).body["v1/balances"];
    expect(list).toEqual([expect.objectContaining({ mode: "togocel", amount: 25_000 })]);
  });
});

describe("the sandbox console shows payouts", () => {
  it("lists a payout waiting with Send and Fail buttons, and a form post ends it and says so", async () => {
    const payout = await a.create({ amount: 3_000 });
    await a.start([{ id: payout.id }]);
    const page = await (await fetch(`${run.base}/console`)).text();
    expect(page).toContain("Sandbox rules for payouts");
    const row = page.slice(page.indexOf(`id="payout-${payout.id}"`), page.indexOf("</tr>", page.indexOf(`id="payout-${payout.id}"`)));
    expect(row).toContain(`action="_sim/payouts/${payout.id}/send"`);
    expect(row).toContain(`action="_sim/payouts/${payout.id}/fail"`);
    expect(row).toContain("3,000 XOF");
    const posted = await fetch(`${run.base}/_sim/payouts/${payout.id}/fail`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "action=fail",
      redirect: "manual",
    });
    expect(posted.status).toBe(303);
    const after = await (await fetch(new URL(posted.headers.get("location")!, `${run.base}/_sim/payouts/${payout.id}/fail`))).text();
    expect(after).toContain(`Payout ${payout.id} failed.`);
    expect(after).toMatch(new RegExp(`id="payout-${payout.id}"[^>]*data-status="failed"`));
  });
});
