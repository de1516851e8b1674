/**
 * The sync schedule of contract §8 — 5 s, 15 s, 30 s, 1 min, then every 5 min up to 24 h — and the
 * `providerB-sync` chain built on it: one job per step, due at a fixed offset after the subject's
 * creation, each step enqueuing the next while the subject is pending, and a sweeper clause that
 * re-creates a chain whose job was lost. Checkouts, permit charges and permits each define one chain
 * ({@link defineSyncChain}) and keep only their own load-and-confirm step.
 *
 * Provider A's direct payments read the same schedule as waits between runs, with the position kept in
 * the row (`direct-payments/sync-jobs.ts`); they share {@link SYNC_SCHEDULE} only.
 */
import type { Deps } from "../deps.ts";

/** Contract §8's schedule: the first waits, the wait after them, and the age past which no run is due. */
export const SYNC_SCHEDULE = {
  firstMs: [5_000, 15_000, 30_000, 60_000],
  everyMs: 5 * 60_000,
  horizonMs: 24 * 60 * 60_000,
} as const;

/** The queue every provider B chain runs on; the job name says which kind of subject a job is for. */
export const PROVIDER_B_SYNC_QUEUE = "providerB-sync";

/** When step `step` of a chain is due, in milliseconds after its subject's creation. */
export function syncOffsetMs(step: number): number {
  const first = SYNC_SCHEDULE.firstMs;
  if (step < first.length) return first[step]!;
  return first[first.length - 1]! + SYNC_SCHEDULE.everyMs * (step - first.length + 1);
}

/** The first step not yet due at `elapsedMs` after creation. */
function stepAfter(elapsedMs: number): number {
  let step = 0;
  while (syncOffsetMs(step) <= elapsedMs) step++;
  return step;
}

/** The data of one chain job: the subject's id under the chain's field name, and the 0-based step. */
export type SyncStepData<Field extends string> = { [K in Field]: string } & {
  /** 0-based position in the schedule. */
  step: number;
};

export interface SyncChainSpec<Field extends string> {
  /** The job name on {@link PROVIDER_B_SYNC_QUEUE}. */
  jobName: string;
  /** The field of the job data (and of the log lines) that names the subject: `paymentId`, `chargeId`… */
  idField: Field;
  /** What the log lines call one job: `provider B sync`, `permit charge sync`… */
  label: string;
  /** Logs that the subject is still pending once the schedule has run out (24 h). */
  logExpired(logger: Deps["logger"], subjectId: string): void;
}

/** One subject's place in its chain. */
export interface SyncStepInput {
  subjectId: string;
  createdAt: Date;
  step: number;
}

// biome-ignore lint/correctness/noUnusedVariables: the subject field names the chain's job data type at the call sites
export interface SyncChain<Field extends string> {
  readonly jobName: string;
  /** One id per subject and step: a duplicate enqueue of a step is a no-op. */
  jobId(subjectId: string, step: number): string;
  /** Enqueues step `step` at its due time (or now). Never throws: the sweeper covers a failure. */
  enqueue(deps: Pick<Deps, "queue" | "logger" | "now">, input: SyncStepInput & { now?: boolean }): Promise<boolean>;
  /** After a step that left the subject pending: enqueues the next step, or logs the expiry past 24 h. */
  enqueueNext(deps: Pick<Deps, "queue" | "logger" | "now">, input: SyncStepInput): Promise<void>;
  /**
   * Sweeper clause: each of `pending` (subjects still pending and younger than 24 h) whose chain has no
   * live job around its due step gets that step now. Returns how many were enqueued.
   */
  resume(deps: Pick<Deps, "queue" | "logger" | "now">, pending: readonly { id: string; created_at: Date }[]): Promise<number>;
}

/**
 * A `providerB-sync` chain for one kind of subject.
 *
 * @example
 * ```ts
 * const chain = defineSyncChain({ jobName: "confirm-permit", idField: "permitId", label: "permit sync", logExpired });
 * await chain.enqueue(deps, { subjectId: permitId, createdAt: now, step: 0 });
 * ```
 */
export function defineSyncChain<Field extends string>(spec: SyncChainSpec<Field>): SyncChain<Field> {
  const jobId = (subjectId: string, step: number): string => `${subjectId}.sync${step}`;

  const enqueue: SyncChain<Field>["enqueue"] = async (deps, input) => {
    const delayMs = input.now ? 0 : Math.max(0, input.createdAt.getTime() + syncOffsetMs(input.step) - deps.now().getTime());
    const data = { [spec.idField]: input.subjectId, step: input.step } as SyncStepData<Field>;
    try {
      await deps.queue.add<SyncStepData<Field>>(PROVIDER_B_SYNC_QUEUE, spec.jobName, data, { jobId: jobId(input.subjectId, input.step), delayMs });
      return true;
    } catch (err) {
      deps.logger.warn({ err, [spec.idField]: input.subjectId, step: input.step }, `could not enqueue a ${spec.label}; the sweeper will`);
      return false;
    }
  };

  return {
    jobName: spec.jobName,
    jobId,
    enqueue,
    async enqueueNext(deps, input) {
      const next = input.step + 1;
      if (syncOffsetMs(next) > SYNC_SCHEDULE.horizonMs) {
        spec.logExpired(deps.logger, input.subjectId);
        return;
      }
      await enqueue(deps, { subjectId: input.subjectId, createdAt: input.createdAt, step: next });
    },
    async resume(deps, pending) {
      const now = deps.now();
      let enqueued = 0;
      for (const row of pending) {
        const step = stepAfter(now.getTime() - row.created_at.getTime());
        const candidates = [step - 1, step, step + 1].filter((s) => s >= 0);
        const live = await Promise.all(candidates.map((s) => deps.queue.has(PROVIDER_B_SYNC_QUEUE, jobId(row.id, s))));
        if (live.some(Boolean)) continue;
        if (await enqueue(deps, { subjectId: row.id, createdAt: row.created_at, step, now: true })) enqueued++;
      }
      if (enqueued > 0) deps.logger.info({ enqueued }, `sweeper re-enqueued ${spec.label}s whose job was missing`);
      return enqueued;
    },
  };
}

/** The oldest creation time a subject may have and still be on its schedule at `now`. */
export function syncWindowStart(now: Date): Date {
  return new Date(now.getTime() - SYNC_SCHEDULE.horizonMs);
}
