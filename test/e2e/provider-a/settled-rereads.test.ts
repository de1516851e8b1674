/**
 * A refund made on provider A's dashboard whose notification never reached the gateway is still learnt: a
 * settled payment of provider A is read again on `SETTLED_REREAD_SCHEDULE` (migration 0028,
 * `direct-payments/settled-rereads.ts`). Over real HTTP against provider A's simulator, with the pooled
 * account's webhook pointed at a port where nothing listens, so that only the re-reads can tell.
 *
 * The gateway runs on virtual time (`virtual-time.ts`): its sweeper (every second) and the schedule's steps
 * run when a test moves the clock, each step when it falls due.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { claimDueRereads } from "../../../src/services/direct-payments/settled-rereads.ts";
import { callerOf, type Json } from "../../support/json.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";

let rig: ProviderARig;
const time = virtualTime();
/** A short schedule: 2, 4 and 6 s after settlement; the sweeper every second. */
const SCHEDULE_MS = [2_000, 4_000, 6_000];

beforeAll(async () => {
  rig = await startProviderARig({ env: { SETTLED_REREAD_SCHEDULE: "2s,4s,6s", SWEEP_EVERY_MS: "1000" }, time });
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

/**
 * A paid MTN Benin payment (below 1000: the sandbox approves it by itself, after 50 ms of real time), settled by
 * the status reads: a second of the clock between two (the refresh floor).
 */
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
      if (last.state === "succeeded") return last;
      await time.advance(1_000);
      return undefined;
    },
    { what: `${created.body.id} succeeded`, timeoutMs: 15_000, intervalMs: 50, lastSeen: () => last },
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
    // No notification came: the gateway still says succeeded, until the sweeper's re-read 2 s after settlement.
    expect((await call(token, "GET", `/payments/${payment.id}`)).body.state).toBe("succeeded");
    await time.advance(settled.reread_at!.getTime() - time.now().getTime() - 1);
    expect((await rowOf(payment.id as string)).state).toBe("succeeded");
    await time.advance(1_001);

    let last: Json | undefined;
    await waitUntil(
      async () => {
        last = (await call(token, "GET", `/payments/${payment.id}`)).body;
        return last.state === "refunded";
      },
      { what: "the refund at provider A learnt by a re-read", timeoutMs: 20_000, intervalMs: 50, lastSeen: () => last },
    );
    const events = (await call(token, "GET", `/events?paymentId=${payment.id}`)).body.data as { type: string }[];
    expect(events.map((e) => e.type).filter((type) => type === "payment.refunded")).toHaveLength(1);
    expect(pooledAvailable((await call(token, "GET", "/balance")).body)).toBe(0);
    // Given back in full: nothing more can happen to it; the next step's claim ends its schedule.
    await time.advance(SCHEDULE_MS[1]!);
    await waitUntil(async () => (await rowOf(payment.id as string)).reread_at === null, { what: "no re-read left", timeoutMs: 15_000, intervalMs: 50 });
  });

  it("reads a payment at each step of the schedule, then never again", async () => {
    const token = await newTenant();
    const payment = await paid(token, 600);
    const completedAt = (await rowOf(payment.id as string)).completed_at!.getTime();
    const rereadAt = async () => (await rowOf(payment.id as string)).reread_at?.getTime() ?? null;
    // The gateway's own sweeper (every second) reads it at each step as the clock reaches it: 2 s, 4 s, 6 s.
    for (const [step, dueMs] of SCHEDULE_MS.entries()) {
      expect(await rereadAt()).toBe(completedAt + dueMs);
      await time.advance(completedAt + dueMs - time.now().getTime() - 1);
      expect(await rereadAt()).toBe(completedAt + dueMs);
      await time.advance(1_001);
      const next = SCHEDULE_MS[step + 1];
      await waitUntil(async () => (await rereadAt()) === (next === undefined ? null : completedAt + next), { what: `the re-read at ${dueMs} ms` });
    }
    // Past the last step: no step is left, and a minute on, nothing claims it.
    await time.advance(60_000);
    expect(await rereadAt()).toBeNull();
    expect((await claimDueRereads(rig.tg.gateway.deps, 1000)).map((row) => row.id)).not.toContain(payment.id);
    expect((await call(token, "GET", `/payments/${payment.id}`)).body.state).toBe("succeeded");
  });

  it("gives each due payment to one of two sweepers running at once", async () => {
    const token = await newTenant();
    const ids = (await Promise.all([501, 502, 503, 504, 505, 506].map((amount) => paid(token, amount)))).map((payment) => payment.id as string);
    // Each due in 30 s: not yet for the running gateway's own sweeper (its clock stands still), due for the two
    // below, a minute ahead (past the last step, so that no step is left after the claim).
    await rig.tg.gateway.deps.db
      .updateTable("payments")
      .set({ reread_at: new Date(time.now().getTime() + 30_000) })
      .where("id", "in", ids)
      .execute();
    const later = { ...rig.tg.gateway.deps, now: () => new Date(time.now().getTime() + 60_000) };
    const [a, b] = await Promise.all([claimDueRereads(later, 1000), claimDueRereads(later, 1000)]);
    const claimed = [...a, ...b].map((row) => row.id).filter((id) => ids.includes(id));
    expect(claimed.sort()).toEqual([...ids].sort());
  });
});
