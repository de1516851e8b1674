/**
 * `POST /providerB/webhook/disburse`, provider B's disbursement callback, on a gateway over real HTTP with its
 * workers, its provider B simulator and a database (both drivers): the empty probe is answered 200, a payout
 * sent through `POST /payouts` is settled by the simulator's hashed callback, a callback without a hash is
 * followed (the payout is read again from provider B, its body never trusted), a wrong hash is refused 401.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import type { TestDatabase } from "../../support/db.ts";
import { expectError } from "../../support/errors.ts";
import { createTestDatabase, type RigGateway, type SimulatorServer, startRigGateway } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { disbursementsUnder, pressDisbursement, startPayoutSimulator } from "./payouts-rig.ts";

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let tenantId: string;
let masterKey: string;

beforeAll(async () => {
  sim = startPayoutSimulator(100);
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database, logLevel: "warn" });
  const tenant = await gw.tenantWithAccount(sim);
  tenantId = tenant.tenantId;
  masterKey = tenant.keys.masterKey;
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await database?.dispose();
  await sim?.stop();
});

const sha512 = (text: string) => createHash("sha512").update(text).digest("hex");

/** `POST /payouts` through provider B to a Wave Senegal wallet; answers the payout's id. */
async function createPayout(amount: number): Promise<string> {
  const response = await gw.call("POST", "/payouts", tenantId, {
    amount,
    description: "Remboursement commande 42",
    recipient: { phone: { number: "+221771234567", country: "sn" }, operator: "wave", firstname: "Awa" },
    provider: "providerB",
  });
  const body = (await response.json()) as { id: string; state: string };
  expect(response.status).toBe(200);
  return body.id;
}

async function payoutState(id: string): Promise<string> {
  const response = await gw.call("GET", `/payouts/${id}`, tenantId);
  return ((await response.json()) as { state: string }).state;
}

/** The domain sent it: provider B holds one submitted disbursement under our id. */
async function submittedDisbursement(id: string) {
  return waitUntil(async () => (await disbursementsUnder(sim, id)).find((disbursement) => disbursement.submits === 1), { what: `${id} to be submitted` });
}

function postCallback(body: string, contentType = "application/x-www-form-urlencoded"): Promise<Response> {
  return fetch(`${gw.url}/providerB/webhook/disburse`, { method: "POST", headers: { "content-type": contentType }, body });
}

describe("POST /providerB/webhook/disburse", () => {
  it("answers provider B's empty probe 200, with or without a content type", async () => {
    const variants: Record<string, string>[] = [{}, { "content-type": "application/x-www-form-urlencoded" }, { "content-type": "application/json" }];
    for (const headers of variants) {
      const response = await fetch(`${gw.url}/providerB/webhook/disburse`, { method: "POST", headers, body: "" });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true });
    }
  });

  it("settles a payout from the simulator's hashed callback once it is sent", async () => {
    const id = await createPayout(500);
    const disbursement = await submittedDisbursement(id);
    expect(disbursement).toMatchObject({
      amount: 500,
      withdraw_mode: "wave-senegal",
      account_alias: "771234567",
      callback_url: `${gw.url}/providerB/webhook/disburse`,
    });
    await waitUntil(async () => (await payoutState(id)) === "sent", { what: "the payout to be sent" });
    const delivery = await waitUntil(
      async () => {
        const { deliveries } = (await (await fetch(`${sim.url}/_sim/ipns`)).json()) as { deliveries: { token: string; delivered: boolean }[] };
        return deliveries.find((entry) => entry.token === disbursement.token && entry.delivered);
      },
      { what: "the callback to be delivered" },
    );
    expect(delivery.delivered).toBe(true);
  });

  it("follows a callback without a hash: the payout is read again from provider B, so a lost callback still settles it", async () => {
    const id = await createPayout(2000);
    const { token } = await submittedDisbursement(id);
    // The simulator's own callback finds the gateway down and gives up.
    await gw.down();
    expect((await pressDisbursement(sim, token, "send")).status).toBe(200);
    await Bun.sleep(1000);
    gw.up();
    expect(await payoutState(id)).toBe("pending");

    const fields = new URLSearchParams({ status: "success", token, disburse_id: id, amount: "2000.00", withdraw_mode: "wave-senegal" });
    const response = await postCallback(fields.toString());
    expect(response.status).toBe(200);
    expect(await payoutState(id)).toBe("sent");
    expect((await disbursementsUnder(sim, id)).map((disbursement) => disbursement.submits)).toEqual([1]);
  });

  it("never trusts the body: a callback saying success moves nothing while provider B says pending (JSON and data=<json> read too)", async () => {
    const id = await createPayout(3000);
    const { token } = await submittedDisbursement(id);
    const claim = { status: "success", token, disburse_id: id, amount: "3000.00", hash: sha512(masterKey) };
    expect((await postCallback(JSON.stringify(claim), "application/json")).status).toBe(200);
    expect((await postCallback(`data=${encodeURIComponent(JSON.stringify(claim))}`)).status).toBe(200);
    expect(await payoutState(id)).toBe("pending");
    await pressDisbursement(sim, token, "fail");
    await waitUntil(async () => (await payoutState(id)) === "failed", { what: "the payout to fail" });
  });

  it("refuses a hash that is not the merchant account's with 401 in the contract's error shape, and moves nothing", async () => {
    const id = await createPayout(4000);
    const { token } = await submittedDisbursement(id);
    await gw.down();
    await pressDisbursement(sim, token, "send");
    await Bun.sleep(1000);
    gw.up();
    const forged = new URLSearchParams({ status: "success", token, disburse_id: id, hash: sha512("not the master key") });
    await expectError(await postCallback(forged.toString()), 401, "unauthorized", "The callback's hash does not match the merchant account");
    expect(await payoutState(id)).toBe("pending");
  });

  it("answers 200 to a callback naming no payout of ours, and 415 to another content type", async () => {
    expect((await postCallback(new URLSearchParams({ status: "success", disburse_id: "po_01JUNKNOWN0000000000000000" }).toString())).status).toBe(200);
    expect((await postCallback(new URLSearchParams({ status: "success", disburse_id: "someone-else's" }).toString())).status).toBe(200);
    await expectError(await postCallback("status=success", "text/plain"), 415, "unsupported_media_type");
  });
});
