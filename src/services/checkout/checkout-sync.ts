/**
 * The `providerB-sync` job (contract §8): confirms one pending checkout with provider B on a fixed
 * schedule after its creation — 5 s, 15 s, 30 s, 1 min, then every 5 min up to 24 h — so that a lost IPN
 * never means a lost payment. Still pending after 24 h → flagged for the operator (an alert log line),
 * never assumed failed. The sweeper re-creates a missing chain (see {@link sweepCheckoutSyncs}).
 */
import type { PaymentState } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { confirmAndApply } from "./apply-confirmation.ts";

export const PROVIDER_B_SYNC_QUEUE = "providerB-sync";
export const SYNC_JOB = "confirm-checkout";
const DAY_MS = 24 * 3600 * 1000;
const FIRST_OFFSETS_MS = [5_000, 15_000, 30_000, 60_000];
const EVERY_MS = 5 * 60_000;

export interface SyncJobData {
  paymentId: string;
  /** 0-based position in the schedule. */
  step: number;
}

/** When step `step` is due, in milliseconds after the checkout's creation. */
export function syncOffsetMs(step: number): number {
  if (step < FIRST_OFFSETS_MS.length) return FIRST_OFFSETS_MS[step]!;
  return FIRST_OFFSETS_MS[FIRST_OFFSETS_MS.length - 1]! + EVERY_MS * (step - FIRST_OFFSETS_MS.length + 1);
}

/** The job id of one step: one id per step, so a duplicate enqueue of a step is a no-op. */
export function syncJobId(paymentId: string, step: number): string {
  return `${paymentId}.sync${step}`;
}

/** Enqueues step `step` at its due time (or now, when it is past). Never throws: the sweeper covers a failure. */
export async function enqueueCheckoutSync(deps: Pick<Deps, "queue" | "logger" | "now">, input: { paymentId: string; createdAt: Date; step: number; now?: boolean }): Promise<boolean> {
  const delayMs = input.now ? 0 : Math.max(0, input.createdAt.getTime() + syncOffsetMs(input.step) - deps.now().getTime());
  try {
    await deps.queue.add<SyncJobData>(PROVIDER_B_SYNC_QUEUE, SYNC_JOB, { paymentId: input.paymentId, step: input.step }, { jobId: syncJobId(input.paymentId, input.step), delayMs });
    return true;
  } catch (err) {
    deps.logger.warn({ err, paymentId: input.paymentId, step: input.step }, "could not enqueue a provider B sync; the sweeper will");
    return false;
  }
}

/**
 * One run of the sync job: confirm and apply, then enqueue the next step while the checkout is pending
 * and younger than 24 h. A provider failure is logged and the schedule goes on.
 */
export async function syncCheckout(deps: Deps, job: SyncJobData): Promise<void> {
  const payment = await deps.db.selectFrom("payments").select(["id", "state", "created_at", "provider", "kind"]).where("id", "=", job.paymentId).executeTakeFirst();
  if (!payment || payment.provider !== "providerB" || payment.kind !== "checkout" || payment.state !== "pending") return;
  let state: PaymentState = payment.state;
  try {
    const result = await confirmAndApply(deps, payment.id);
    if (result.outcome !== "mismatch") state = result.state;
  } catch (err) {
    deps.logger.warn({ err, paymentId: payment.id, step: job.step }, "provider B sync could not confirm; trying again at the next step");
  }
  if (state !== "pending") return;
  const next = job.step + 1;
  if (syncOffsetMs(next) > DAY_MS) {
    deps.logger.error({ alert: "providerB_checkout_stuck", paymentId: payment.id }, "provider B checkout still pending after 24 h; left pending for the operator");
    return;
  }
  await enqueueCheckoutSync(deps, { paymentId: payment.id, createdAt: payment.created_at, step: next });
}

/** The first step not yet due at `elapsedMs` after creation. */
function stepAfter(elapsedMs: number): number {
  let step = 0;
  while (syncOffsetMs(step) <= elapsedMs) step++;
  return step;
}

/**
 * Sweeper clause: every pending provider B checkout younger than 24 h whose sync chain has no live job
 * (Redis lost, a crash between two steps) gets a sync now. Bounded per run.
 */
export async function sweepCheckoutSyncs(deps: Pick<Deps, "db" | "queue" | "logger" | "now">, options: { limit?: number } = {}): Promise<number> {
  const now = deps.now();
  const rows = await deps.db
    .selectFrom("payments")
    .select(["id", "created_at"])
    .where("provider", "=", "providerB")
    .where("kind", "=", "checkout")
    .where("state", "=", "pending")
    .where("created_at", ">", new Date(now.getTime() - DAY_MS))
    .orderBy("created_at")
    .limit(options.limit ?? 1000)
    .execute();
  let enqueued = 0;
  for (const row of rows) {
    const step = stepAfter(now.getTime() - row.created_at.getTime());
    const candidates = [step - 1, step, step + 1].filter((s) => s >= 0);
    const live = await Promise.all(candidates.map((s) => deps.queue.has(PROVIDER_B_SYNC_QUEUE, syncJobId(row.id, s))));
    if (live.some(Boolean)) continue;
    if (await enqueueCheckoutSync(deps, { paymentId: row.id, createdAt: row.created_at, step, now: true })) enqueued++;
  }
  if (enqueued > 0) deps.logger.info({ enqueued }, "sweeper re-enqueued provider B syncs whose job was missing");
  return enqueued;
}
