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
import packageJson from "../../../package.json" with { type: "json" };
import type { Config } from "../../config.ts";
import { signWebhook } from "../../crypto/sign-webhook.ts";
import type { Delivery, EventType, JsonValue } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { eventEnvelope } from "../events/event-types.ts";
import { activeCallbackSecrets } from "../tenants/manage-tenants.ts";
import { decideOutcome, describeFailure, type AttemptOutcome, type AttemptResult } from "./attempt-outcome.ts";
import { enqueueDeliveryAttempt } from "./delivery-jobs.ts";
import { endpointSigningSecrets } from "./endpoints.ts";
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
type LeasedDelivery = Delivery & {
  event_type: EventType;
  event_data: Record<string, JsonValue>;
  event_created_at: Date;
  endpoint_url: string | null;
  endpoint_enabled: boolean | null;
  endpoint_disabled_reason: string | null;
  endpoint_failing_since: Date | null;
};

type Target = { kind: "endpoint"; endpointId: string; failingSince: Date | null; url: string } | { kind: "direct"; url: string };

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
 * The lease, taken by one atomic UPDATE that only matches a pending delivery nobody holds (and, for a
 * job made for attempt k, one that has made k − 1 attempts), joined in the same statement with the
 * event and the endpoint.
 */
async function takeLease(deps: Deps, deliveryId: string, attempt: number | undefined): Promise<LeasedDelivery | undefined> {
  const now = deps.now();
  return deps.db
    .with("leased", (db) => {
      let update = db
        .updateTable("deliveries")
        .set({ locked_until: new Date(now.getTime() + deliveryLeaseMs(deps.config)) })
        .where("id", "=", deliveryId)
        .where("state", "=", "pending")
        .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", now)]));
      if (attempt !== undefined) update = update.where("attempts", "=", attempt - 1);
      return update.returningAll();
    })
    .selectFrom("leased")
    .innerJoin("events", "events.id", "leased.event_id")
    .leftJoin("webhook_endpoints as endpoint", "endpoint.id", "leased.endpoint_id")
    .selectAll("leased")
    .select([
      "events.type as event_type",
      "events.data as event_data",
      "events.created_at as event_created_at",
      "endpoint.url as endpoint_url",
      "endpoint.enabled as endpoint_enabled",
      "endpoint.disabled_reason as endpoint_disabled_reason",
      "endpoint.failing_since as endpoint_failing_since",
    ])
    .executeTakeFirst();
}

async function attemptLeased(deps: Deps, delivery: LeasedDelivery, options: DeliverOptions): Promise<DeliverResult> {
  const target = targetOf(delivery);
  if (typeof target === "string") {
    await finishWithoutAttempt(deps, delivery, target);
    return { outcome: "failed", attempt: delivery.attempts, status: null, error: target };
  }
  const secrets = target.kind === "endpoint" ? await endpointSigningSecrets(deps, target.endpointId) : await activeCallbackSecrets(deps, delivery.tenant_id);
  if (secrets.length === 0) {
    const reason = target.kind === "endpoint" ? "the endpoint has no signing secret" : "the tenant has no callback signing secret";
    await finishWithoutAttempt(deps, delivery, reason);
    return { outcome: "failed", attempt: delivery.attempts, status: null, error: reason };
  }

  const attempt = delivery.attempts + 1;
  const body = JSON.stringify(
    eventEnvelope({ id: delivery.event_id, type: delivery.event_type, created_at: delivery.event_created_at, tenant_id: delivery.tenant_id, environment: delivery.environment, data: delivery.event_data }),
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
  if (outcome.state === "pending") {
    await enqueueDeliveryAttempt(deps, { deliveryId: delivery.id, attempt: attempt + 1 }, { delayMs: outcome.retryInMs });
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
    if (!delivery.endpoint_enabled) return `the webhook endpoint is disabled${delivery.endpoint_disabled_reason ? `: ${delivery.endpoint_disabled_reason}` : ""}`;
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

interface RecordInput {
  attempt: number;
  attemptedAt: Date;
  recordedAt: Date;
  durationMs: number;
  responseBody: string | null;
  result: AttemptResult;
  outcome: AttemptOutcome;
}

/**
 * The attempt, the delivery's new state and the endpoint's health, in one statement (so one
 * transaction, one round trip). The delivery and the endpoint change only while this worker still
 * holds the lease; the attempt is logged either way, since the request went out.
 */
async function recordAttempt(deps: Deps, delivery: LeasedDelivery, target: Target, input: RecordInput): Promise<void> {
  const { outcome, result, recordedAt } = input;
  const lastError = describeFailure(result);
  const recorded = await deps.db
    .with("updated", (db) =>
      db
        .updateTable("deliveries")
        .set({
          state: outcome.state,
          attempts: input.attempt,
          locked_until: null,
          last_status: result.status,
          last_error: outcome.state === "succeeded" ? null : lastError,
          updated_at: recordedAt,
          ...(outcome.state === "pending" && { next_attempt_at: new Date(recordedAt.getTime() + outcome.retryInMs) }),
          ...(outcome.state === "succeeded" && { delivered_at: recordedAt }),
        })
        .where("id", "=", delivery.id)
        .where("locked_until", "=", delivery.locked_until)
        .returning("id"),
    )
    .with("logged", (db) =>
      db
        .insertInto("delivery_attempts")
        .values({
          delivery_id: delivery.id,
          attempt: input.attempt,
          attempted_at: input.attemptedAt,
          url: target.url,
          status: result.status,
          duration_ms: input.durationMs,
          error: result.error,
          response_body: input.responseBody,
        })
        .returning("id"),
    )
    .with("endpoint", (db) => {
      const endpointId = target.kind === "endpoint" ? target.endpointId : "";
      const base = db.updateTable("webhook_endpoints").where("id", "=", endpointId).where((eb) => eb.exists(eb.selectFrom("updated").select("id")));
      // Only what changes is written: a failing endpoint's streak start is set once, not on every attempt.
      if (outcome.state === "succeeded") return base.set({ failing_since: null }).where("failing_since", "is not", null).returning("id");
      if (outcome.state === "failed" && outcome.disableEndpoint) {
        return base
          .set((eb) => ({ failing_since: eb.fn.coalesce("failing_since", eb.val(input.attemptedAt)), enabled: false, disabled_reason: outcome.disableEndpoint, updated_at: recordedAt }))
          .where("enabled", "=", true)
          .returning("id");
      }
      return base.set({ failing_since: input.attemptedAt }).where("failing_since", "is", null).returning("id");
    })
    .selectNoFrom((eb) => [
      eb.selectFrom("updated").select((e) => e.fn.countAll<number>().as("n")).as("updated"),
      eb.selectFrom("endpoint").select((e) => e.fn.countAll<number>().as("n")).as("endpoint"),
      eb.selectFrom("logged").select((e) => e.fn.countAll<number>().as("n")).as("logged"),
    ])
    .executeTakeFirstOrThrow();
  if (Number(recorded.updated) === 0) {
    // The lease ran out during the attempt and another worker took the delivery: it records its own.
    deps.logger.warn({ deliveryId: delivery.id, attempt: input.attempt }, "delivery lease lost during an attempt; its result is logged only");
    return;
  }
  const disabled = outcome.state === "failed" ? outcome.disableEndpoint : null;
  if (disabled && target.kind === "endpoint" && Number(recorded.endpoint) > 0) {
    deps.logger.warn(
      { endpointId: target.endpointId, tenantId: delivery.tenant_id, environment: delivery.environment, deliveryId: delivery.id, reason: disabled },
      `webhook endpoint ${target.endpointId} disabled: ${disabled}`,
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
