/**
 * The one sync schedule of every pending subject (contract §8) — direct payments of any provider, provider
 * B's checkouts, permit charges and permits: a chain of jobs, one per step, step `n` due
 * {@link syncOffsetMs}(n) after the subject's creation (5 s, 15 s, 30 s, 1 min, then every 5 min up to 24 h:
 * the contract's times read as offsets after creation, for every subject alike). Each step enqueues the
 * next one not yet due while the subject is pending; past 24 h the chain stops and the subject is flagged for the
 * operator (`stuck-payments.ts`), never assumed failed. The sweeper's clause ({@link SyncChain.resume})
 * re-creates a chain whose job was lost.
 *
 * Queues: one per provider, `<provider>-sync` (`syncQueueOf`, `jobs/queues.ts`): `providerA-sync` carries provider A's
 * direct payments, `providerB-sync` provider B's checkouts, charges and permits, a third provider's
 * direct payments go to its own. The job name says which kind of subject a job is for; `src/jobs/`
 * registers the queues of the providers a gateway runs and each chain's step.
 *
 * A chain is declared here ({@link defineSyncChain}) without its step: the module that starts a chain
 * (a payment's creation) and the one that runs its step both import the declaration, never each other.
 */
import type { ExpressionBuilder, ReferenceExpression } from "kysely";
import { syncQueueOf } from "../../jobs/queues.ts";
import type { ProviderName } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";

/** Contract §8's schedule: the first offsets, the interval after them, and the age past which no step is due. */
export const SYNC_SCHEDULE = {
  firstMs: [5_000, 15_000, 30_000, 60_000],
  everyMs: 5 * 60_000,
  horizonMs: 24 * 60 * 60_000,
} as const;

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
  /** The job name on the provider's sync queue; unique across chains (it picks the step to run). */
  jobName: string;
  /** The field of the job data (and of the log lines) that names the subject: `paymentId`, `chargeId`… */
  idField: Field;
  /** What the log lines call one job: `provider B sync`, `permit charge sync`… */
  label: string;
  /** Logs that the subject is still pending once the schedule has run out (24 h), with the step's `context`. */
  logExpired(logger: Deps["logger"], subjectId: string, context: Record<string, unknown>): void;
  /**
   * The provider of every subject of this chain (provider B's checkouts, charges and permits); left out
   * when subjects belong to different providers (direct payments): each step then names its own.
   */
  provider?: ProviderName;
}

/** One subject's place in its chain. */
export interface SyncStepInput {
  subjectId: string;
  /** The subject's provider, whose queue its chain runs on (the chain's own when its spec names one). */
  provider?: ProviderName;
  createdAt: Date;
  step: number;
}

/** A subject still pending, as a sweeper clause reads it. */
export interface PendingSubject {
  id: string;
  provider?: ProviderName;
  created_at: Date;
}

type QueueDeps = Pick<Deps, "queue" | "logger" | "now">;

// biome-ignore lint/correctness/noUnusedVariables: the subject field names the chain's job data type at the call sites
export interface SyncChain<Field extends string> {
  readonly jobName: string;
  /** One id per subject and step: a duplicate enqueue of a step is a no-op. */
  jobId(subjectId: string, step: number): string;
  /** Enqueues step `step` at its due time (or now). Never throws: the sweeper covers a failure. */
  enqueue(deps: QueueDeps, input: SyncStepInput & { now?: boolean }): Promise<boolean>;
  /**
   * After a step that left the subject pending: enqueues the next step not yet due (a late step does not
   * make the ones it overran run in a burst), or logs the expiry past 24 h (with `context`).
   */
  enqueueNext(deps: QueueDeps, input: SyncStepInput & { context?: Record<string, unknown> }): Promise<void>;
  /**
   * Sweeper clause: each of `pending` (subjects still pending and younger than 24 h) whose chain has no
   * live job around its due step gets that step now. Returns how many were enqueued.
   */
  resume(deps: QueueDeps, pending: readonly PendingSubject[]): Promise<number>;
}

/**
 * A sync chain for one kind of subject.
 *
 * @example
 * ```ts
 * const chain = defineSyncChain({ jobName: "confirm-permit", idField: "permitId", label: "permit sync", provider: "providerB", logExpired });
 * await chain.enqueue(deps, { subjectId: permitId, createdAt: now, step: 0 });
 * ```
 */
export function defineSyncChain<Field extends string>(spec: SyncChainSpec<Field>): SyncChain<Field> {
  const jobId = (subjectId: string, step: number): string => `${subjectId}.sync${step}`;
  const queueOf = (provider: ProviderName | undefined): string => {
    const name = spec.provider ?? provider;
    if (name === undefined) throw new Error(`the ${spec.label} of a subject needs its provider`);
    return syncQueueOf(name);
  };

  const enqueue: SyncChain<Field>["enqueue"] = async (deps, input) => {
    const delayMs = input.now ? 0 : Math.max(0, input.createdAt.getTime() + syncOffsetMs(input.step) - deps.now().getTime());
    const data = { [spec.idField]: input.subjectId, step: input.step } as SyncStepData<Field>;
    try {
      await deps.queue.add<SyncStepData<Field>>(queueOf(input.provider), spec.jobName, data, { jobId: jobId(input.subjectId, input.step), delayMs });
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
    async enqueueNext(deps, { context, ...input }) {
      const next = Math.max(input.step + 1, stepAfter(deps.now().getTime() - input.createdAt.getTime()));
      if (syncOffsetMs(next) > SYNC_SCHEDULE.horizonMs) {
        spec.logExpired(deps.logger, input.subjectId, context ?? {});
        return;
      }
      await enqueue(deps, { ...input, step: next });
    },
    async resume(deps, pending) {
      const now = deps.now();
      let enqueued = 0;
      for (const row of pending) {
        const step = stepAfter(now.getTime() - row.created_at.getTime());
        const queue = queueOf(row.provider);
        const candidates = [step - 1, step, step + 1].filter((s) => s >= 0);
        const live = await Promise.all(candidates.map((s) => deps.queue.has(queue, jobId(row.id, s))));
        if (live.some(Boolean)) continue;
        const subject = { subjectId: row.id, createdAt: row.created_at, step, now: true };
        if (await enqueue(deps, row.provider === undefined ? subject : { ...subject, provider: row.provider })) enqueued++;
      }
      if (enqueued > 0) deps.logger.info({ enqueued }, `sweeper re-enqueued ${spec.label}s whose job was missing`);
      return enqueued;
    },
  };
}

/**
 * The sweep's test of a pending subject's creation time, for a chain whose first step its creator enqueues at once
 * (direct payments, payouts and refunds): created at least the first step's offset ago — before that, the creating
 * process's own enqueue may still be under way — or dated more than that offset ahead of `now`. Only a clock ahead
 * writes such a date (`created_at` is the writing process's clock: docs/fleet.md, "Clocks"); if that process's
 * enqueue failed too, nothing else would take the subject until this clock caught up (minutes), so it is swept at
 * once (its chain's live jobs are still looked for first: `resume`).
 *
 * @example
 * ```ts
 * query.where((eb) => sweepableByAge(eb, "created_at", deps.now()))
 * ```
 */
export function sweepableByAge<DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>, column: ReferenceExpression<DB, TB>, now: Date) {
  const firstMs = syncOffsetMs(0);
  return eb.or([eb(column, "<=", new Date(now.getTime() - firstMs)), eb(column, ">", new Date(now.getTime() + firstMs))]);
}

/** The oldest creation time a subject may have and still be on its schedule at `now`. */
export function syncWindowStart(now: Date): Date {
  return new Date(now.getTime() - SYNC_SCHEDULE.horizonMs);
}
