/**
 * One delivery attempt (contract §6), what a `webhooks` job runs: take the delivery's lease, sign the
 * event's envelope, POST it through `safeFetch`, and record the attempt with the delivery's new state in
 * one transaction — then enqueue the next attempt when there is one.
 *
 * The lease (`deliveries.locked_until`) is what makes a delivery go out once per attempt whatever the
 * queue does: it is taken by one atomic UPDATE that only matches a pending delivery nobody holds, so
 * duplicate jobs, concurrent workers and the sweeper cannot send the same attempt twice, and nothing is
 * sent once the delivery has succeeded. A worker that dies mid-attempt leaves its lease to run out; the
 * sweeper then re-enqueues the delivery and another worker makes the attempt again.
 */
import { sql } from "kysely";
import packageJson from "../../../package.json" with { type: "json" };
import type { Config } from "../../config.ts";
import { signWebhook } from "../../crypto/sign-webhook.ts";
import { precompile } from "../../db/precompiled.ts";
import { sharedNowOf, sharedNowPlusOf, sharedNowValue } from "../../db/shared-clock.ts";
import type { Delivery, EventType, JsonValue } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { eventEnvelope } from "../events/event-types.ts";
import { tenantSecretField } from "../../crypto/sealed-fields.ts";
import { decideOutcome, describeFailure, type AttemptOutcome, type AttemptResult } from "./attempt-outcome.ts";
import { enqueueDelivery } from "../../jobs/queues.ts";
import { perTurnBatch } from "./per-turn-batch.ts";
import { ENDPOINT_SECRET_FIELD } from "./endpoints.ts";
import { openSigningSecrets } from "./signing-secrets.ts";
import { safeFetch, TargetUnreachableError } from "./safe-fetch.ts";
import { UnsafeTargetError, type LookupFunction } from "./url-safety.ts";

/** The `user-agent` of every delivery. */
export const WEBHOOK_USER_AGENT = `Passerelle-Webhooks/${packageJson.version}`;

/**
 * How long a worker holds a delivery: twice the request timeout plus a second for loading, signing and
 * recording (31 s with the default 15 s timeout). Tests shorten it through `WEBHOOK_TIMEOUT_MS`.
 */
export function deliveryLeaseMs(config: Pick<Config, "webhookTimeoutMs">): number {
  return 2 * config.webhookTimeoutMs + 1000;
}

/** Options of {@link deliverOnce}; tests inject the jitter's randomness and a resolver. */
export interface DeliverOptions {
  /** The attempt the job was made for: nothing happens unless the delivery has made `attempt − 1` attempts. */
  attempt?: number;
  /** In [0, 1), for the retry jitter. Default `Math.random`. */
  random?: () => number;
  /** DNS resolver for `safeFetch`. */
  lookup?: LookupFunction;
}

/** What {@link deliverOnce} did: `skipped` when someone else holds the delivery, or it is finished. */
export type DeliverResult =
  | { outcome: "skipped" }
  | { outcome: "succeeded" | "retrying" | "failed"; attempt: number; status: number | null; error: string | null };

/** A leased delivery with what an attempt needs: its event, and its endpoint when it has one. */
export type LeasedDelivery = Delivery & {
  event_type: EventType;
  event_data: Record<string, JsonValue>;
  event_created_at: Date;
  endpoint_url: string | null;
  endpoint_enabled: boolean | null;
  endpoint_disabled_reason: string | null;
  endpoint_failing_since: Date | null;
  /** Sealed, newest first: the endpoint's secrets that sign now (empty for a direct delivery). */
  endpoint_secrets: string[];
  /** Sealed, newest first: the tenant's callback secrets that sign now (empty for an endpoint's delivery). */
  callback_secrets: string[];
};

/** Where an attempt went: the delivery's endpoint, or its direct URL. */
export type Target = { kind: "endpoint"; endpointId: string; failingSince: Date | null; url: string } | { kind: "direct"; url: string };

/**
 * Makes the next attempt of a delivery, if it is pending and free. Safe to call any number of times,
 * from any number of processes.
 *
 * @example
 * ```ts
 * queue.process("webhooks", (job) => deliverOnce(deps, job.data.deliveryId, { attempt: job.data.attempt }).then(() => {}));
 * ```
 */
export async function deliverOnce(deps: Deps, deliveryId: string, options: DeliverOptions = {}): Promise<DeliverResult> {
  const delivery = await takeLease(deps, deliveryId, options.attempt);
  if (!delivery) return { outcome: "skipped" };
  try {
    return await attemptLeased(deps, delivery, options);
  } catch (err) {
    // Give the lease back so that the sweeper retries soon, rather than after the lease runs out.
    await deps.db
      .updateTable("deliveries")
      .set({ locked_until: null })
      .where("id", "=", delivery.id)
      .where("locked_until", "=", delivery.locked_until)
      .execute()
      .catch(() => {});
    throw err;
  }
}

/**
 * The lease, taken by one atomic statement that only matches a pending delivery nobody holds (and, for a
 * job made for attempt k, one that has made k − 1 attempts) and no other statement has locked at that
 * instant (`for update skip locked`: it never waits, so two processes' batches cannot deadlock), joined in the same statement with the
 * event, the endpoint and the sealed secrets that sign right now (the endpoint's, or the tenant's
 * callback secrets for a direct delivery), newest first. It takes the leases of several deliveries at
 * once (`ids`, with each one's required number of previous attempts in `previous`, null for any): one
 * round trip for the jobs that start in the same task of the event loop. Built and compiled once.
 */
const leaseStatement = precompile<{ ids: string[]; previous: (number | null)[]; now: Date | null; leaseMs: number }>()((db, p) =>
  db
    .with("wanted", () => sql<{ id: string; prev: number | null }>`(select * from unnest(${p.ids}::text[], ${p.previous}::int[]) as w(id, prev))`)
    // The rows it may lease, locked without waiting: a row locked right now is being leased, recorded or
    // re-opened by another statement (its attempt is under way), and waiting for it while holding others
    // could deadlock with another process's batch, whose rows come in another order.
    .with("free", (db) =>
      db
        .selectFrom("deliveries")
        .innerJoin("wanted", "wanted.id", "deliveries.id")
        .select("deliveries.id")
        .where("deliveries.state", "=", "pending")
        .where((eb) => eb.or([eb("deliveries.locked_until", "is", null), eb("deliveries.locked_until", "<", sharedNowOf(p.now))]))
        .where((eb) => eb.or([eb("wanted.prev", "is", null), eb("deliveries.attempts", "=", eb.ref("wanted.prev"))]))
        .forUpdate("deliveries")
        .skipLocked(),
    )
    .with("leased", (db) =>
      db
        .updateTable("deliveries")
        .from("free")
        .set({ locked_until: sharedNowPlusOf(p.now, p.leaseMs) })
        .whereRef("deliveries.id", "=", "free.id")
        .returningAll("deliveries"),
    )
    .selectFrom("leased")
    .innerJoin("events", "events.id", "leased.event_id")
    .leftJoin("webhook_endpoints as endpoint", "endpoint.id", "leased.endpoint_id")
    .selectAll("leased")
    .select((eb) => [
      "events.type as event_type",
      "events.data as event_data",
      "events.created_at as event_created_at",
      "endpoint.url as endpoint_url",
      "endpoint.enabled as endpoint_enabled",
      "endpoint.disabled_reason as endpoint_disabled_reason",
      "endpoint.failing_since as endpoint_failing_since",
      sql<string[]>`array(${eb
        .selectFrom("webhook_endpoint_secrets as s")
        .select("s.sealed_secret")
        .whereRef("s.endpoint_id", "=", "leased.endpoint_id")
        .where((eb) => eb.or([eb("s.expires_at", "is", null), eb("s.expires_at", ">", sharedNowOf(p.now))]))
        .orderBy("s.created_at", "desc")})`.as("endpoint_secrets"),
      sql<string[]>`array(${eb
        .selectFrom("tenant_secrets as t")
        .select("t.sealed_secret")
        .whereRef("t.tenant_id", "=", "leased.tenant_id")
        .where("leased.endpoint_id", "is", null)
        .where("t.kind", "=", "callback")
        .where((eb) => eb.or([eb("t.expires_at", "is", null), eb("t.expires_at", ">", sharedNowOf(p.now))]))
        .orderBy("t.created_at", "desc")})`.as("callback_secrets"),
    ]),
);

/**
 * Takes the lease of one delivery. Requests made in the same task of the event loop, or while the
 * previous lease statement runs (one at a time per process: group commit), are taken together by one
 * {@link leaseStatement}; a delivery asked for twice goes into a statement of its own for each request,
 * so that at most one of them can get it — exactly as if they had run one after the other.
 */
const takeLeaseBatched = perTurnBatch<Deps, { deliveryId: string; previous: number | null }, LeasedDelivery | undefined>(
  async (deps, requests) => {
    const { rows } = await leaseStatement(deps.db, {
      ids: requests.map((r) => r.deliveryId),
      previous: requests.map((r) => r.previous),
      now: sharedNowValue(deps),
      leaseMs: deliveryLeaseMs(deps.config),
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return requests.map((r) => byId.get(r.deliveryId));
  },
  (r) => r.deliveryId,
  { maxInFlight: 1 },
);

function takeLease(deps: Deps, deliveryId: string, attempt: number | undefined): Promise<LeasedDelivery | undefined> {
  return takeLeaseBatched(deps, { deliveryId, previous: attempt === undefined ? null : attempt - 1 });
}

async function attemptLeased(deps: Deps, delivery: LeasedDelivery, options: DeliverOptions): Promise<DeliverResult> {
  const target = targetOf(delivery);
  if (typeof target === "string") {
    await finishWithoutAttempt(deps, delivery, target);
    return { outcome: "failed", attempt: delivery.attempts, status: null, error: target };
  }
  const secrets =
    target.kind === "endpoint"
      ? await openSigningSecrets(deps, delivery.endpoint_secrets, { tenantId: delivery.tenant_id, field: ENDPOINT_SECRET_FIELD })
      : await openSigningSecrets(deps, delivery.callback_secrets, { tenantId: delivery.tenant_id, field: tenantSecretField("callback") });
  if (secrets.length === 0) {
    const reason = target.kind === "endpoint" ? "the endpoint has no signing secret" : "the tenant has no callback signing secret";
    await finishWithoutAttempt(deps, delivery, reason);
    return { outcome: "failed", attempt: delivery.attempts, status: null, error: reason };
  }

  const attempt = delivery.attempts + 1;
  const body = JSON.stringify(
    eventEnvelope({
      id: delivery.event_id,
      type: delivery.event_type,
      created_at: delivery.event_created_at,
      tenant_id: delivery.tenant_id,
      environment: delivery.environment,
      data: delivery.event_data,
    }),
  );
  const attemptedAt = deps.now();
  const headers = {
    ...signWebhook({ id: delivery.event_id, timestampSeconds: Math.floor(attemptedAt.getTime() / 1000), body, secrets }),
    "content-type": "application/json",
    "user-agent": WEBHOOK_USER_AGENT,
  };
  const { result, durationMs, responseBody } = await post(deps, delivery, target.url, headers, body, options.lookup);

  const recordedAt = deps.now();
  const outcome = decideOutcome(result, {
    attempt,
    schedule: deps.config.webhookRetrySchedule,
    now: recordedAt,
    failingSince: target.kind === "endpoint" ? target.failingSince : undefined,
    random: options.random,
  });
  await recordAttempt(deps, delivery, target, { attempt, attemptedAt, recordedAt, durationMs, responseBody, result, outcome });
  deps.metrics?.deliveryAttempt(outcome.state === "pending" ? "retrying" : outcome.state, durationMs / 1000);
  if (outcome.state === "pending") {
    await enqueueDelivery(deps, { deliveryId: delivery.id, attempt: attempt + 1 }, { delayMs: outcome.retryInMs });
  }
  return {
    outcome: outcome.state === "pending" ? "retrying" : outcome.state,
    attempt,
    status: result.status,
    error: describeFailure(result),
  };
}

/** The enabled endpoint or the direct URL to send to, or why there is none. */
function targetOf(delivery: LeasedDelivery): Target | string {
  if (delivery.endpoint_id && delivery.endpoint_url !== null) {
    if (!delivery.endpoint_enabled)
      return `the webhook endpoint is disabled${delivery.endpoint_disabled_reason ? `: ${delivery.endpoint_disabled_reason}` : ""}`;
    return { kind: "endpoint", endpointId: delivery.endpoint_id, failingSince: delivery.endpoint_failing_since, url: delivery.endpoint_url };
  }
  if (!delivery.endpoint_id && delivery.target_url) return { kind: "direct", url: delivery.target_url };
  return "the webhook endpoint was deleted";
}

async function post(
  deps: Deps,
  delivery: Delivery,
  url: string,
  headers: Record<string, string>,
  body: string,
  lookup: LookupFunction | undefined,
): Promise<{ result: AttemptResult; durationMs: number; responseBody: string | null }> {
  const started = performance.now();
  try {
    const answer = await safeFetch(url, {
      method: "POST",
      headers,
      body,
      timeoutMs: deps.config.webhookTimeoutMs,
      environment: delivery.environment,
      allowPrivateTargets: deps.config.allowPrivateTargets,
      caches: deps.caches.targets,
      ...(lookup ? { lookup } : {}),
    });
    const redirect = answer.status >= 300 && answer.status < 400;
    return {
      result: { status: answer.status, error: redirect ? "redirects are not followed" : null, headers: answer.headers, permanent: false },
      durationMs: answer.durationMs,
      responseBody: answer.bodyPrefix,
    };
  } catch (err) {
    const durationMs = Math.round(performance.now() - started);
    if (err instanceof UnsafeTargetError) {
      // A name that resolves to a private address today may not tomorrow; a refused URL stays refused.
      const dnsAnswer = err.reason === "non_public_address" && / resolves to /.test(err.message);
      return { result: { status: null, error: err.message, headers: null, permanent: !dnsAnswer }, durationMs, responseBody: null };
    }
    const message = err instanceof TargetUnreachableError ? err.message : `delivery error (${err instanceof Error ? err.message : String(err)})`;
    return { result: { status: null, error: message.slice(0, 500), headers: null, permanent: false }, durationMs, responseBody: null };
  }
}

/** What an attempt did, as {@link recordAttempt} records it. */
export interface RecordInput {
  attempt: number;
  attemptedAt: Date;
  recordedAt: Date;
  durationMs: number;
  responseBody: string | null;
  result: AttemptResult;
  outcome: AttemptOutcome;
}

/**
 * What an attempt does to its endpoint's health, when its delivery's lease was still held: `ok` ends a
 * failing streak, `failing` starts one (if none is running), `disable` starts one and disables the
 * endpoint. Null for a direct delivery (no endpoint).
 */
type Health = "ok" | "failing" | "disable";

/** One attempt to record, as {@link recordStatement} reads it (one element of its JSON array). */
interface RecordRow {
  id: string;
  locked_until: Date | null;
  state: "succeeded" | "pending" | "failed";
  attempt: number;
  status: number | null;
  last_error: string | null;
  recorded_at: Date;
  /**
   * Set for `pending` only: the next attempt is due this long after now on the shared clock
   * (`db/shared-clock.ts`); the delivery keeps its `next_attempt_at` otherwise.
   */
  retry_in_ms: number | null;
  /** Set for `succeeded` only. */
  delivered_at: Date | null;
  attempted_at: Date;
  url: string;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  endpoint_id: string | null;
  health: Health | null;
  disabled_reason: string | null;
}

/** An endpoint's new `failing_since` from its attempts of one batch (`h`, see `health` below) and its row (`e`). */
const mergedFailingSince = sql<Date | null>`case when h.first_failure is null then null
  when h.any_ok then h.first_failure
  else coalesce(e.failing_since, h.first_failure) end`;

/**
 * The attempts of one batch, with their deliveries' new states and their endpoints' health, in one
 * statement (so one transaction, one round trip). The rows come as one JSON array (a text parameter).
 *
 * - A delivery changes only while its worker still holds the lease (`locked_until` unchanged); the
 *   attempt is logged either way, since the request went out.
 * - An endpoint is updated once, from the attempts of the batch that held their lease, merged as if its
 *   successes had been recorded first and then its failures: a failure's streak start or a 410's disable
 *   is never lost to a success of the same batch. So: any `disable` disables it (if enabled; the first
 *   reason of the batch is kept); with failures, `failing_since` is the running streak's start, or — when
 *   a success of the batch ended that streak — the batch's first failure; with successes only, null.
 *   Only an endpoint that changes is written.
 *
 * Returns the deliveries whose lease was still held, and the endpoints this statement disabled.
 */
const recordStatement = precompile<{ rows: string; now: Date | null }>()((db, p) =>
  db
    .with(
      "r",
      () =>
        sql<RecordRow>`(select * from json_to_recordset(${p.rows}::text::json) as r(
          id text, locked_until timestamptz, state text, attempt int, status int, last_error text, recorded_at timestamptz,
          retry_in_ms int8, delivered_at timestamptz, attempted_at timestamptz, url text, duration_ms int, error text,
          response_body text, endpoint_id text, health text, disabled_reason text))`,
    )
    .with("updated", (db) =>
      db
        .updateTable("deliveries")
        .from("r")
        .set((eb) => ({
          state: eb.ref("r.state"),
          attempts: eb.ref("r.attempt"),
          locked_until: null,
          last_status: eb.ref("r.status"),
          last_error: eb.ref("r.last_error"),
          updated_at: eb.ref("r.recorded_at"),
          next_attempt_at: sql<Date>`case when r.retry_in_ms is null then deliveries.next_attempt_at else ${sharedNowPlusOf(p.now, sql.ref("r.retry_in_ms"))} end`,
          delivered_at: eb.fn.coalesce("r.delivered_at", "deliveries.delivered_at"),
        }))
        .whereRef("deliveries.id", "=", "r.id")
        .whereRef("deliveries.locked_until", "=", "r.locked_until")
        .returning("deliveries.id"),
    )
    .with("logged", (db) =>
      db
        .insertInto("delivery_attempts")
        .columns(["delivery_id", "attempt", "attempted_at", "url", "status", "duration_ms", "error", "response_body"])
        .expression((eb) =>
          eb.selectFrom("r").select(["r.id", "r.attempt", "r.attempted_at", "r.url", "r.status", "r.duration_ms", "r.error", "r.response_body"]),
        )
        .returning("id"),
    )
    .with("health", (db) =>
      db
        .selectFrom("r")
        .where("r.endpoint_id", "is not", null)
        .where("r.health", "is not", null)
        .where("r.id", "in", (eb) => eb.selectFrom("updated").select("updated.id"))
        .groupBy("r.endpoint_id")
        .select([
          "r.endpoint_id",
          sql<boolean>`bool_or(r.health = 'ok')`.as("any_ok"),
          sql<Date | null>`min(r.attempted_at) filter (where r.health <> 'ok')`.as("first_failure"),
          sql<Date | null>`min(r.recorded_at) filter (where r.health = 'disable')`.as("disabled_at"),
          sql<string | null>`(array_agg(r.disabled_reason order by r.attempted_at) filter (where r.health = 'disable'))[1]`.as("disabled_reason"),
        ]),
    )
    .with("endpoint", (db) =>
      db
        .updateTable("webhook_endpoints as e")
        .from("health as h")
        .set({
          failing_since: mergedFailingSince,
          // Every right-hand side reads the row as it was: `e.enabled` is "enabled before this statement".
          enabled: sql<boolean>`case when h.disabled_at is not null then false else e.enabled end`,
          disabled_reason: sql<string | null>`case when h.disabled_at is not null and e.enabled then h.disabled_reason else e.disabled_reason end`,
          updated_at: sql<Date>`case when h.disabled_at is not null and e.enabled then h.disabled_at else e.updated_at end`,
        })
        .whereRef("e.id", "=", "h.endpoint_id")
        .where(sql<boolean>`((h.disabled_at is not null and e.enabled) or ${mergedFailingSince} is distinct from e.failing_since)`)
        // Disabled by this statement: only then does `updated_at` become the batch's time with its reason.
        .returning([
          "e.id",
          sql<boolean>`(h.disabled_at is not null and e.updated_at = h.disabled_at and e.disabled_reason is not distinct from h.disabled_reason)`.as(
            "disabled",
          ),
        ]),
    )
    .selectNoFrom((eb) => [
      sql<string[]>`array(${eb.selectFrom("updated").select("updated.id")})`.as("updated"),
      sql<string[]>`array(${eb.selectFrom("endpoint").select("endpoint.id").where("endpoint.disabled", "=", true)})`.as("disabled"),
      eb
        .selectFrom("logged")
        .select((e) => e.fn.countAll<number>().as("n"))
        .as("logged"),
    ]),
);

/** What recording one attempt did, or why it could not be recorded. */
type Recorded = { ok: true; held: boolean; disabledEndpoint: boolean } | { ok: false; error: unknown };

/** Records `rows` with one {@link recordStatement}. */
async function recordRows(deps: Deps, rows: RecordRow[]): Promise<Recorded[]> {
  const [result] = (await recordStatement(deps.db, { rows: JSON.stringify(rows), now: sharedNowValue(deps) })).rows;
  if (!result) throw new Error("recording delivery attempts returned no row");
  const updated = new Set(result.updated);
  const disabled = new Set(result.disabled);
  const announced = new Set<string>();
  return rows.map((row) => {
    const held = updated.has(row.id);
    // One delivery per disabled endpoint reports it (the first of the batch that asked for it).
    const disabledEndpoint = held && row.health === "disable" && row.endpoint_id !== null && disabled.has(row.endpoint_id) && !announced.has(row.endpoint_id);
    if (disabledEndpoint) announced.add(row.endpoint_id!);
    return { ok: true, held, disabledEndpoint };
  });
}

/**
 * Records an attempt. The attempts recorded in the same task of the event loop, or while the previous
 * record statement runs (one at a time per process: group commit), go out as one {@link recordStatement}.
 * A batch whose statement fails changed nothing (one statement); its rows are then recorded one by one,
 * so that one row the database refuses — or a deadlock with another process's batch on the same
 * endpoints — cannot fail the others' attempts (which would send them again).
 */
const recordBatched = perTurnBatch<Deps, RecordRow, Recorded>(
  async (deps, rows) => {
    try {
      return await recordRows(deps, rows);
    } catch (error) {
      if (rows.length === 1) return [{ ok: false, error }];
      return Promise.all(
        rows.map((row) =>
          recordRows(deps, [row]).then(
            ([recorded]) => recorded!,
            (err: unknown): Recorded => ({ ok: false, error: err }),
          ),
        ),
      );
    }
  },
  (row) => row.id,
  { maxInFlight: 1 },
);

/** Text the database can store: no NUL character, no lone surrogate (a receiver's answer can hold either). */
function storable(text: string | null): string | null {
  if (text === null || !/[\0\uD800-\uDFFF]/.test(text)) return text;
  return text.replace(/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/**
 * Records an attempt made while holding `delivery`'s lease: the attempt row, the delivery's new state
 * and its endpoint's health (see {@link recordStatement}); the attempts recorded in the same task go
 * out together. Logs a lost lease, and the endpoint's disabling. Exported for the tests of the batching.
 *
 * @throws the database's error when the attempt could not be recorded (the caller gives the lease back).
 *
 * @example
 * ```ts
 * await recordAttempt(
 *   deps,
 *   leased,
 *   { kind: "endpoint", endpointId, failingSince: null, url },
 *   { attempt: 1, attemptedAt, recordedAt, durationMs: 12, responseBody: "ok", result, outcome: { state: "succeeded" } },
 * );
 * ```
 */
export async function recordAttempt(deps: Deps, delivery: LeasedDelivery, target: Target, input: RecordInput): Promise<void> {
  const { outcome, result, recordedAt } = input;
  const disable = outcome.state === "failed" ? outcome.disableEndpoint : null;
  const recorded = await recordBatched(deps, {
    id: delivery.id,
    locked_until: delivery.locked_until,
    state: outcome.state,
    attempt: input.attempt,
    status: result.status,
    last_error: outcome.state === "succeeded" ? null : storable(describeFailure(result)),
    recorded_at: recordedAt,
    retry_in_ms: outcome.state === "pending" ? Math.round(outcome.retryInMs) : null,
    delivered_at: outcome.state === "succeeded" ? recordedAt : null,
    attempted_at: input.attemptedAt,
    url: target.url,
    duration_ms: input.durationMs,
    error: storable(result.error),
    response_body: storable(input.responseBody),
    endpoint_id: target.kind === "endpoint" ? target.endpointId : null,
    health: target.kind !== "endpoint" ? null : outcome.state === "succeeded" ? "ok" : disable ? "disable" : "failing",
    disabled_reason: disable ?? null,
  });
  if (!recorded.ok) throw recorded.error;
  if (!recorded.held) {
    // The lease ran out during the attempt and another worker took the delivery: it records its own.
    deps.logger.warn({ deliveryId: delivery.id, attempt: input.attempt }, "delivery lease lost during an attempt; its result is logged only");
    return;
  }
  if (disable && recorded.disabledEndpoint && target.kind === "endpoint") {
    deps.metrics?.endpointDisabled(result.status === 410 ? "gone" : "failing");
    deps.logger.warn(
      { endpointId: target.endpointId, tenantId: delivery.tenant_id, environment: delivery.environment, deliveryId: delivery.id, reason: disable },
      `webhook endpoint ${target.endpointId} disabled: ${disable}`,
    );
  }
}

/** Ends a delivery that has nowhere to go (endpoint deleted or disabled, no secret); no HTTP attempt. */
async function finishWithoutAttempt(deps: Deps, delivery: Delivery, reason: string): Promise<void> {
  await deps.db
    .updateTable("deliveries")
    .set({ state: "failed", locked_until: null, last_error: reason, updated_at: deps.now() })
    .where("id", "=", delivery.id)
    .where("locked_until", "=", delivery.locked_until)
    .execute();
}
