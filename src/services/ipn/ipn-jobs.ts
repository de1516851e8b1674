/**
 * The `ipn` job (contract §8; the queue, its job data and `enqueueIpn` are in `jobs/queues.ts`): one job per
 * stored IPN, carrying only its id. The job confirms with
 * provider B and applies the answer — a checkout's (`confirmAndApply`), a permit charge's through its
 * invoice (`confirmChargeAndApply`), or a permit's (`confirmPermitAndApply`); the sweeper re-enqueues
 * stored IPNs that are still unprocessed and have no live job.
 */
import { precompile } from "../../db/precompiled.ts";
import { enqueueIpn, isIpnJobLive } from "../../jobs/queues.ts";
import { confirmAndApply } from "../checkout/apply-confirmation.ts";
import type { Deps } from "../deps.ts";
import { confirmPermitAndApply } from "../permits/apply-permit-status.ts";
import { confirmChargeAndApply } from "../permits/charge-settle.ts";

/**
 * The `ipn` job: a stored, verified IPN only tells us to look — the confirm call decides. Already
 * processed (a duplicate job) → nothing to do. A provider failure throws, so the job is retried.
 */
export async function processIpn(deps: Deps, ipnId: number): Promise<void> {
  const [ipn] = (await ipnWithCharge(deps.db, { id: ipnId })).rows;
  if (ipn?.state !== "received" || (!ipn.payment_id && !ipn.permit_id)) return;
  try {
    if (ipn.permit_id) await confirmPermitAndApply(deps, ipn.permit_id, { ipnId });
    else if (ipn.charge_id) await confirmChargeAndApply(deps, ipn.charge_id, { ipnId });
    else await confirmAndApply(deps, ipn.payment_id!, { ipnId });
  } catch (error) {
    await deps.db
      .updateTable("ipn_messages")
      .set((eb) => ({ attempts: eb("attempts", "+", 1), last_error: error instanceof Error ? error.message.slice(0, 500) : "error" }))
      .where("id", "=", ipnId)
      .execute();
    throw error;
  }
}

/**
 * The IPN and, when its payment is a permit charge, the charge: one statement (it was two), compiled once
 * (`src/db/precompiled.ts`).
 */
const ipnWithCharge = precompile<{ id: number }>()((db, p) =>
  db
    .selectFrom("ipn_messages")
    .leftJoin("permit_charges", "permit_charges.payment_id", "ipn_messages.payment_id")
    .select(["ipn_messages.id", "ipn_messages.state", "ipn_messages.payment_id", "ipn_messages.permit_id", "permit_charges.id as charge_id"])
    .where("ipn_messages.id", "=", p.id)
    .limit(1),
);

/**
 * Sweeper clause: stored IPNs still `received` after `minAgeMs` (default 10 s) with no live job — the
 * enqueue failed, Redis was lost, or the process died between storing and processing — are enqueued again.
 */
export async function sweepUnprocessedIpns(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now">,
  options: { minAgeMs?: number; limit?: number } = {},
): Promise<number> {
  const before = new Date(deps.now().getTime() - (options.minAgeMs ?? 10_000));
  const rows = await deps.db
    .selectFrom("ipn_messages")
    .select("id")
    .where("state", "=", "received")
    .where("received_at", "<=", before)
    .orderBy("received_at")
    .orderBy("id")
    .limit(options.limit ?? 1000)
    .execute();
  let enqueued = 0;
  for (const row of rows) {
    const id = Number(row.id);
    if (await isIpnJobLive(deps, id)) continue;
    if (await enqueueIpn(deps, id)) enqueued++;
  }
  if (enqueued > 0) deps.logger.info({ enqueued }, "sweeper re-enqueued unprocessed IPNs");
  return enqueued;
}
