/**
 * A refund made on provider A's dashboard whose notification never reached the gateway is still learnt: a
 * settled payment of provider A is read again on `SETTLED_REREAD_SCHEDULE` (migration 0028,
 * `direct-payments/settled-rereads.ts`). Over real HTTP against provider A's simulator, with the pooled
 * account's webhook pointed at a port where nothing listens, so that only the re-reads can tell.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { claimDueRereads, rereadSettledPayments } from "../../../src/services/direct-payments/settled-rereads.ts";
import { callerOf, type Json } from "../../support/json.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { waitUntil } from "../../support/wait.ts";

let rig: ProviderARig;
/** A short schedule: 2, 4 and 6 s after settlement; the sweeper every second. */
const SCHEDULE_MS = [2_000, 4_000, 6_000];

beforeAll(async () => {
  rig = await startProviderARig({ env: { SETTLED_REREAD_SCHEDULE: "2s,4s,6s", SWEEP_EVERY_MS: "1000" } });
  // Provider A's notifications go nowhere: its three tries fail, as when every API node is down.
  await fetch(`${rig.simBase}/_sim/accounts/${rig.account.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: "http://127.0.0.1:9/providerA/webhook/sandbox" }),
  });
});

afterAll(async () => {
  await rig?.close();
});

const call = callerOf(() => rig.base);

async function newTenant(): Promise<string> {
  return rig.tg.tenantToken(await rig.tg.insertTenant());
}

/** A paid MTN Benin payment (below 1000: the sandbox approves it by itself), settled by the status reads. */
async function paid(token: string, amount: number): Promise<Json> {
  const created = await call(token, "POST", "/payments", {
    amount,
    description: "Commande",
    operator: "mtn",
    customer: { phone: { number: "+22997000001", country: "bj" } },
  });
  expect(created.status).toBe(200);
  let last: Json | undefined;
  return waitUntil(
    async () => {
      last = (await call(token, "GET", `/payments/${created.body.id}`)).body;
      return last.state === "succeeded" ? last : undefined;
    },
    { what: `${created.body.id} succeeded`, timeoutMs: 15_000, intervalMs: 100, lastSeen: () => last },
  );
}

async function rowOf(id: string) {
  return rig.tg.gateway.deps.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

function pooledAvailable(balance: Json): number | undefined {
  const accounts = balance.accounts as { holding: string; balances: { available: number }[] }[];
  return accounts.find((a) => a.holding === "pooled:providerA")?.balances[0]?.available;
}

describe("a settled provider A payment read again", () => {
  it("learns a refund made on provider A's dashboard whose notification was lost: refunded, payment.refunded, the money off the balance", async () => {
    const token = await newTenant();
    const payment = await paid(token, 700);
    const settled = await rowOf(payment.id as string);
    expect(settled.reread_at?.getTime()).toBe(settled.completed_at!.getTime() + SCHEDULE_MS[0]!);
    expect(pooledAvailable((await call(token, "GET", "/balance")).body)).toBe(700);

    const refunded = await fetch(`${rig.simBase}/_sim/transactions/${settled.provider_transaction_id}/refund`, { method: "POST" });
    expect(refunded.status).toBe(200);
    // No notification came: the gateway still says succeeded, until the sweeper's re-read.
    expect((await call(token, "GET", `/payments/${payment.id}`)).body.state).toBe("succeeded");

    let last: Json | undefined;
    await waitUntil(
      async () => {
        last = (await call(token, "GET", `/payments/${payment.id}`)).body;
        return last.state === "refunded";
      },
      { what: "the refund at provider A learnt by a re-read", timeoutMs: 20_000, intervalMs: 200, lastSeen: () => last },
    );
    const events = (await call(token, "GET", `/events?paymentId=${payment.id}`)).body.data as { type: string }[];
    expect(events.map((e) => e.type).filter((type) => type === "payment.refunded")).toHaveLength(1);
    expect(pooledAvailable((await call(token, "GET", "/balance")).body)).toBe(0);
    // Given back in full: nothing more can happen to it; the next step's claim ends its schedule.
    await waitUntil(async () => (await rowOf(payment.id as string)).reread_at === null, { what: "no re-read left", timeoutMs: 15_000, intervalMs: 200 });
  }, 60_000);

  it("reads a payment at each step of the schedule, then never again", async () => {
    const token = await newTenant();
    const payment = await paid(token, 600);
    const settled = await rowOf(payment.id as string);
    const at = (ms: number) => ({ ...rig.tg.gateway.deps, now: () => new Date(settled.completed_at!.getTime() + ms) });
    // Before its first step: not due. Sweeps of the running gateway may have read it already (its clock is the wall's):
    // each read moved `reread_at` to the next step, which is what this test reads.
    expect((await claimDueRereads(at(1_000), 1000)).map((row) => row.id)).not.toContain(payment.id);
    // Past the last step: the read happens once, and no step is left.
    const last = await rereadSettledPayments(at(SCHEDULE_MS[2]! + 1_000), 1000);
    expect(last.read).toBeGreaterThanOrEqual(1);
    expect((await rowOf(payment.id as string)).reread_at).toBeNull();
    expect((await claimDueRereads(at(60_000), 1000)).map((row) => row.id)).not.toContain(payment.id);
    expect((await call(token, "GET", `/payments/${payment.id}`)).body.state).toBe("succeeded");
  }, 60_000);

  it("gives each due payment to one of two sweepers running at once", async () => {
    const token = await newTenant();
    const ids = (await Promise.all([501, 502, 503, 504, 505, 506].map((amount) => paid(token, amount)))).map((payment) => payment.id as string);
    // Each due in 30 s: not yet for the running gateway's own sweeper (the wall's clock), due for the two below, a
    // minute ahead (past the last step, so that no step is left after the claim).
    await rig.tg.gateway.deps.db
      .updateTable("payments")
      .set({ reread_at: new Date(Date.now() + 30_000) })
      .where("id", "in", ids)
      .execute();
    const later = { ...rig.tg.gateway.deps, now: () => new Date(Date.now() + 60_000) };
    const [a, b] = await Promise.all([claimDueRereads(later, 1000), claimDueRereads(later, 1000)]);
    const claimed = [...a, ...b].map((row) => row.id).filter((id) => ids.includes(id));
    expect(claimed.sort()).toEqual([...ids].sort());
  }, 60_000);
});
