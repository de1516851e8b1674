/**
 * Receiving one provider B IPN (contract §5), after the route has read its body: find the checkout by
 * token, verify the hash with the credential version that checkout was made with, store the IPN without
 * its hash, and enqueue its processing. Answers fast; the `ipn` job does the rest.
 *
 * | IPN | Answer |
 * |---|---|
 * | verified | 200, stored once (a duplicate is recognised by its body), processed by the `ipn` job |
 * | wrong hash | 401, nothing stored or changed; counted and rate-limited (429 past the budget) |
 * | unknown token | 200, kept as an orphan (capped, 7 days, rate-limited) |
 * | no token | 200 (a probe) |
 */
import { createHash } from "node:crypto";
import type { JsonValue } from "../../db/schema.ts";
import { RateLimitedError, UnauthorizedError } from "../../errors.ts";
import { hashDigest, ipnSubject, verifyIpnHash, withoutHash, type IpnData } from "../../providers/providerB/ipn.ts";
import { openProviderBMasterKey } from "../checkout/provider-b-account.ts";
import type { Deps } from "../deps.ts";
import { enqueueIpn } from "./ipn-jobs.ts";
import { MAX_ORPHANS, ORPHAN_RATE, ORPHAN_TTL_MS } from "./orphans.ts";

/** Wrong hashes accepted per second for one token before 429. */
const BAD_HASH_RATE = { rps: 1, burst: 20 };

export type IpnReceipt = { outcome: "stored" | "duplicate" | "orphan" | "orphan_dropped" | "probe" | "ignored"; ipnId?: number };

function digestOf(data: IpnData): string {
  return createHash("sha256").update(JSON.stringify(data)).digest("hex");
}

/**
 * Handles one parsed IPN. Throws {@link UnauthorizedError} for a wrong hash.
 *
 * @example
 * ```ts
 * const receipt = await receiveIpn(deps, parseIpnBody(type, text)); // then answer 200 { received: true }
 * ```
 */
export async function receiveIpn(deps: Deps, data: IpnData): Promise<IpnReceipt> {
  const subject = ipnSubject(data);
  if (!subject) return { outcome: "probe" };
  if (subject.kind === "permit") {
    // Permits arrive with their own issue; until then a permit IPN is acknowledged and left alone.
    deps.logger.info({ token: subject.token }, "permit IPN received; permits are not handled yet");
    return { outcome: "ignored" };
  }
  const stored = withoutHash(data) as Record<string, JsonValue>;
  const bodyDigest = digestOf(stored);
  const candidates = await deps.db
    .selectFrom("payments")
    .select(["id", "tenant_id", "environment", "credential_version"])
    .where("provider_transaction_id", "=", subject.token)
    .where("provider", "=", "providerB")
    .where("kind", "=", "checkout")
    .execute();

  if (candidates.length === 0) return keepOrphan(deps, { token: subject.token, body: stored, bodyDigest, hash: data.hash });

  // A token is unique per account and environment, not globally: the hash says which account sent it.
  for (const payment of candidates) {
    if (payment.credential_version === null) continue;
    const masterKey = await openProviderBMasterKey(deps, { tenantId: payment.tenant_id, environment: payment.environment, version: payment.credential_version });
    if (!masterKey || !verifyIpnHash(data.hash, masterKey)) continue;
    const inserted = await deps.db
      .insertInto("ipn_messages")
      .values({
        subject: "checkout",
        token: subject.token,
        payment_id: payment.id,
        tenant_id: payment.tenant_id,
        environment: payment.environment,
        body: stored,
        body_digest: bodyDigest,
        state: "received",
        received_at: deps.now(),
      })
      .onConflict((oc) => oc.columns(["payment_id", "body_digest"]).where("payment_id", "is not", null).doNothing())
      .returning(["id"])
      .executeTakeFirst();
    if (inserted) {
      const ipnId = Number(inserted.id);
      await enqueueIpn(deps, ipnId);
      return { outcome: "stored", ipnId };
    }
    // The same IPN again (a provider retry, or fifty at once): stored once already; nudge it if unprocessed.
    const existing = await deps.db
      .selectFrom("ipn_messages")
      .select(["id", "state"])
      .where("payment_id", "=", payment.id)
      .where("body_digest", "=", bodyDigest)
      .executeTakeFirst();
    if (existing?.state === "received") await enqueueIpn(deps, Number(existing.id));
    return { outcome: "duplicate", ipnId: existing ? Number(existing.id) : undefined };
  }

  const first = candidates[0]!;
  deps.logger.warn({ alert: "providerB_ipn_bad_hash", token: subject.token, tenantId: first.tenant_id, environment: first.environment }, "provider B IPN with a wrong hash refused");
  const decision = await deps.rateLimiter.consume(`ipn-bad-hash:${subject.token}`, BAD_HASH_RATE);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
  throw new UnauthorizedError("The IPN's hash does not match the merchant account");
}

async function keepOrphan(deps: Deps, input: { token: string; body: Record<string, JsonValue>; bodyDigest: string; hash: unknown }): Promise<IpnReceipt> {
  const digest = hashDigest(input.hash);
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
    .where("token", "=", input.token)
    .where("body_digest", "=", input.bodyDigest)
    .executeTakeFirst();
  if (same) return { outcome: "orphan", ipnId: Number(same.id) };
  const inserted = await deps.db
    .insertInto("ipn_messages")
    .values({
      subject: "checkout",
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
  return { outcome: "orphan", ipnId: Number(inserted.id) };
}
