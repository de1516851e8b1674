/**
 * The IPN intake's reference (issue 8): a single-row INSERT loop on the same PostgreSQL, in its own
 * process. It inserts rows shaped like the gateway's stored IPNs — into a copy of `ipn_messages` with
 * the same columns, checks and indexes (not the foreign keys), the same JSON body — one row per
 * statement, autocommitted, from `concurrency` loops over a pool of `poolSize` connections (the
 * gateway's: postgres.js's default of 10), for a fixed time. No HTTP, no hash check, no queue: what the
 * database can take of this one write the intake cannot avoid.
 *
 *   bun bench/load/insert-loop.ts '<json InsertLoopInput>'   → prints one InsertLoopOutput as JSON
 */
import postgres from "postgres";

export interface InsertLoopInput {
  databaseUrl: string;
  durationMs: number;
  warmupMs: number;
  concurrency: number;
  poolSize: number;
  /** The `body` column of every row (an IPN's data without its hash). */
  body: Record<string, unknown>;
}

export interface InsertLoopOutput {
  requests: number;
  errors: number;
  durationMs: number;
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; max: number | null; mean: number | null };
  firstError: string | null;
}

const TABLE = "bench_insert_reference";

function summary(values: number[]): InsertLoopOutput["latencyMs"] {
  if (values.length === 0) return { p50: null, p90: null, p99: null, max: null, mean: null };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), mean: sum / sorted.length };
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? "{}") as InsertLoopInput;
  const sql = postgres(input.databaseUrl, { max: input.poolSize, onnotice: () => {} });
  await sql.unsafe(`DROP TABLE IF EXISTS ${TABLE}`);
  await sql.unsafe(`CREATE TABLE ${TABLE} (LIKE ipn_messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`);
  let sequence = 0;
  let errors = 0;
  let firstError: string | null = null;
  const run = async (durationMs: number, latencies: number[] | null) => {
    const deadline = performance.now() + durationMs;
    const loop = async () => {
      while (performance.now() < deadline) {
        const n = sequence++;
        const begun = performance.now();
        try {
          await sql`
            insert into bench_insert_reference (subject, token, payment_id, tenant_id, environment, body, body_digest, state, received_at)
            values ('checkout', ${`test_ref${n}`}, ${`pay_ref${n}`}, 'ten_ref', 'sandbox', ${sql.json(input.body as never)}, ${`digest${n}`}, 'received', ${new Date()})
            returning id`;
          if (latencies && performance.now() <= deadline) latencies.push(performance.now() - begun);
        } catch (error) {
          errors++;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    };
    await Promise.all(Array.from({ length: input.concurrency }, loop));
  };
  try {
    if (input.warmupMs > 0) await run(input.warmupMs, null);
    errors = 0;
    const latencies: number[] = [];
    const started = performance.now();
    await run(input.durationMs, latencies);
    const output: InsertLoopOutput = {
      requests: latencies.length,
      errors,
      durationMs: Math.min(performance.now() - started, input.durationMs),
      latencyMs: summary(latencies),
      firstError,
    };
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } finally {
    await sql.unsafe(`DROP TABLE IF EXISTS ${TABLE}`);
    await sql.end({ timeout: 2 });
  }
}
