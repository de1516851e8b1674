/**
 * `Idempotency-Key` (contract §9), as rows of `idempotency_keys`: one per key, scoped by tenant,
 * environment, method and concrete path. A request first claims its key ({@link beginIdempotentRequest}):
 * the row is inserted `in_flight` with a lock of `IDEMPOTENCY_LOCK_MS` (60 s by default), atomically
 * (`INSERT … ON CONFLICT DO NOTHING`, then a read), so of many concurrent requests exactly one runs. The
 * request holds its lock while it runs ({@link holdIdempotencyClaim} renews it every third of its term),
 * however long its provider calls take. When it has answered, {@link completeIdempotentRequest} stores the
 * answer for 24 hours — or, for a 5xx after which nothing is left in flight, deletes the row so a retry
 * runs again. Later requests with the key replay the stored answer, or are refused: 422 when their body
 * differs, 409 while the first is still running. Only a lock that was not renewed in time (its process
 * died) is taken over by the next request.
 *
 * Every state change is a conditional write on the row as last seen (its `state` and `locked_until`), so
 * two requests racing for the same row cannot both win, and a request that lost its lock to a takeover
 * can neither renew it nor overwrite the answer of the one that took it. Locks and expiries are on the
 * shared clock (`db/shared-clock.ts`: the database's, unless a test injects its own): an API node whose clock
 * ran ahead would otherwise take over another node's live lock, and one whose clock lagged would hold a dead
 * one for longer.
 *
 * @example
 * ```ts
 * const start = await beginIdempotentRequest(deps, { scope, key, request: input });
 * if (start.outcome === "replay") return start.answer;
 * const answer = await holdIdempotencyClaim(deps, start.claim, run);
 * await completeIdempotentRequest(deps, start.claim, answer, { seal: true });
 * ```
 */
import { AppError, ConflictError, ValidationError } from "../../errors.ts";
import type { Environment, IdempotencyKey, JsonValue } from "../../db/schema.ts";
import { sharedNow, sharedNowPlus } from "../../db/shared-clock.ts";
import type { TimerHandle } from "../../timers.ts";
import type { Deps } from "../deps.ts";
import { requestHash } from "./request-hash.ts";

/** Stands for the tenant of operator calls that have none (e.g. `POST /tenants`). Not a valid `ten_` id. */
export const OPERATOR_TENANT_ID = "_operator";
/** How long an answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** The longest key accepted (contract §9). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The field name bound into sealed answers, beside the tenant id. */
export const SEALED_RESPONSE_FIELD = "idempotency.response";

/** Where a key applies: the same key under another scope is another key. */
export interface IdempotencyScope {
  /** The tenant, or {@link OPERATOR_TENANT_ID}. */
  tenantId: string;
  environment: Environment;
  method: string;
  /** The concrete path, parameters filled in: `/tenants/ten_…/api-keys`. */
  path: string;
}

/** An answer as stored and replayed: no request id, no HTTP types. */
export interface IdempotentAnswer {
  status: number;
  body: JsonValue;
  /** Headers the answer carried that a replay must carry again. */
  headers: Record<string, string>;
}

/** What the request that claimed a key needs to store its answer. */
export interface IdempotencyClaim {
  scope: IdempotencyScope;
  key: string;
  /**
   * The lock this request holds; it fences the row against a takeover. {@link holdIdempotencyClaim}
   * moves it forward in place as it renews the lock.
   */
  lockedUntil: Date;
}

/** Run the request (and complete the claim after), or replay the stored answer. */
export type IdempotencyStart = { outcome: "proceed"; claim: IdempotencyClaim } | { outcome: "replay"; answer: IdempotentAnswer };

/** How `response_body` holds an answer's body: as is, or sealed (a secret shown once). */
export type StoredResponseBody = { plain: JsonValue } | { sealed: string };

type IdempotencyDeps = Pick<Deps, "db" | "now" | "sharedClock" | "keyring" | "config">;

/** Contract §9: a key is at most 255 characters; an empty one is no key. */
function assertValidKey(key: string): void {
  if (key.length === 0) throw new ValidationError(["Idempotency-Key should not be empty"]);
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw new ValidationError([`Idempotency-Key must be shorter than or equal to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`]);
}

/**
 * Answers stored for replay: everything below 500, except 429 — a rate-limited request did not run, and
 * its retry must not be refused for 24 hours. A 5xx is stored only when it names a payment it left in
 * flight at the provider (`paymentId`: a 502/504 after which the USSD push may have reached the phone):
 * running the retry again would make a second payment, so it gets the first answer and follows that
 * payment through its status and events. Any other 5xx left nothing behind that could still act (the
 * provider was never reached, or the payment failed before its push), so it is not stored (contract §9)
 * and the retry runs again.
 */
export function isReplayableStatus(status: number, body?: unknown): boolean {
  if (status >= 500) return typeof (body as { paymentId?: unknown } | null | undefined)?.paymentId === "string";
  return status !== 429;
}

function sealContext(scope: IdempotencyScope) {
  return { tenantId: scope.tenantId, field: SEALED_RESPONSE_FIELD };
}

/** The columns that name one key. */
function byKey(scope: IdempotencyScope, key: string) {
  return { tenant_id: scope.tenantId, environment: scope.environment, method: scope.method, path: scope.path, key };
}

/** The columns of a freshly claimed key, its times on the shared clock. */
function freshClaim(deps: Pick<Deps, "now" | "sharedClock">, hash: string, lockMs: number) {
  return {
    request_hash: hash,
    state: "in_flight" as const,
    locked_until: sharedNowPlus(deps, lockMs),
    response_status: null,
    response_body: null,
    response_headers: null,
    created_at: sharedNow(deps),
    expires_at: sharedNowPlus(deps, IDEMPOTENCY_TTL_MS),
  };
}

async function storedAnswer(deps: IdempotencyDeps, scope: IdempotencyScope, row: IdempotencyKey): Promise<IdempotentAnswer> {
  const stored = row.response_body as StoredResponseBody;
  const body: JsonValue = "sealed" in stored ? JSON.parse(await deps.keyring.open(stored.sealed, sealContext(scope))) : stored.plain;
  return { status: row.response_status!, body, headers: row.response_headers ?? {} };
}

/**
 * Claims `key` for a request, or says what to answer instead.
 *
 * @returns `proceed` with the claim when this request is to run (a new key, an expired one, or one whose
 *   lock ran out); `replay` with the first answer when that request finished within 24 hours.
 * @throws {ValidationError} 400 when the key is empty or longer than 255 characters.
 * @throws {AppError} 422 `idempotency_mismatch` when the key was used with another body.
 * @throws {ConflictError} 409 `idempotency_in_flight` while the first request runs.
 */
export async function beginIdempotentRequest(
  deps: IdempotencyDeps,
  input: { scope: IdempotencyScope; key: string; request: unknown },
): Promise<IdempotencyStart> {
  const { scope, key } = input;
  assertValidKey(key);
  const hash = await requestHash(input.request);
  const id = byKey(scope, key);

  // Each pass either settles or loses a race to a write that changed the row; a few passes always suffice.
  for (let attempt = 0; attempt < 4; attempt++) {
    const claim = freshClaim(deps, hash, deps.config.idempotencyLockMs);
    const inserted = await deps.db
      .insertInto("idempotency_keys")
      .values({ ...id, ...claim })
      .onConflict((oc) => oc.columns(["tenant_id", "environment", "method", "path", "key"]).doNothing())
      .returning("locked_until")
      .executeTakeFirst();
    if (inserted) return { outcome: "proceed", claim: { scope, key, lockedUntil: inserted.locked_until } };

    const row = await deps.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .select(sharedNow(deps).as("shared_now"))
      .where((eb) => eb.and(id))
      .executeTakeFirst();
    if (!row) continue; // released (a 5xx) or purged since the insert: insert again

    const now = row.shared_now;
    const locked = row.state === "in_flight" && row.locked_until.getTime() > now.getTime();
    const expired = row.expires_at.getTime() <= now.getTime();
    if (!expired && row.request_hash !== hash)
      throw new AppError(422, "idempotency_mismatch", "This Idempotency-Key was already used with another request body");
    // A running request keeps its key however long it runs: its lock is renewed while it does.
    if (locked) throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_flight");
    if (!expired && row.state === "done") return { outcome: "replay", answer: await storedAnswer(deps, scope, row) };

    // An answer older than 24 hours, or a request whose lock was not renewed in time (its process died):
    // start afresh, in one conditional write — unless another request changed the row since it was read,
    // or the lock is live again (its holder renewed it meanwhile).
    const taken = await deps.db
      .updateTable("idempotency_keys")
      .set(claim)
      .where((eb) => eb.and(id))
      .where("state", "=", row.state)
      .where("locked_until", "=", row.locked_until)
      .where("locked_until", "<=", sharedNow(deps))
      .returning("locked_until")
      .executeTakeFirst();
    if (taken) return { outcome: "proceed", claim: { scope, key, lockedUntil: taken.locked_until } };
  }
  throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_flight");
}

/**
 * Ends a claimed request: stores its answer for replay (sealed with the keyring when `seal` is set: the
 * answer holds a secret shown once), or, when the status is not replayable (5xx, 429), frees the key so
 * a retry runs again.
 *
 * @returns whether the answer was stored: false when it was not replayable, or when the lock had been
 *   taken over meanwhile (the request that took it stores its own answer).
 */
export async function completeIdempotentRequest(
  deps: IdempotencyDeps,
  claim: IdempotencyClaim,
  answer: IdempotentAnswer,
  options: { seal?: boolean } = {},
): Promise<boolean> {
  if (!isReplayableStatus(answer.status, answer.body)) {
    await releaseIdempotencyClaim(deps, claim);
    return false;
  }
  const body: StoredResponseBody = options.seal
    ? { sealed: await deps.keyring.seal(JSON.stringify(answer.body), sealContext(claim.scope)) }
    : { plain: answer.body };
  const id = byKey(claim.scope, claim.key);
  const result = await deps.db
    .updateTable("idempotency_keys")
    .set({ state: "done", response_status: answer.status, response_body: body, response_headers: answer.headers })
    .where((eb) => eb.and(id))
    .where("state", "=", "in_flight")
    .where("locked_until", "=", claim.lockedUntil)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How often {@link completeIdempotentRequestWhenBack} tries again. */
const COMPLETION_RETRY_MS = 1000;

/**
 * {@link completeIdempotentRequest} again, every second (on `deps.timers`), after it failed (the database went
 * away just as the request ended): so that the answer is stored, or the key freed, as soon as the database is back, rather
 * than the key staying locked — a retry answered 409 `idempotency_in_flight` — for the rest of its lock's
 * term (on a process whose clock ran ahead, the term and that much more), and a retry after it running the
 * request again although its answer was given. Gives up after one lock term's worth of tries (a request that
 * took the key over meanwhile has moved its lock, which fences these writes off). Never throws.
 *
 * @returns whether it stored or freed the key.
 */
export async function completeIdempotentRequestWhenBack(
  deps: IdempotencyDeps & Pick<Deps, "logger" | "timers">,
  claim: IdempotencyClaim,
  answer: IdempotentAnswer,
  options: { seal?: boolean; everyMs?: number } = {},
): Promise<boolean> {
  const everyMs = options.everyMs ?? COMPLETION_RETRY_MS;
  const tries = Math.max(1, Math.ceil(deps.config.idempotencyLockMs / everyMs));
  for (let attempt = 1; attempt <= tries; attempt++) {
    await new Promise<void>((resolve) => deps.timers.setTimeout(resolve, everyMs).unref?.());
    try {
      await completeIdempotentRequest(deps, claim, answer, options);
      deps.logger.info({ path: claim.scope.path, attempt }, "stored the idempotent answer once the database was back");
      return true;
    } catch {
      // Still away: the next second.
    }
  }
  deps.logger.warn({ path: claim.scope.path }, "gave up storing an idempotent answer: the key stays locked until its lock runs out");
  return false;
}

/**
 * Holds `claim` while `run` runs: every third of the lock's term (on `deps.timers`) the lock is moved a whole
 * term past now, so a retry gets 409 for as long as the first request runs, not only for its first term. Renewal stops
 * when `run` settles (a renewal under way is awaited, so the claim's `lockedUntil` is current when it
 * returns), or when the lock turns out to have been taken over. A renewal that fails (the database did
 * not answer) is tried again at the next beat: the lock still has two thirds of its term.
 *
 * @example
 * ```ts
 * const answer = await holdIdempotencyClaim(deps, start.claim, () => createDirectPayment(deps, request));
 * ```
 */
export async function holdIdempotencyClaim<T>(
  deps: Pick<Deps, "db" | "now" | "sharedClock" | "config" | "logger" | "timers">,
  claim: IdempotencyClaim,
  run: () => Promise<T>,
): Promise<T> {
  const beatMs = Math.max(1, Math.floor(deps.config.idempotencyLockMs / 3));
  let renewals: Promise<void> = Promise.resolve();
  let held = true;
  let beat: TimerHandle | undefined;
  const stop = () => {
    held = false;
    if (beat) deps.timers.clearTimeout(beat);
  };
  const renew = () => {
    // The next beat is armed first, as an interval's would be: a slow renewal does not push the later ones back.
    beat = deps.timers.setTimeout(renew, beatMs);
    // Chained, so two renewals never race each other for the same fence.
    renewals = renewals.then(async () => {
      if (!held) return;
      try {
        if (!(await renewIdempotencyClaim(deps, claim))) {
          stop();
          deps.logger.warn({ path: claim.scope.path }, "an idempotency lock was taken over while its request ran; its answer will not be stored");
        }
      } catch (err) {
        deps.logger.warn({ err, path: claim.scope.path }, "could not renew an idempotency lock; trying again at the next beat");
      }
    });
  };
  beat = deps.timers.setTimeout(renew, beatMs);
  try {
    return await run();
  } finally {
    stop();
    await renewals;
  }
}

/**
 * Moves the claim's lock a whole term past now, if the claim still holds it. Returns false when it does
 * not (the lock was taken over, or the answer already stored).
 */
async function renewIdempotencyClaim(deps: Pick<Deps, "db" | "now" | "sharedClock" | "config">, claim: IdempotencyClaim): Promise<boolean> {
  const renewed = await deps.db
    .updateTable("idempotency_keys")
    .set((eb) => ({ locked_until: eb.fn<Date>("greatest", ["locked_until", sharedNowPlus(deps, deps.config.idempotencyLockMs)]) }))
    .where((eb) => eb.and(byKey(claim.scope, claim.key)))
    .where("state", "=", "in_flight")
    .where("locked_until", "=", claim.lockedUntil)
    .returning("locked_until")
    .executeTakeFirst();
  if (!renewed) return false;
  claim.lockedUntil = renewed.locked_until;
  return true;
}

/** Frees a claimed key without storing an answer (the request failed with a 5xx): a retry runs again. */
export async function releaseIdempotencyClaim(deps: Pick<Deps, "db">, claim: IdempotencyClaim): Promise<void> {
  const id = byKey(claim.scope, claim.key);
  await deps.db
    .deleteFrom("idempotency_keys")
    .where((eb) => eb.and(id))
    .where("state", "=", "in_flight")
    .where("locked_until", "=", claim.lockedUntil)
    .execute();
}
