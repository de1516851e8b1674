/**
 * The sync chain of a pending direct payment (contract §8), on the schedule every pending subject follows
 * (`payments/sync-chain.ts`: 5 s, 15 s, 30 s, 1 min, then every 5 min after its creation, up to 24 h) and
 * on its provider's queue: `providerA-sync` for provider A's, `<provider>-sync` for another's. Each step
 * reads the payment again from its provider and applies the answer (`refresh.ts`); still pending after
 * 24 h, it is left for the operator (logged at `warn`, listed by `GET /admin/payments/stuck`), never
 * assumed failed.
 *
 * Step 0 is held in the process that made the payment (`first-sync.ts`) and skipped when the payment
 * settles before it is due. The sweeper's clause ({@link sweepDirectPaymentSyncs}) re-creates a chain whose
 * job vanished (Redis flushed, a process stopped while holding step 0).
 */
import { precompile } from "../../db/precompiled.ts";
import type { Deps } from "../deps.ts";
import { defineSyncChain, sweepableByAge, syncWindowStart, type SyncStepData } from "../payments/sync-chain.ts";
import { syncFromProvider } from "./refresh.ts";

export type DirectPaymentSyncJobData = SyncStepData<"paymentId">;

/** Job name `sync` on the payment's provider's queue (the name `providerA-sync` jobs have always had). */
export const DIRECT_PAYMENT_SYNC = defineSyncChain({
  jobName: "sync",
  idField: "paymentId",
  label: "direct payment sync",
  logExpired: (logger, paymentId, context) => logger.warn({ paymentId, ...context }, "direct payment still pending after 24 h: left for the operator"),
});

type SyncDeps = Pick<Deps, "db" | "queue" | "logger" | "now" | "config" | "keyring" | "providers" | "metrics" | "syncHold" | "caches">;

/** Precompiled: one run per payment at least (usually finding it final already). */
const paymentById = precompile<{ id: string }>()((db, p) => db.selectFrom("payments").selectAll().where("id", "=", p.id));

/**
 * One step of the chain: read the payment from its provider and apply it; when it is still pending,
 * enqueue the next step (or, past 24 h, stop and leave it for the operator).
 *
 * @example
 * ```ts
 * await syncDirectPayment(deps, { paymentId: "pay_…", step: 0 });
 * ```
 */
export async function syncDirectPayment(deps: SyncDeps, job: DirectPaymentSyncJobData): Promise<void> {
  const row = (await paymentById(deps.db, { id: job.paymentId })).rows[0];
  if (row?.kind !== "direct_payment" || row.state !== "pending") return;
  const after = await syncFromProvider(deps, row);
  if (after.state !== "pending") return;
  // A job queued before the chain (`{ paymentId, attempt }`) goes on from its position.
  const step = job.step ?? (job as { attempt?: number }).attempt ?? 0;
  await DIRECT_PAYMENT_SYNC.enqueueNext(deps, {
    subjectId: row.id,
    provider: row.provider,
    createdAt: row.created_at,
    step,
    context: { tenantId: row.tenant_id, environment: row.environment },
  });
}

/**
 * The sweeper's clause (contract §8): pending direct payments whose first step is due and whose chain has
 * no live job get their due step now. Younger ones are left alone: their first step may be held in the
 * process that made them. Bounded per sweep; what is left waits for the next one.
 *
 * @example
 * ```ts
 * const { enqueued } = await sweepDirectPaymentSyncs(deps);
 * ```
 */
export async function sweepDirectPaymentSyncs(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now">,
  options: { batchSize?: number } = {},
): Promise<{ due: number; enqueued: number }> {
  const now = deps.now();
  const rows = await deps.db
    .selectFrom("payments")
    .select(["id", "provider", "created_at"])
    .where("state", "=", "pending")
    .where("kind", "=", "direct_payment")
    .where("created_at", ">", syncWindowStart(now))
    .where((eb) => sweepableByAge(eb, "created_at", now))
    .orderBy("created_at")
    .limit(options.batchSize ?? 500)
    .execute();
  const enqueued = await DIRECT_PAYMENT_SYNC.resume(deps, rows);
  return { due: rows.length, enqueued };
}
