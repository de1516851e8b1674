/**
 * A seeded fault campaign (issue 28 point 3): realistic flows on the real servers while faults chosen by the
 * seed strike, then, once quiet, the checks of scripts/campaign/checks.ts. Ends with one line
 * `campaign seed=<n> flows=<n> faults=<n>: lost 0, twice 0, unbalanced 0, mismatches 0` (exit 1 on a violation).
 *
 *   bun run campaign -- --seed 7 --flows 30 --faults 6            (DATABASE_URL and REDIS_URL set)
 *   bun run campaign -- --seed 7 --flows 30 --faults 6 --fleet    (a fleet with servers of its own: no server needed)
 *   bun run campaign -- --seed 7 --flows 30 --faults 6 --dry-run  (prints the schedule only)
 *
 * The schedule (flows, faults and their offsets) is built whole from the seed first, so the same seed replays
 * the same schedule; what the processes do under it is timing, and may differ from run to run.
 */
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { checkAfterQuiet } from "./campaign/checks.ts";
import { campaignSettings, startCluster } from "./campaign/cluster.ts";
import { startFleetCluster } from "./campaign/fleet.ts";
import { strike } from "./campaign/faults.ts";
import { apiClient, createTenants, type Outcome, runFlow } from "./campaign/flows.ts";
import { buildSchedule, describeSchedule } from "./campaign/schedule.ts";

const USAGE = `usage: bun run campaign -- [--seed <n>] [--flows <n>] [--faults <n>] [--tenants <n>] [--api <n>] [--workers <n>]
                              [--span-ms <n>] [--quiet-ms <n>] [--dry-run] [--fleet [--redis-cluster]]
  --seed <n>      the schedule's seed (default: a random one, printed)
  --flows <n>     flows to run (default 100)          --faults <n>   faults to strike (default 10)
  --tenants <n>   merchants (default 2)               --api <n>, --workers <n>   processes (default 2 and 2)
  --span-ms <n>   over how long flows and faults are spread (default 250 ms per flow)
  --quiet-ms <n>  how long to wait for everything to settle before checking (default 420000: the
                  sync schedule's 5-minute step, for a payment whose notification was lost)
  --dry-run       print the schedule and exit
  --fleet         run on a fleet (deploy/fleet: HAProxy, PgBouncer) with a PostgreSQL and Redis of its own,
                  which the faults pg-restart and redis-node-kill then strike; needs no DATABASE_URL or REDIS_URL
  --redis-cluster with --fleet: a Redis Cluster of three masters instead of one Redis server`;

function count(text: string | undefined, name: string, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    process.stderr.write(`campaign: ${name} must be a whole number of at least ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return value;
}

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    seed: { type: "string" },
    flows: { type: "string" },
    faults: { type: "string" },
    tenants: { type: "string" },
    api: { type: "string" },
    workers: { type: "string" },
    "span-ms": { type: "string" },
    "quiet-ms": { type: "string" },
    "dry-run": { type: "boolean", default: false },
    fleet: { type: "boolean", default: false },
    "redis-cluster": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const seed = count(values.seed, "--seed", Math.floor(Math.random() * 2 ** 31));
const flows = count(values.flows, "--flows", 100);
const schedule = buildSchedule({
  seed,
  flows,
  faults: count(values.faults, "--faults", 10),
  tenants: count(values.tenants, "--tenants", 2, 1),
  apiNodes: count(values.api, "--api", 2, 1),
  workers: count(values.workers, "--workers", 2, 1),
  spanMs: count(values["span-ms"], "--span-ms", Math.max(1000, flows * 250), 1),
  fleet: values.fleet,
  redisNodes: values["redis-cluster"] ? 3 : 1,
});
if (values["redis-cluster"] && !values.fleet) {
  process.stderr.write(`campaign: --redis-cluster goes with --fleet\n${USAGE}\n`);
  process.exit(2);
}

if (values["dry-run"]) {
  process.stdout.write(`${describeSchedule(schedule)}\n`);
  process.exit(0);
}
const { DATABASE_URL, REDIS_URL } = process.env;
if (!values.fleet && (!DATABASE_URL || !REDIS_URL)) {
  process.stderr.write("campaign: set DATABASE_URL and REDIS_URL (the campaign runs on the real servers, in a database and key prefix of its own)\n");
  process.exit(2);
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Copies the `*.log` files of `dir` (removed with the fleet) to a folder of their own; returns its path. */
function keepLogs(dir: string, seed: number): string {
  const kept = mkdtempSync(join(tmpdir(), `passerelle-campaign-${seed}-logs-`));
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" }))
    if (name.endsWith(".log")) cpSync(join(dir, name), join(kept, name.replaceAll("/", "-")));
  return kept;
}
const startedAt = Date.now();
log(`campaign: seed ${seed}, ${schedule.flows.length} flows and ${schedule.faults.length} faults over ${schedule.options.spanMs} ms`);
const { apiNodes, workers } = schedule.options;
const quietMs = count(values["quiet-ms"], "--quiet-ms", 420_000, 1);
const settings = campaignSettings(schedule.options.spanMs, quietMs);
const cluster = values.fleet
  ? await startFleetCluster({ apiNodes, workers, redisCluster: values["redis-cluster"], log, settings })
  : await startCluster({ databaseUrl: DATABASE_URL!, redisUrl: REDIS_URL!, apiNodes, workers, settings });
let exitCode = 1;
// Interrupted: everything it started goes (a fleet's PostgreSQL is a daemon of pg_ctl's, outside this process group).
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    log(`campaign: ${signal}: stopping what it started`);
    void cluster.stop().finally(() => process.exit(130));
  });
try {
  const outcome: Outcome = { payments: [], refunds: [], payouts: [], permits: [], refused: [], unanswered: [], internalErrors: [], refundedAtProvider: [] };
  const call = apiClient(cluster, {
    onGiveUp: (what) => log(`campaign: gave up on ${what}`),
    onInternalError: (what) => {
      log(`campaign: 500 internal: ${what}`);
      outcome.internalErrors.push(what);
    },
  });
  const { admin, tenants } = await createTenants(cluster, call, schedule.options.tenants);
  log(`campaign: ${cluster.nodes.length} gateway processes up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  const t0 = Date.now();
  const at = (ms: number) => Bun.sleep(Math.max(0, t0 + ms - Date.now()));
  const running = [
    ...schedule.flows.map(async (flow) => {
      await at(flow.atMs);
      await runFlow({ flow, tenant: tenants[flow.tenant]!, call, cluster, outcome, seed });
    }),
    ...schedule.faults.map(async (fault) => {
      await at(fault.atMs);
      log(await strike({ fault, cluster, tenants, outcome }).catch((error) => `fault ${fault.id} ${fault.kind}: could not strike (${error})`));
    }),
  ];
  await Promise.all(running);
  log(
    `campaign: flows done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${outcome.payments.length} payments, ${outcome.refunds.length} refunds, ` +
      `${outcome.payouts.length} payouts, ${outcome.permits.length} permits, ${outcome.refused.length} refused; waiting for quiet`,
  );
  for (const refusal of outcome.refused) log(`  refused: ${refusal}`);
  const findings = await checkAfterQuiet({ cluster, call, admin, tenants, outcome, quietMs });
  const { lost, twice, unbalanced, mismatches, checked } = findings;
  for (const [kind, lines] of Object.entries({ lost, twice, unbalanced, mismatches })) for (const line of lines) log(`  ${kind}: ${line}`);
  log(`campaign: checked ${checked}`);
  const fivexx = [...call.serverErrors].sort(([a], [b]) => a - b);
  log(
    `campaign: 5xx answers: ${fivexx.length === 0 ? "none" : fivexx.map(([status, n]) => `${status} ×${n}`).join(", ")} (503 and 502 tried again; a 500 is a mismatch)`,
  );
  for (const tenant of tenants) tenant.receiver.stop();
  const violations = lost.length + twice.length + unbalanced.length + mismatches.length;
  log(`campaign: ${((Date.now() - startedAt) / 1000).toFixed(1)} s in all; ${cluster.nodes.reduce((n, node) => n + node.restarts, 0)} restarts`);
  process.stdout.write(
    `campaign seed=${seed} flows=${schedule.flows.length} faults=${schedule.faults.length}: lost ${lost.length}, twice ${twice.length}, unbalanced ${unbalanced.length}, mismatches ${mismatches.length}\n`,
  );
  exitCode = violations === 0 ? 0 : 1;
  if (violations > 0 && cluster.logsDir) log(`campaign: the processes' logs are kept in ${keepLogs(cluster.logsDir, seed)}`);
} finally {
  await cluster.stop().catch((error) => log(`campaign: clean-up failed: ${error}`));
}
process.exit(exitCode);
