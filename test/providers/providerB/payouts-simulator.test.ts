/**
 * The provider B simulator's disburse v2 API over real HTTP (providers-money-out.md, "B (PayDunya) disburse
 * v2"): key check, get-invoice's callback probe, submit once per disburse_id, check-status, check-balance,
 * the flat callback with its hash, the balances a payment credits, the console of payouts and the
 * lost-submit fault. Only 127.0.0.1 is contacted; no database.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import type { SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { disbursementsUnder, loseNextSubmit, startCallbackReceiver, startPayoutSimulator } from "./payouts-rig.ts";

interface Keys {
  masterKey: string;
  privateKey: string;
  publicKey: string;
  token: string;
}

let sim: SimulatorServer;
let receiver: ReturnType<typeof startCallbackReceiver>;
let merchant: Keys;

beforeAll(async () => {
  sim = startPayoutSimulator(50);
  receiver = startCallbackReceiver();
  merchant = await sim.account();
});

afterAll(async () => {
  await sim?.stop();
  await receiver?.stop();
});

const headersOf = (keys: Keys) => ({
  "PAYDUNYA-MASTER-KEY": keys.masterKey,
  "PAYDUNYA-PRIVATE-KEY": keys.privateKey,
  "PAYDUNYA-TOKEN": keys.token,
  "content-type": "application/json",
});

async function disburse(method: "GET" | "POST", path: string, body?: unknown, keys: Keys = merchant) {
  const response = await fetch(`${sim.url}/api/v2/disburse/${path}`, {
    method,
    headers: headersOf(keys),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

let nextId = 0;
const invoiceBody = (extra: Record<string, unknown> = {}) => ({
  account_alias: "771234567",
  amount: 500,
  withdraw_mode: "orange-money-senegal",
  callback_url: `${receiver.url}/callback`,
  disburse_id: `po_sim_${++nextId}`,
  ...extra,
});

async function createdToken(extra: Record<string, unknown> = {}): Promise<{ token: string; disburseId: string }> {
  const body = invoiceBody(extra);
  const { status, body: answer } = await disburse("POST", "get-invoice", body);
  expect(status).toBe(200);
  expect(answer.response_code).toBe("00");
  return { token: answer.disburse_token as string, disburseId: body.disburse_id as string };
}

async function balanceOf(country: string): Promise<number> {
  const { body } = await disburse("GET", "check-balance");
  return Number.parseFloat(String(body[`Balance ${country}`]));
}

describe("POST /api/v2/disburse/get-invoice", () => {
  it("posts an empty body to the callback URL first, then answers a token of a created disbursement", async () => {
    const before = receiver.received.length;
    const { token } = await createdToken({ amount: "700" });
    expect(receiver.received[before]).toMatchObject({ path: "/callback", raw: "" });
    const { body } = await disburse("POST", "check-status", { disburse_invoice: token });
    expect(body).toMatchObject({ response_code: "00", status: "created", token, amount: "700.00", withdraw_mode: "orange-money-senegal" });
  });

  it("refuses with 4002, in an HTTP 200, when the callback URL does not answer 2xx", async () => {
    receiver.state.down = true;
    try {
      const { status, body } = await disburse("POST", "get-invoice", invoiceBody());
      expect(status).toBe(200);
      expect(body.response_code).toBe("4002");
    } finally {
      receiver.state.down = false;
    }
  });

  it("refuses wrong keys (1001), an unknown withdraw mode and an amount below 200 (1002), all in HTTP 200", async () => {
    const wrongKeys = await disburse("POST", "get-invoice", invoiceBody(), { ...merchant, privateKey: "test_private_nope" });
    expect(wrongKeys).toMatchObject({ status: 200, body: { response_code: "1001" } });
    expect((await disburse("POST", "get-invoice", invoiceBody({ withdraw_mode: "airtel-niger" }))).body.response_code).toBe("1002");
    expect((await disburse("POST", "get-invoice", invoiceBody({ amount: 199 }))).body.response_code).toBe("1002");
  });
});

describe("POST /api/v2/disburse/submit-invoice", () => {
  it("sends it once: a second submit, or another invoice under the same disburse_id, is refused 5000", async () => {
    const { token, disburseId } = await createdToken();
    const first = await disburse("POST", "submit-invoice", { disburse_invoice: token, disburse_id: disburseId });
    expect(first.body).toMatchObject({ response_code: "00", status: "pending" });
    expect(typeof first.body.transaction_id).toBe("string");
    expect((await disburse("POST", "submit-invoice", { disburse_invoice: token, disburse_id: disburseId })).body.response_code).toBe("5000");

    const { token: other } = await createdToken({ disburse_id: disburseId });
    expect((await disburse("POST", "submit-invoice", { disburse_invoice: other, disburse_id: disburseId })).body.response_code).toBe("5000");
    expect((await disbursementsUnder(sim, disburseId)).map((disbursement) => disbursement.submits)).toEqual([1, 0]);
  });

  it("sends the callback as provider B does: flat form fields with the SHA-512 of the master key", async () => {
    const { token, disburseId } = await createdToken({ amount: 600 });
    await disburse("POST", "submit-invoice", { disburse_invoice: token, disburse_id: disburseId });
    const callback = await waitUntil(() => receiver.received.find((received) => received.fields.token === token), { what: "the callback" });
    expect(callback.contentType).toStartWith("application/x-www-form-urlencoded");
    expect(callback.fields).toMatchObject({ status: "success", amount: "600.00", disburse_id: disburseId, withdraw_mode: "orange-money-senegal" });
    expect(callback.fields.hash).toBe(createHash("sha512").update(merchant.masterKey).digest("hex"));
    expect(callback.fields.transaction_id).toBeTruthy();
    expect(callback.fields.disburse_tx_id).toBeTruthy();
    expect(callback.fields.updated_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it("acts, then loses its answer when told to (a 502)", async () => {
    const { token, disburseId } = await createdToken();
    await loseNextSubmit(sim, { answer: "server_error" });
    const response = await fetch(`${sim.url}/api/v2/disburse/submit-invoice`, {
      method: "POST",
      headers: headersOf(merchant),
      body: JSON.stringify({ disburse_invoice: token, disburse_id: disburseId }),
    });
    expect(response.status).toBe(502);
    expect((await disburse("POST", "check-status", { disburse_invoice: token })).body.status).not.toBe("created");
  });
});

describe("balances", () => {
  it("answers one approximate balance per country, taken by a submit and given back by a failure", async () => {
    const { body } = await disburse("GET", "check-balance");
    expect(body.success).toBe(true);
    for (const country of ["SN", "CI", "BJ", "TG", "ML", "BF"]) expect(body[`Balance ${country}`]).toMatch(/^\d+\.00 XOF$/);

    const before = await balanceOf("SN");
    // An amount the console holds (1000–5000) stays pending until its Fail button: no timer races the reads.
    const { token, disburseId } = await createdToken({ amount: 3000 });
    await disburse("POST", "submit-invoice", { disburse_invoice: token, disburse_id: disburseId });
    expect(await balanceOf("SN")).toBe(before - 3000);
    expect((await fetch(`${sim.url}/_sim/disbursements/${token}/fail`, { method: "POST" })).status).toBe(200);
    await waitUntil(async () => (await disburse("POST", "check-status", { disburse_invoice: token })).body.status === "failed", { what: "the failure" });
    expect(await balanceOf("SN")).toBe(before);
  });

  it("credits a completed payment to its channel's country only", async () => {
    const before = { CI: await balanceOf("CI"), SN: await balanceOf("SN") };
    const created = await fetch(`${sim.url}/sandbox-api/v1/checkout-invoice/create`, {
      method: "POST",
      headers: headersOf(merchant),
      body: JSON.stringify({ invoice: { total_amount: 2500, description: "Pagne" }, store: { name: "Boutique" } }),
    });
    const { token } = (await created.json()) as { token: string };
    expect((await sim.press(token, "pay", { payment_method: "wave_ci" })).status).toBe(200);
    expect(await balanceOf("CI")).toBe(before.CI + 2500);
    expect(await balanceOf("SN")).toBe(before.SN);
  });
});

describe("GET /console", () => {
  it("shows the sandbox rules and a payout waiting between 1000 and 5000, whose Send button sends it and comes back", async () => {
    const { token, disburseId } = await createdToken({ amount: 2000 });
    await disburse("POST", "submit-invoice", { disburse_invoice: token, disburse_id: disburseId });
    const page = await (await fetch(`${sim.url}/console`)).text();
    expect(page).toContain("below 1000 sent");
    expect(page).toContain(`action="_sim/disbursements/${token}/send"`);
    expect(page).toContain(`action="_sim/disbursements/${token}/fail"`);

    const pressed = await fetch(`${sim.url}/_sim/disbursements/${token}/send`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(pressed.status).toBe(303);
    const back = new URL(pressed.headers.get("location")!, `${sim.url}/_sim/disbursements/${token}/send`);
    expect(back.pathname).toBe("/console");
    const after = await (await fetch(back)).text();
    expect(after).toContain(`Disbursement ${token} is success.`);
    expect(after).not.toContain(`action="_sim/disbursements/${token}/send"`);
    expect((await disburse("POST", "check-status", { disburse_invoice: token })).body.status).toBe("success");
  });
});
