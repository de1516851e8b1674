/**
 * Receiving one provider B IPN (contract §5), after the route has read its body: find its object by token —
 * a checkout or a permit charge by `data[invoice][token]`, a permit by `data[permit][token]` — verify the
 * hash with the credential version that object was made with, store the IPN without its hash, and enqueue
 * its processing. Answers fast; the `ipn` job does the rest.
 *
 * | IPN | Answer |
 * |---|---|
 * | verified | 200, stored once (a duplicate is recognised by its body), processed by the `ipn` job |
 * | wrong hash | 401, nothing stored or changed; counted and rate-limited (429 past the budget) |
 * | unknown token | 200, kept as an orphan (capped, 7 days, rate-limited) |
 * | no token | 200 (a probe) |
 *
 * Why here and not in `providers/providerB/`: reading the body, finding its token and checking its hash
 * are provider B's (its inbound route parses, the port's `signatures` verify); storing, deduplicating,
 * keeping orphans, rate-limiting forgeries and queueing the confirm are the gateway's own bookkeeping over
 * its tables (`ipn_messages`, `payments`, `permits`), the same for any provider whose notifications name an
 * object by token and are signed with an account's secret. What a confirmed answer changes is applied by
 * the domain (`checkout/apply-confirmation.ts`, `permits/`).
 */
import { createHash } from "node:crypto";
import { CompiledQuery } from "kysely";
import { precompile } from "../../db/precompiled.ts";
import type { Environment, JsonValue } from "../../db/schema.ts";
import { RateLimitedError, UnauthorizedError } from "../../errors.ts";
import type { InboundNotice, IntakeReceipt } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { enqueueIpn } from "../../jobs/queues.ts";
import { followAbandonedAttempt } from "../payments/abandoned-attempts.ts";
import type { IpnSignerCache } from "./signer-cache.ts";
import { MAX_ORPHANS, ORPHAN_RATE, ORPHAN_TTL_MS, rematchOrphans } from "./orphans.ts";

/** Wrong hashes accepted per second for one token before 429. */
const BAD_HASH_RATE = { rps: 1, burst: 20 };

/** What the intake made of a token notice. */
export type IpnReceipt = IntakeReceipt;

/** A notification naming an object by the provider's token, as its inbound route described it (the port's token notice). */
export type SignedNotice = Omit<Extract<InboundNotice, { about: "token" }>, "about">;

function digestOf(json: string): string {
  return createHash("sha256").update(json).digest("hex");
}

/**
 * Handles one read IPN. Throws {@link UnauthorizedError} for a wrong hash.
 *
 * @example
 * ```ts
 * const receipt = await receiveIpn(deps, { provider: "providerB", subject, body, signature }); // then answer 200 { received: true }
 * ```
 */
export async function receiveIpn(deps: Deps, notice: SignedNotice): Promise<IpnReceipt> {
  const subject = notice.subject;
  if (!subject) return { outcome: "probe" };
  const signatures = deps.providers.get(notice.provider).signatures!;
  const stored = notice.body;
  // The body's JSON, made once: its digest, and the fast path's jsonb parameter (sent as text).
  const storedJson = JSON.stringify(stored);
  const bodyDigest = digestOf(storedJson);
  const signedBy = signatures.digest(notice.signature);

  // Fast path: a checkout's IPN signed by an account this process has already verified — look-up and
  // insert in one statement. Anything else (a first IPN of the account, a duplicate, an orphan, a wrong
  // hash, a permit) falls through to the full path below, which decides exactly as before.
  const signers = subject.kind === "checkout" && signedBy ? deps.caches.ipnSigners.get(signedBy) : undefined;
  if (signers) {
    const values = [subject.token, storedJson, bodyDigest, deps.now(), signers.join(","), notice.provider];
    const [inserted] = (await deps.db.executeQuery<{ id: string | number }>(CompiledQuery.raw(INSERT_SIGNED_CHECKOUT_IPN, values))).rows;
    if (inserted) {
      const ipnId = Number(inserted.id);
      await enqueueIpn(deps, ipnId);
      return { outcome: "stored", ipnId };
    }
  }
  // An invoice token is a checkout's or a permit charge's (each charge is an invoice of its own).
  const candidates: IpnTarget[] =
    subject.kind === "permit"
      ? (await permitsByToken(deps.db, { token: subject.token })).rows.map((permit) => ({ column: "permit_id", ...permit }))
      : (await paymentsByToken(deps.db, { token: subject.token, provider: notice.provider })).rows.map((payment) => ({ column: "payment_id", ...payment }));

  if (candidates.length === 0) {
    // An invoice a routed payment moved on from (failover): read again with the attempt's account, never trusting the body.
    if (subject.kind === "checkout" && (await followAbandonedAttempt(deps, { provider: notice.provider, providerPaymentId: subject.token })))
      return { outcome: "ignored" };
    return keepOrphan(deps, { provider: notice.provider, subject: subject.kind, token: subject.token, body: stored, bodyDigest, signedBy });
  }

  // A token is unique per account and environment, not globally: the hash says which account sent it.
  for (const target of candidates) {
    if (target.credential_version === null) continue;
    const account = { tenantId: target.tenant_id, environment: target.environment, credentialVersion: target.credential_version };
    if (!(await signatures.verify(deps, notice.signature, account))) continue;
    if (target.column === "payment_id" && signedBy) rememberSigner(deps.caches.ipnSigners, signedBy, target);
    const values = {
      provider: notice.provider,
      subject: subject.kind,
      token: subject.token,
      id: target.id,
      tenant_id: target.tenant_id,
      environment: target.environment,
      body: stored,
      body_digest: bodyDigest,
      received_at: deps.now(),
    };
    const [inserted] = (await insertVerified(deps.db, values, target.column)).rows;
    if (inserted) {
      const ipnId = Number(inserted.id);
      await enqueueIpn(deps, ipnId);
      return { outcome: "stored", ipnId };
    }
    // The same IPN again (a provider retry, or fifty at once): stored once already; nudge it if unprocessed.
    const existing = await deps.db
      .selectFrom("ipn_messages")
      .select(["id", "state"])
      .where(target.column, "=", target.id)
      .where("body_digest", "=", bodyDigest)
      .executeTakeFirst();
    if (existing?.state === "received") await enqueueIpn(deps, Number(existing.id));
    return { outcome: "duplicate", ipnId: existing ? Number(existing.id) : undefined };
  }

  const first = candidates[0]!;
  deps.logger.warn(
    { alert: `${notice.provider}_ipn_bad_hash`, provider: notice.provider, token: subject.token, tenantId: first.tenant_id, environment: first.environment },
    "IPN with a wrong hash refused",
  );
  const decision = await deps.rateLimiter.consume(`ipn-bad-hash:${subject.token}`, BAD_HASH_RATE);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
  throw new UnauthorizedError("The IPN's hash does not match the merchant account");
}

/**
 * The statements every IPN runs, precompiled (`src/db/precompiled.ts`): Kysely's build and compile cost
 * 13–17 µs for the look-up and 23 µs for the insert on this machine, against 5–7 µs to fill in a
 * precompiled one. The insert has one shape per target column.
 */
const paymentsByToken = precompile<{ token: string; provider: string }>()((db, p) =>
  db
    .selectFrom("payments")
    .select(["id", "tenant_id", "environment", "credential_version"])
    .where("provider_transaction_id", "=", p.token)
    .where("provider", "=", p.provider)
    // A direct payment by an invoice (provider B's SoftPay) is an invoice too.
    .where("kind", "in", ["checkout", "permit_charge", "direct_payment"]),
);
const permitsByToken = precompile<{ token: string }>()((db, p) =>
  db.selectFrom("permits").select(["id", "tenant_id", "environment", "credential_version"]).where("token", "=", p.token),
);
const insertVerified = precompile<{
  provider: string;
  subject: "checkout" | "permit";
  token: string;
  id: string;
  tenant_id: string;
  environment: Environment;
  body: Record<string, JsonValue>;
  body_digest: string;
  received_at: Date;
}>()((db, p, shape) => {
  const column = shape as IpnTarget["column"];
  return db
    .insertInto("ipn_messages")
    .values({
      provider: p.provider,
      subject: p.subject,
      token: p.token,
      [column]: p.id,
      tenant_id: p.tenant_id,
      environment: p.environment,
      body: p.body,
      body_digest: p.body_digest,
      state: "received",
      received_at: p.received_at,
    })
    .onConflict((oc) => oc.columns([column, "body_digest"]).where(column, "is not", null).doNothing())
    .returning(["id"]);
});

/**
 * The accounts — `tenant environment version` — whose master key this gateway has checked an IPN's hash
 * against and found equal, by the SHA-256 of that hash (`hashDigest`; the hash itself is not kept). A
 * version's master key never changes (a key rotation re-seals the same plaintext), so an entry never goes
 * stale and needs no TTL; it is bounded by count. Finding a digest here is the hash check: equal SHA-256
 * digests mean equal hashes, and looking a digest up leaks nothing an attacker can steer towards the real
 * hash. Several accounts may share a master key (two versions of one merchant account, most often).
 */
const SIGNERS_PER_HASH_MAX = 32;

export { createIpnSignerCache, type IpnSignerCache } from "./signer-cache.ts";

function rememberSigner(cache: IpnSignerCache, signedBy: string, target: IpnTarget): void {
  const account = `${target.tenant_id} ${target.environment} ${target.credential_version}`;
  const known = cache.get(signedBy) ?? [];
  if (known.includes(account) || known.length >= SIGNERS_PER_HASH_MAX) return;
  cache.set(signedBy, [...known, account]);
}

/**
 * The fast path's one statement: the checkout (or permit charge) of the token whose account is one of the
 * known signers ($5, comma-separated), its IPN inserted unless the same body is stored already. No row →
 * the full path. Written as SQL text (an `insert … select` with casts, which Kysely's builder would
 * compile per call); the same columns and conflict target as `insertVerified`. The body ($2) is the JSON
 * text its digest was made from, cast here, so that the driver does not `JSON.stringify` it a second time.
 */
const INSERT_SIGNED_CHECKOUT_IPN = `insert into "ipn_messages"
  ("provider", "subject", "token", "payment_id", "tenant_id", "environment", "body", "body_digest", "state", "received_at")
select $6::text, 'checkout', $1::text, "p"."id", "p"."tenant_id", "p"."environment", $2::text::jsonb, $3::text, 'received', $4::timestamptz
from "payments" as "p"
where "p"."provider_transaction_id" = $1::text and "p"."provider" = $6::text and "p"."kind" in ('checkout', 'permit_charge', 'direct_payment')
  and "p"."credential_version" is not null
  and ("p"."tenant_id" || ' ' || "p"."environment" || ' ' || "p"."credential_version") = any(string_to_array($5::text, ','))
limit 1
on conflict ("payment_id", "body_digest") where "payment_id" is not null do nothing
returning "id"`;

/** What an IPN may be about: a payment (checkout or permit charge) or a permit, with its credential version. */
interface IpnTarget {
  column: "payment_id" | "permit_id";
  id: string;
  tenant_id: string;
  environment: Environment;
  credential_version: number | null;
}

async function keepOrphan(
  deps: Deps,
  input: { provider: string; subject: "checkout" | "permit"; token: string; body: Record<string, JsonValue>; bodyDigest: string; signedBy: string | null },
): Promise<IpnReceipt> {
  const digest = input.signedBy;
  if (!digest) return { outcome: "orphan_dropped" };
  const decision = await deps.rateLimiter.consume("ipn-orphans", ORPHAN_RATE);
  const now = deps.now();
  const live = await deps.db
    .selectFrom("ipn_messages")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("state", "=", "orphan")
    .where("expires_at", ">", now)
    .executeTakeFirstOrThrow();
  if (!decision.allowed || Number(live.count) >= MAX_ORPHANS) {
    deps.logger.warn({ token: input.token, rateLimited: !decision.allowed }, "orphan IPN dropped: over the cap or the rate");
    return { outcome: "orphan_dropped" };
  }
  const same = await deps.db
    .selectFrom("ipn_messages")
    .select("id")
    .where("state", "=", "orphan")
    .where("subject", "=", input.subject)
    .where("token", "=", input.token)
    .where("body_digest", "=", input.bodyDigest)
    .executeTakeFirst();
  if (same) return { outcome: "orphan", ipnId: Number(same.id) };
  const inserted = await deps.db
    .insertInto("ipn_messages")
    .values({
      provider: input.provider,
      subject: input.subject,
      token: input.token,
      body: input.body,
      body_digest: input.bodyDigest,
      hash_digest: digest,
      state: "orphan",
      received_at: now,
      expires_at: new Date(now.getTime() + ORPHAN_TTL_MS),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  deps.logger.info({ token: input.token, ipnId: Number(inserted.id) }, "IPN for an unknown token kept as an orphan");
  // The payment may have recorded this token since we looked, and re-matched orphans before this one was in:
  // each side looks again after its own write, so one of them always sees the other (no wait for the sweep).
  await rematchOrphans(deps, { token: input.token });
  return { outcome: "orphan", ipnId: Number(inserted.id) };
}
