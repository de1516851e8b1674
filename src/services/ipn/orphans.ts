/**
 * Orphan IPNs (contract §5): an IPN whose token matches no checkout, permit charge or permit is answered
 * 200 (or provider B would retry it for nothing) and kept — at most {@link MAX_ORPHANS} at a time, for 7 days, rate-limited — with
 * a digest of its hash. When a checkout with that token appears (an IPN can outrun our insert), the orphan
 * is checked against that checkout's master key and processed like any IPN; a wrong one is dropped.
 */
import { checkoutProviderOf } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { enqueueIpn } from "../../jobs/queues.ts";

export const MAX_ORPHANS = 1_000;
export const ORPHAN_TTL_MS = 7 * 24 * 3600 * 1000;
/** Orphans accepted per second, across the gateway. */
export const ORPHAN_RATE = { rps: 5, burst: 50 };

/**
 * Re-matches the live orphans (of one token, or all) whose checkout now exists: a matching hash makes the
 * orphan a stored IPN of that checkout and enqueues it; a wrong one is deleted. Returns how many matched.
 */
export async function rematchOrphans(deps: Deps, options: { token?: string; limit?: number } = {}): Promise<number> {
  // Orphans are the token-signed notifications of the provider of checkouts and permits (chosen by what it does).
  const provider = checkoutProviderOf(deps);
  // Invoice tokens: a checkout's, or a permit charge's once provider B answered the charge.
  let invoiceOrphans = deps.db
    .selectFrom("ipn_messages as i")
    .innerJoin("payments as p", (join) =>
      join
        .onRef("p.provider_transaction_id", "=", "i.token")
        .on("p.provider", "=", provider.name)
        .on("p.kind", "in", ["checkout", "permit_charge", "direct_payment"]),
    )
    .select(["i.id", "i.hash_digest", "p.id as targetId", "p.tenant_id", "p.environment", "p.credential_version"])
    .where("i.state", "=", "orphan")
    .where("i.subject", "=", "checkout")
    .where("i.expires_at", ">", deps.now())
    .limit(options.limit ?? 200);
  let permitOrphans = deps.db
    .selectFrom("ipn_messages as i")
    .innerJoin("permits as p", "p.token", "i.token")
    .select(["i.id", "i.hash_digest", "p.id as targetId", "p.tenant_id", "p.environment", "p.credential_version"])
    .where("i.state", "=", "orphan")
    .where("i.subject", "=", "permit")
    .where("i.expires_at", ">", deps.now())
    .limit(options.limit ?? 200);
  if (options.token) {
    invoiceOrphans = invoiceOrphans.where("i.token", "=", options.token);
    permitOrphans = permitOrphans.where("i.token", "=", options.token);
  }
  const rows = [
    ...(await invoiceOrphans.execute()).map((row) => ({ ...row, column: "payment_id" as const })),
    ...(await permitOrphans.execute()).map((row) => ({ ...row, column: "permit_id" as const })),
  ];
  const signatures = provider.signatures;
  let matched = 0;
  for (const row of rows) {
    const id = Number(row.id);
    // Provider B's objects always carry the credential version they were made with.
    if (row.credential_version === null) continue;
    const account = { tenantId: row.tenant_id, environment: row.environment, credentialVersion: row.credential_version };
    const signed = await signatures.verifyDigest(deps, row.hash_digest, account);
    if (signed === null) continue;
    if (!signed) {
      deps.logger.warn({ ipnId: id, [row.column]: row.targetId }, "orphan IPN's hash does not match its object's master key: dropped");
      await deps.db.deleteFrom("ipn_messages").where("id", "=", id).execute();
      continue;
    }
    try {
      const updated = await deps.db
        .updateTable("ipn_messages")
        .set({ state: "received", [row.column]: row.targetId, tenant_id: row.tenant_id, environment: row.environment, hash_digest: null, expires_at: null })
        .where("id", "=", id)
        .where("state", "=", "orphan")
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) continue;
    } catch {
      // The same IPN was stored for that object meanwhile (the dedupe index): the orphan is redundant.
      await deps.db.deleteFrom("ipn_messages").where("id", "=", id).execute();
      continue;
    }
    matched++;
    await enqueueIpn(deps, id);
  }
  if (matched > 0) deps.logger.info({ matched }, "orphan IPNs re-matched to their checkout, charge or permit");
  return matched;
}

/** Sweeper clause: re-match orphans, then delete the expired ones. */
export async function sweepOrphans(deps: Deps): Promise<{ rematched: number; expired: number }> {
  const rematched = await rematchOrphans(deps);
  const deleted = await deps.db.deleteFrom("ipn_messages").where("state", "=", "orphan").where("expires_at", "<=", deps.now()).executeTakeFirst();
  return { rematched, expired: Number(deleted.numDeletedRows) };
}
