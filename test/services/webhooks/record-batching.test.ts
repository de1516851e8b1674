/**
 * The attempts recorded in the same turn of the event loop go out as one statement (issue 8), merged per
 * endpoint so that a 410's disable or a failure's streak start is never lost to a success of the same
 * batch; a lost lease still only logs its attempt; a row the database refuses does not fail the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { CompiledQuery } from "kysely";
import type { Deps } from "../../../src/services/deps.ts";
import type { AttemptOutcome } from "../../../src/services/webhooks/attempt-outcome.ts";
import { recordAttempt, type LeasedDelivery, type RecordInput, type Target } from "../../../src/services/webhooks/deliver.ts";
import { createEndpoint } from "../../../src/services/webhooks/endpoints.ts";
import { startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";

let dg: DeliveryGateway;

beforeAll(async () => {
  // Workers off: only the calls below record anything.
  dg = await startDeliveryGateway({ start: false });
}, 60_000);
afterAll(async () => {
  await dg?.close();
}, 30_000);

/** `deps` whose database counts the statements it runs (`recordAttempt` runs precompiled ones, through `executeQuery`). */
function countingDeps(): { deps: Deps; statements: string[] } {
  const statements: string[] = [];
  const db = dg.deps.db.withoutPlugins();
  const execute = db.executeQuery.bind(db);
  db.executeQuery = ((query: CompiledQuery, ...rest: unknown[]) => (
    statements.push(query.sql), (execute as (...args: unknown[]) => unknown)(query, ...rest)
  )) as typeof db.executeQuery;
  return { deps: { ...dg.deps, db }, statements };
}

async function tenantWithEndpoints(n: number) {
  const { tenantId } = await dg.createTenant();
  const endpoints = [];
  for (let i = 0; i < n; i++) endpoints.push(await createEndpoint(dg.deps, { tenantId, environment: "sandbox", url: `http://127.0.0.1:9/record-${i}` }));
  return { tenantId, endpoints };
}

/** Takes the lease of each of `events`' deliveries by hand, by endpoint: `[endpoint][event]`. */
async function leaseAll(tenantId: string, events: number, endpointIds: string[]): Promise<LeasedDelivery[][]> {
  const recorded = [];
  for (let i = 0; i < events; i++) recorded.push(await dg.record({ tenantId }));
  const lockedUntil = new Date(Date.now() + 60_000);
  const ids = recorded.flatMap((r) => r.deliveryIds);
  await dg.deps.db.updateTable("deliveries").set({ locked_until: lockedUntil }).where("id", "in", ids).execute();
  const rows = await dg.deps.db.selectFrom("deliveries").selectAll().where("id", "in", ids).orderBy("id").execute();
  return endpointIds.map((endpointId) =>
    rows
      .filter((row) => row.endpoint_id === endpointId)
      .map(
        (row) =>
          ({
            ...row,
            event_type: "payment.completed",
            event_data: {},
            event_created_at: row.created_at,
            endpoint_url: "",
            endpoint_enabled: true,
            endpoint_disabled_reason: null,
            endpoint_failing_since: null,
            endpoint_secrets: [],
            callback_secrets: [],
          }) as LeasedDelivery,
      ),
  );
}

function targetOf(delivery: LeasedDelivery): Target {
  return { kind: "endpoint", endpointId: delivery.endpoint_id!, failingSince: null, url: `http://127.0.0.1:9/${delivery.endpoint_id}` };
}

function input(status: number, outcome: AttemptOutcome, attemptedAt = new Date(), responseBody: string | null = "ok"): RecordInput {
  return {
    attempt: 1,
    attemptedAt,
    recordedAt: new Date(attemptedAt.getTime() + 5),
    durationMs: 5,
    responseBody,
    result: { status, error: null, headers: new Headers(), permanent: false },
    outcome,
  };
}

const succeeded: AttemptOutcome = { state: "succeeded" };
const retrying: AttemptOutcome = { state: "pending", retryInMs: 60_000 };
const gone = (at: Date): AttemptOutcome => ({ state: "failed", disableEndpoint: `the endpoint answered 410 Gone on ${at.toISOString()}` });

const delivery = (id: string) => dg.deps.db.selectFrom("deliveries").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const endpoint = (id: string) => dg.deps.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const attemptsOf = (ids: string[]) => dg.deps.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "in", ids).execute();

describe("recording attempts together", () => {
  it("records N successes of one turn with one statement: N attempt rows, N deliveries finished, a streak ended", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(2);
    await dg.deps.db
      .updateTable("webhook_endpoints")
      .set({ failing_since: new Date(Date.now() - 3_600_000) })
      .where("id", "=", endpoints[0]!.id)
      .execute();
    const leased = (
      await leaseAll(
        tenantId,
        4,
        endpoints.map((e) => e.id),
      )
    ).flat();
    expect(leased).toHaveLength(8);
    const { deps, statements } = countingDeps();
    await Promise.all(leased.map((d) => recordAttempt(deps, d, targetOf(d), input(200, succeeded))));
    expect(statements).toHaveLength(1);
    const ids = leased.map((d) => d.id);
    expect(await attemptsOf(ids)).toHaveLength(8);
    for (const id of ids)
      expect(await delivery(id)).toMatchObject({
        state: "succeeded",
        attempts: 1,
        locked_until: null,
        last_status: 200,
        last_error: null,
        delivered_at: expect.any(Date),
      });
    expect((await endpoint(endpoints[0]!.id)).failing_since).toBeNull();
  });

  for (const order of ["410 first", "success first"] as const) {
    it(`disables an endpoint on a 410 recorded with a success of the same endpoint in one batch (${order}), and says so once`, async () => {
      const { tenantId, endpoints } = await tenantWithEndpoints(1);
      const [[a, b]] = (await leaseAll(tenantId, 2, [endpoints[0]!.id])) as [LeasedDelivery[]];
      const at = new Date();
      const gonePair = [a!, input(410, gone(at), at)] as const;
      const okPair = [b!, input(200, succeeded, new Date(at.getTime() + 1))] as const;
      const pairs = order === "410 first" ? [gonePair, okPair] : [okPair, gonePair];
      const { deps, statements } = countingDeps();
      await Promise.all(pairs.map(([d, i]) => recordAttempt(deps, d, targetOf(d), i)));
      expect(statements).toHaveLength(1);
      const row = await endpoint(endpoints[0]!.id);
      expect(row).toMatchObject({ enabled: false, disabled_reason: `the endpoint answered 410 Gone on ${at.toISOString()}` });
      expect(row.failing_since?.getTime()).toBe(at.getTime());
      expect(await delivery(a!.id)).toMatchObject({ state: "failed", attempts: 1, last_status: 410, locked_until: null });
      expect(await delivery(b!.id)).toMatchObject({ state: "succeeded", attempts: 1, last_status: 200 });
      expect(dg.logs.filter((log) => log.endpointId === endpoints[0]!.id && log.level === 40 && String(log.msg).includes("disabled"))).toHaveLength(1);
    });
  }

  it("keeps a failure's streak start beside a success of the same batch, and a running streak's start", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(2);
    const running = new Date(Date.now() - 86_400_000);
    await dg.deps.db.updateTable("webhook_endpoints").set({ failing_since: running }).where("id", "=", endpoints[1]!.id).execute();
    const [[okA, failA], [failB1, failB2]] = (await leaseAll(
      tenantId,
      2,
      endpoints.map((e) => e.id),
    )) as [LeasedDelivery[], LeasedDelivery[]];
    const failedAt = new Date();
    const { deps, statements } = countingDeps();
    await Promise.all([
      recordAttempt(deps, okA!, targetOf(okA!), input(200, succeeded, new Date(failedAt.getTime() + 10))),
      recordAttempt(deps, failA!, targetOf(failA!), input(503, retrying, failedAt)),
      recordAttempt(deps, failB1!, targetOf(failB1!), input(500, retrying, failedAt)),
      recordAttempt(deps, failB2!, targetOf(failB2!), input(500, retrying, failedAt)),
    ]);
    expect(statements).toHaveLength(1);
    // The success ended no streak of A (none ran); the failure started one.
    expect((await endpoint(endpoints[0]!.id)).failing_since?.getTime()).toBe(failedAt.getTime());
    // B's streak keeps its start.
    expect((await endpoint(endpoints[1]!.id)).failing_since?.getTime()).toBe(running.getTime());
    for (const d of [failA!, failB1!, failB2!]) {
      const row = await delivery(d.id);
      expect(row).toMatchObject({ state: "pending", attempts: 1, locked_until: null, delivered_at: null });
      expect(row.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 30_000);
    }
    expect(await attemptsOf([okA!.id, failA!.id, failB1!.id, failB2!.id])).toHaveLength(4);
  });

  it("logs the attempt of a lost lease without touching its delivery or its endpoint, beside one that held", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(1);
    const [[lost, held]] = (await leaseAll(tenantId, 2, [endpoints[0]!.id])) as [LeasedDelivery[]];
    const stale = { ...lost!, locked_until: new Date(lost!.locked_until!.getTime() - 1000) };
    const at = new Date();
    const { deps } = countingDeps();
    await Promise.all([
      recordAttempt(deps, stale, targetOf(stale), input(410, gone(at), at)),
      recordAttempt(deps, held!, targetOf(held!), input(200, succeeded)),
    ]);
    expect(await endpoint(endpoints[0]!.id)).toMatchObject({ enabled: true, failing_since: null });
    expect(await delivery(lost!.id)).toMatchObject({ state: "pending", attempts: 0, locked_until: lost!.locked_until });
    expect(await delivery(held!.id)).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(await attemptsOf([lost!.id])).toHaveLength(1);
    expect(dg.logs.some((log) => log.deliveryId === lost!.id && String(log.msg).includes("lease lost"))).toBe(true);
  });

  it("records the others when the database refuses one row of the batch, and fails that one only", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(1);
    const [[good]] = (await leaseAll(tenantId, 1, [endpoints[0]!.id])) as [LeasedDelivery[]];
    const missing = { ...good!, id: "dlv_does_not_exist" }; // its attempt row breaks the foreign key
    const { deps, statements } = countingDeps();
    const [a, b] = await Promise.allSettled([
      recordAttempt(deps, good!, targetOf(good!), input(200, succeeded)),
      recordAttempt(deps, missing, targetOf(missing), input(200, succeeded)),
    ]);
    expect(a.status).toBe("fulfilled");
    expect(b.status).toBe("rejected");
    expect(statements).toHaveLength(3); // the batch, then each row alone
    expect(await delivery(good!.id)).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(await attemptsOf([good!.id])).toHaveLength(1);
  });

  it("stores an answer holding a NUL character or a lone surrogate, replaced by U+FFFD", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(1);
    const [[d]] = (await leaseAll(tenantId, 1, [endpoints[0]!.id])) as [LeasedDelivery[]];
    await recordAttempt(dg.deps, d!, targetOf(d!), input(200, succeeded, new Date(), "a\u0000b\uD800c"));
    const [attempt] = await attemptsOf([d!.id]);
    expect(attempt?.response_body).toBe("a\uFFFDb\uFFFDc");
  });
});
