/**
 * Bounded growth (issue 28): the rows that only record the past are deleted once their retention
 * (`RETENTION_*`, `config.retention`) is over, a bounded batch (`PRUNE_BATCH_SIZE`) per statement, oldest
 * first. What is still needed is never a candidate, whatever its age:
 *
 * | table                                 | pruned when older than its retention, and                              | kept whatever its age                                  |
 * |---------------------------------------|-------------------------------------------------------------------------|--------------------------------------------------------|
 * | `deliveries` (+ `delivery_attempts`)  | final (`succeeded` or `failed`), by its last change (`updated_at`), and no other delivery of its event pending | a pending delivery (due, retrying, or being attempted), and every delivery of its event |
 * | `events`                              | no delivery left, and its payment (if any) not pending                 | an event with any delivery left; one of an open payment |
 * | `ipn_messages`                        | processed or rejected, its payment final and its permit not pending or active | an IPN not yet processed; orphans (they expire on their own after 7 days) |
 * | `route_outcomes`                      | its minute is past                                                      | the routing window (at most a day; the retention is at least that) |
 * | `idempotency_keys`                    | its 24 hours of replay are over, and no request holds it               | a key within its replay window, or locked              |
 * | `audit_log`                           | it and every entry before it in its chain are past the retention (a chain is cut at its start only, where `audit_log_purges` records the cut) | an entry with a younger one before it in its chain |
 *
 * Nothing the ledger, the reconciliation report, the audit or the sync chain reads is touched: payments,
 * payouts, ledger entries, payment attempts and reconciliation differences are kept. The sync chain writes no log
 * of its own (its jobs are removed from the queue once finished, `jobs/bullmq.ts`).
 *
 * Several workers may prune at once: each batch locks the rows it takes with `for update skip locked`, so two
 * pruners take different rows and never wait on each other, and a row already gone is simply not found.
 *
 * @module
 */
import { sql } from "kysely";
import type { Deps } from "../deps.ts";
import { IDEMPOTENCY_TTL_MS } from "../idempotency/mod.ts";
import { sharedNow } from "../../db/shared-clock.ts";

/** The tables pruned, in the order a run prunes them (deliveries before the events they keep). */
export const PRUNED_TABLES = ["deliveries", "delivery_attempts", "events", "ipn_messages", "route_outcomes", "idempotency_keys", "audit_log"] as const;
export type PrunedTable = (typeof PRUNED_TABLES)[number];

/** What one table's pruning did in a run. */
export interface TablePruning {
  pruned: number;
  /** Statements that deleted rows (a delivery's attempts go in its delivery's batch). */
  batches: number;
  /** False when the run stopped at `maxBatches` with rows still past their retention. */
  complete: boolean;
}

export type PruneReport = Record<PrunedTable, TablePruning>;

export interface PruneOptions {
  /** Rows per statement. Default `config.retention.batchSize`. */
  batchSize?: number;
  /** Statements per table in this run; what is left waits for the next run. Default: until none is left. */
  maxBatches?: number;
}

type PruneDeps = Pick<Deps, "db" | "now" | "config">;

/** One batch of one rule: the rows it deleted, per table. */
type Batch = (deps: PruneDeps, cutoff: Date, limit: number) => Promise<Partial<Record<PrunedTable, number>>>;

const count = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/** Final deliveries, with their attempts, in one transaction (the attempts refer to the delivery). */
const pruneDeliveries: Batch = (deps, cutoff, limit) =>
  deps.db.transaction().execute(async (tx) => {
    const ids = (
      await tx
        .selectFrom("deliveries as d")
        .select("d.id")
        .where("d.state", "<>", "pending")
        .where("d.updated_at", "<", cutoff)
        // An event still being delivered to another target keeps its whole delivery log.
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("deliveries as o").select(sql`1`.as("one")).whereRef("o.event_id", "=", "d.event_id").where("o.state", "=", "pending"))),
        )
        .orderBy("d.updated_at")
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return {};
    const attempts = await tx.deleteFrom("delivery_attempts").where("delivery_id", "in", ids).executeTakeFirst();
    const deliveries = await tx.deleteFrom("deliveries").where("id", "in", ids).executeTakeFirst();
    return { deliveries: count(deliveries), delivery_attempts: count(attempts) };
  });

const pruneEvents: Batch = async (deps, cutoff, limit) => {
  const result = await deps.db
    .deleteFrom("events")
    .where("id", "in", (eb) =>
      eb
        .selectFrom("events as e")
        .select("e.id")
        .where("e.created_at", "<", cutoff)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom("deliveries as d").select(sql`1`.as("one")).whereRef("d.event_id", "=", "e.id"))))
        .where(({ or, eb: where, not, exists, selectFrom }) =>
          or([
            where("e.payment_id", "is", null),
            not(exists(selectFrom("payments as p").select(sql`1`.as("one")).whereRef("p.id", "=", "e.payment_id").where("p.state", "=", "pending"))),
          ]),
        )
        .orderBy("e.created_at")
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return { events: count(result) };
};

const pruneIpns: Batch = async (deps, cutoff, limit) => {
  const result = await deps.db
    .deleteFrom("ipn_messages")
    .where("id", "in", (eb) =>
      eb
        .selectFrom("ipn_messages as i")
        .select("i.id")
        .where("i.state", "in", ["processed", "rejected"])
        .where("i.received_at", "<", cutoff)
        .where(({ or, eb: where, not, exists, selectFrom }) =>
          or([
            where("i.payment_id", "is", null),
            not(exists(selectFrom("payments as p").select(sql`1`.as("one")).whereRef("p.id", "=", "i.payment_id").where("p.state", "=", "pending"))),
          ]),
        )
        .where(({ or, eb: where, not, exists, selectFrom }) =>
          or([
            where("i.permit_id", "is", null),
            not(
              exists(selectFrom("permits as m").select(sql`1`.as("one")).whereRef("m.id", "=", "i.permit_id").where("m.status", "in", ["pending", "active"])),
            ),
          ]),
        )
        .orderBy("i.received_at")
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return { ipn_messages: count(result) };
};

// route_outcomes and idempotency_keys have composite keys: a batch is named by its rows' ctid, read and deleted
// in one statement.
const pruneRouteOutcomes: Batch = async (deps, cutoff, limit) => {
  const result = await deps.db
    .deleteFrom("route_outcomes")
    .where(sql<string>`ctid`, "in", (eb) =>
      eb.selectFrom("route_outcomes").select(sql<string>`ctid`.as("ctid")).where("minute", "<", cutoff).orderBy("minute").limit(limit).forUpdate().skipLocked(),
    )
    .executeTakeFirst();
  return { route_outcomes: count(result) };
};

const pruneIdempotencyKeys: Batch = async (deps, cutoff, limit) => {
  // A key's 24 hours of replay end at `expires_at`: kept the rest of its retention after they started. Its
  // expiry and lock are on the shared clock (the database's, `db/shared-clock.ts`), as the requests that
  // hold it measure them: a pruner whose clock ran ahead would otherwise delete a key whose lock is live,
  // and the retry of a request still running would run it again.
  const expiredBy = new Date(cutoff.getTime() + IDEMPOTENCY_TTL_MS);
  const now = sharedNow(deps);
  const result = await deps.db
    .deleteFrom("idempotency_keys")
    .where(sql<string>`ctid`, "in", (eb) =>
      eb
        .selectFrom("idempotency_keys")
        .select(sql<string>`ctid`.as("ctid"))
        .where("expires_at", "<=", expiredBy)
        .where("expires_at", "<=", now)
        .where("locked_until", "<=", now)
        .orderBy("expires_at")
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return { idempotency_keys: count(result) };
};

/**
 * A chain's oldest entries past the retention (issue 30 point 5): the only deletion the audit log's trigger lets
 * through, in a transaction that says so (`passerelle.audit_purge`). A chain is only ever cut at its start, and the
 * cut is recorded (the last entry's seq and hash) so that `passerelle audit` checks the chain from there.
 */
const pruneAuditLog: Batch = (deps, cutoff, limit) =>
  deps.db.transaction().execute(async (tx) => {
    await sql`select set_config('passerelle.audit_purge', 'on', true)`.execute(tx);
    let deleted = 0;
    const done = new Set<string>();
    // Chain after chain, oldest entry first, until the batch is full or no chain has an entry past the retention.
    while (deleted < limit) {
      let oldest = tx.selectFrom("audit_log").select("chain").where("at", "<", cutoff);
      if (done.size > 0) oldest = oldest.where("chain", "not in", [...done]);
      const chain = (await oldest.orderBy("at").limit(1).executeTakeFirst())?.chain;
      if (!chain) break;
      done.add(chain);
      // One purge of a chain at a time (two would record one cut twice). Appends take no part: they go on from the
      // chain's head (`audit_chain_heads`), which a cut leaves where it is, and never read the entries cut.
      await sql`select pg_advisory_xact_lock(hashtext(${`audit-log:${chain}`}))`.execute(tx);
      const first = await tx
        .selectFrom("audit_log")
        .select(["seq", "hash", "at"])
        .where("chain", "=", chain)
        .orderBy("seq")
        .limit(limit - deleted)
        .execute();
      const firstYoung = first.findIndex((row) => row.at >= cutoff);
      const last = (firstYoung === -1 ? first : first.slice(0, firstYoung)).at(-1);
      if (!last) continue;
      deleted += count(await tx.deleteFrom("audit_log").where("chain", "=", chain).where("seq", "<=", last.seq).executeTakeFirst());
      await tx.insertInto("audit_log_purges").values({ chain, through_seq: last.seq, through_hash: last.hash, purged_at: deps.now() }).execute();
    }
    return { audit_log: deleted };
  });

/** Each rule: the table whose rows it counts in batches, its retention, its batch. */
const RULES: { table: PrunedTable; retentionMs: (config: Deps["config"]) => number; batch: Batch }[] = [
  { table: "deliveries", retentionMs: (c) => c.retention.deliveriesMs, batch: pruneDeliveries },
  { table: "events", retentionMs: (c) => c.retention.eventsMs, batch: pruneEvents },
  { table: "ipn_messages", retentionMs: (c) => c.retention.ipnsMs, batch: pruneIpns },
  { table: "route_outcomes", retentionMs: (c) => c.retention.routeOutcomesMs, batch: pruneRouteOutcomes },
  { table: "idempotency_keys", retentionMs: (c) => c.retention.idempotencyKeysMs, batch: pruneIdempotencyKeys },
  { table: "audit_log", retentionMs: (c) => c.retention.auditLogMs, batch: pruneAuditLog },
];

/**
 * Deletes every row past its retention that nothing needs any more, `batchSize` rows per statement, table
 * by table, until none is left or `maxBatches` statements were made for a table.
 *
 * @example
 * ```ts
 * const report = await pruneOldRows(deps, { maxBatches: 100 });
 * report.events.pruned; // events deleted
 * report.events.complete; // false: more are due, the next run goes on
 * ```
 */
export async function pruneOldRows(deps: PruneDeps, options: PruneOptions = {}): Promise<PruneReport> {
  const limit = options.batchSize ?? deps.config.retention.batchSize;
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  const report = Object.fromEntries(PRUNED_TABLES.map((table) => [table, { pruned: 0, batches: 0, complete: true }])) as PruneReport;
  for (const rule of RULES) {
    const cutoff = new Date(deps.now().getTime() - rule.retentionMs(deps.config));
    for (let made = 0; ; made++) {
      if (made >= maxBatches) {
        report[rule.table].complete = false;
        break;
      }
      const deleted = await rule.batch(deps, cutoff, limit);
      for (const [table, rows] of Object.entries(deleted) as [PrunedTable, number][]) {
        report[table].pruned += rows;
        if (rows > 0) report[table].batches++;
      }
      if ((deleted[rule.table] ?? 0) < limit) break;
    }
  }
  report.delivery_attempts.complete = report.deliveries.complete;
  return report;
}

/** Rows deleted in all, over every table of a report. */
export function totalPruned(report: PruneReport): number {
  return PRUNED_TABLES.reduce((sum, table) => sum + report[table].pruned, 0);
}
