/**
 * What the renewal tests share: a provider B simulator that also records every permit charge it answers
 * (so a test can count what provider B really charged), a clock the test moves, and a permit's schedule
 * through the API. Active permits come from `permit-rig.ts`.
 */
import { expect } from "bun:test";
import type { TestDatabase } from "./db.ts";
import { permitControl, startPermitRig, type PermitRig } from "./permit-rig.ts";
import { startSimulator, type RigGateway, type SimulatorServer } from "./provider-b-rig.ts";
import type { Json } from "./json.ts";
import type { VirtualTime } from "./virtual-time.ts";
import { waitUntil } from "./wait.ts";

/** One permit charge as provider B answered it. */
export interface SimCharge {
  permitToken: string;
  idempotencyKey: string;
  invoiceToken: string;
  status: string;
}

export interface RecordingSimulator extends SimulatorServer {
  /** Every successful `/permit/charge` answer, replays included. */
  chargeAnswers: SimCharge[];
  /** The charges provider B made for a permit: distinct invoices. */
  chargesOf(permitToken: string): SimCharge[];
  /** `authorize`, `fail-next`, `succeed-next`, `pending-next`, `revoke`… on a permit. */
  permitControl(token: string, verb: string): Promise<Response>;
}

/** A standalone provider B simulator on 127.0.0.1 that records the permit charges it answers. */
export async function startRecordingSimulator(): Promise<RecordingSimulator> {
  const chargeAnswers: SimCharge[] = [];
  const server = await startSimulator({
    async around(request, next) {
      const isCharge = request.method === "POST" && new URL(request.url).pathname.endsWith("/permit/charge");
      const sent = isCharge
        ? ((await request
            .clone()
            .json()
            .catch(() => ({}))) as Json)
        : undefined;
      const response = await next(request);
      if (sent && response.status === 200) {
        const answer = (await response.clone().json()) as Json;
        if (answer.invoice_token)
          chargeAnswers.push({
            permitToken: sent.permit_token,
            idempotencyKey: sent.idempotency_key,
            invoiceToken: answer.invoice_token,
            status: answer.status,
          });
      }
      return response;
    },
  });
  return {
    ...server,
    chargeAnswers,
    chargesOf: (permitToken) => [...new Map(chargeAnswers.filter((c) => c.permitToken === permitToken).map((c) => [c.invoiceToken, c])).values()],
    permitControl: (token, verb) => permitControl(server, token, verb),
  };
}

/** A clock the test moves; `now()` is what the gateway gets as `deps.now`. */
export function testClock(start: Date) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set(at: Date) {
      current = at.getTime();
    },
    advance(ms: number) {
      current += ms;
    },
  };
}

export const schedulePath = (permitId: string) => `/providerB/permits/${permitId}/schedule`;

/** `PUT …/schedule`, expecting 200; answers the schedule. */
export async function putSchedule(gw: RigGateway, tenantId: string, permitId: string, body: Json): Promise<Json> {
  const response = await gw.call("PUT", schedulePath(permitId), tenantId, body);
  const json = (await response.json()) as Json;
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json;
}

/** `GET …/schedule`'s body. */
export async function scheduleOf(gw: RigGateway, tenantId: string, permitId: string): Promise<Json> {
  return (await (await gw.call("GET", schedulePath(permitId), tenantId)).json()) as Json;
}

/**
 * The renewal tests' rig: a recording simulator, the gateway on `clock`, and renewal sweeps that run
 * only when a test calls them.
 */
export async function startRenewalRig(clock: { now: () => Date }): Promise<PermitRig<RecordingSimulator>> {
  return startPermitRig({ sim: await startRecordingSimulator(), now: clock.now, workerOptions: { renewalSweepEveryMs: 3_600_000 } });
}

/**
 * How often the renewal sweep of {@link startRenewalRigOnVirtualTime} runs: every 6 hours from the rig's start (production
 * sweeps every minute; months of virtual time at that pace would take the test minutes).
 */
export const RENEWAL_SWEEP_EVERY_MS = 6 * 3_600_000;

/**
 * The renewal rig on virtual time: the gateway's own renewal sweep runs every {@link RENEWAL_SWEEP_EVERY_MS} of
 * `time`, the first at the rig's start, on its in-process queue; the sweeper (the backstop for lost jobs, none
 * lost here, and ~80 ms a run) runs once every 30 days. A test moves the
 * clock with {@link advanceRenewals}, and every sweep that falls due on the way runs, at its own time.
 */
export async function startRenewalRigOnVirtualTime(time: VirtualTime): Promise<PermitRig<RecordingSimulator>> {
  return startPermitRig({
    sim: await startRecordingSimulator(),
    time,
    workerOptions: { renewalSweepEveryMs: RENEWAL_SWEEP_EVERY_MS, sweepEveryMs: 30 * 24 * 3_600_000 },
  });
}

/**
 * Resolves once the `permits` queue runs nothing and holds nothing but the renewal sweep's next run: every
 * sweep and charge job started so far has ended (a sweep enqueues its charge jobs before it ends).
 */
export async function permitsQueueIdle(gw: RigGateway): Promise<void> {
  const queue = gw.gateway.deps.queue;
  await waitUntil(async () => (await queue.stats!()).find((q) => q.queue === "permits")?.depth === 1, {
    what: "the permits queue to hold only the next renewal sweep",
    timeoutMs: 15_000,
    intervalMs: 1,
  });
}

/** Moves `time` forward `ms`, each renewal sweep due on the way running (and its charge jobs ending) before the next. */
export async function advanceRenewals(time: VirtualTime, gw: RigGateway, ms: number): Promise<void> {
  await time.advance(ms, { settle: () => permitsQueueIdle(gw) });
}

/** Moves `time` forward to `at` as {@link advanceRenewals} does. */
export async function advanceRenewalsTo(time: VirtualTime, gw: RigGateway, at: Date | string): Promise<void> {
  const ms = new Date(at).getTime() - time.now().getTime();
  if (ms < 0) throw new Error(`virtual time is already past ${new Date(at).toISOString()}`);
  await advanceRenewals(time, gw, ms);
}

/** A permit's charges through the API (`GET …/charges`, expecting 200), up to 100. */
export async function listCharges(gw: RigGateway, tenantId: string, permitId: string): Promise<Json[]> {
  const response = await gw.call("GET", `/providerB/permits/${permitId}/charges?limit=100`, tenantId);
  expect(response.status).toBe(200);
  return ((await response.json()) as Json).data as Json[];
}

/** A permit's rows in `permit_charges`, oldest first. */
export async function chargeRows(database: TestDatabase, permitId: string) {
  return database.db.selectFrom("permit_charges").selectAll().where("permit_id", "=", permitId).orderBy("created_at").execute();
}
