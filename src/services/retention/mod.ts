/**
 * Retention (issue 28): old rows that only record the past are pruned in bounded batches (`prune.ts`), by a
 * worker every `PRUNE_EVERY_MS` (the sweeper's turn, {@link pruneIfDue}) and by `passerelle prune`.
 *
 * @module
 */
import { Counter, type Registry } from "prom-client";
import type { Deps } from "../deps.ts";
import { PRUNED_TABLES, type PruneReport, pruneOldRows, totalPruned } from "./prune.ts";

export { PRUNED_TABLES, type PruneOptions, type PruneReport, type PrunedTable, pruneOldRows, type TablePruning, totalPruned } from "./prune.ts";

/**
 * Statements per table in one periodic run (20 000 rows at the default batch size): the sweeper's turn stays
 * well inside its 5-minute time limit, and a run that stops there with rows left is followed by another at the
 * sweeper's next turn (a minute later), so a backlog of millions is caught up within hours.
 */
export const PERIODIC_MAX_BATCHES = 20;

/** Per gateway (its deps): when this process last pruned, and whether that run left rows due. */
const lastRun = new WeakMap<object, { at: number; complete: boolean }>();

/**
 * The sweeper's turn: prunes when `config.retention.everyMs` has passed since this process's last run (0:
 * never), or at once when the last run stopped with rows left. Logs what it pruned.
 */
export async function pruneIfDue(deps: Deps, record?: (report: PruneReport) => void): Promise<void> {
  const every = deps.config.retention.everyMs;
  if (every <= 0) return;
  const now = deps.now().getTime();
  const last = lastRun.get(deps);
  if (last?.complete && now - last.at < every) return;
  const report = await pruneOldRows(deps, { maxBatches: PERIODIC_MAX_BATCHES });
  const complete = PRUNED_TABLES.every((table) => report[table].complete);
  lastRun.set(deps, { at: now, complete });
  record?.(report);
  if (totalPruned(report) > 0)
    deps.logger.info(
      { pruned: Object.fromEntries(PRUNED_TABLES.map((table) => [table, report[table].pruned])), complete },
      "retention pruned rows past their retention",
    );
}

/**
 * The counter `passerelle_pruned_rows_total{table}` on the gateway's registry (every table at 0 from the
 * start), raised by each periodic run of this process.
 */
export function registerPrunedRowsCounter(registry: Registry): (report: PruneReport) => void {
  const pruned = new Counter({
    name: "passerelle_pruned_rows_total",
    help: "Rows deleted by the retention's pruning (past RETENTION_*, nothing still needed), by table",
    labelNames: ["table"] as const,
    registers: [registry],
  });
  for (const table of PRUNED_TABLES) pruned.inc({ table }, 0);
  return (report) => {
    for (const table of PRUNED_TABLES) if (report[table].pruned > 0) pruned.inc({ table }, report[table].pruned);
  };
}
