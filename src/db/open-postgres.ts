/**
 * PostgreSQL through postgres.js and our Kysely driver for it (`postgres-js-driver.ts`).
 *
 * @module
 */
import { Kysely, sql } from "kysely";
import postgres from "postgres";
import { AvailabilityGate } from "./availability.ts";
import type { DatabaseHandle, PostgresBounds } from "./database-handle.ts";
import { PostgresJsDialect } from "./postgres-js-driver.ts";
import type { Database } from "./schema.ts";

const INT8_OID = 20;

/**
 * `DATABASE_URL` with `?pgbouncer=true` names a connection pooler in transaction mode (PgBouncer) in front of
 * PostgreSQL: the parameter is ours, not the server's, so it is taken off the URL postgres.js connects to.
 */
export function throughPooler(url: string): { url: string; pooler: boolean } {
  const parsed = new URL(url);
  const flag = parsed.searchParams.get("pgbouncer");
  if (flag === null) return { url, pooler: false };
  if (flag !== "true" && flag !== "false") throw new Error(`DATABASE_URL: pgbouncer must be true or false, not ${JSON.stringify(flag)}`);
  parsed.searchParams.delete("pgbouncer");
  return { url: parsed.toString(), pooler: flag === "true" };
}

/**
 * Connects a pool to `url`. Nothing is sent until the first query (postgres.js is lazy).
 *
 * Bounded so that nothing waits on the database forever: the server cancels a statement after
 * `statementTimeoutMs` and ends a session left idle in a transaction after `idleInTransactionTimeoutMs`;
 * a connection attempt gives up after `connectTimeoutMs`, and reconnects follow at most 500 ms apart (postgres.js's
 * default backoff grows to 20 s, which held every request of an outage that long). While connections fail, the
 * driver's gate answers at once (`availability.ts`).
 *
 * @example
 * ```ts
 * const handle = await openPostgres("postgres://postgres@127.0.0.1:5432/passerelle", 10, { statementTimeoutMs: 30_000 });
 * ```
 */
export async function openPostgres(url: string, max?: number, bounds: PostgresBounds = {}): Promise<DatabaseHandle> {
  const connectTimeoutMs = bounds.connectTimeoutMs ?? 3000;
  const { url: serverUrl, pooler } = throughPooler(url);
  const client = postgres(serverUrl, {
    ...(max === undefined ? {} : { max }),
    // Behind a transaction-mode pooler a statement prepared on one server connection is unknown to the next:
    // unnamed statements only (postgres.js then describes each one's parameters before running it).
    // And no pipelining on the pool: a statement with parameters is sent as Parse/Describe/Flush (no Sync) and
    // bound once the server has described it; queued behind another statement's Sync on one connection, PgBouncer
    // (transaction mode) hands the server to another client at that Sync's ReadyForQuery, and the describe is
    // answered to that client, whose parameters are then serialized by this statement's types (an object bound
    // as text: `[object Object]`), or to no one (this statement then waits forever). Each connection of the pool
    // carries one statement at a time; a transaction's statements still go one after another on its connection.
    ...(pooler ? { prepare: false, max_pipeline: 0 } : {}),
    // Kysely's migrator says "relation … already exists, skipping" on every start.
    onnotice: () => {},
    types: {
      // postgres.js reads int8 (and so `count(*)`) as a string; PGlite reads a number.
      // Our int8 values (counts, amounts) stay far below 2^53.
      int8: { to: INT8_OID, from: [INT8_OID], serialize: (value: number | bigint) => String(value), parse: Number },
    },
    connect_timeout: connectTimeoutMs / 1000,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
    // A pooler shares server sessions between its clients and refuses these as startup parameters: there they are the
    // database's own settings (`ALTER DATABASE … SET`, what `bun run fleet` does; docs/fleet.md).
    ...(pooler
      ? {}
      : {
          connection: {
            statement_timeout: bounds.statementTimeoutMs ?? 30_000,
            idle_in_transaction_session_timeout: bounds.idleInTransactionTimeoutMs ?? 60_000,
          },
        }),
  });
  // The driver prepares every statement (unnamed through a pooler), so postgres.js learns each parameter's type from the
  // server and JSON.stringify-es jsonb parameters itself: pass objects, not strings. Statements
  // outside a transaction are pipelined on the pool; a transaction runs on postgres.js's `begin()`.
  const gate = new AvailabilityGate({ ...(bounds.onAvailabilityChange ? { onChange: bounds.onAvailabilityChange } : {}) });
  const db = new Kysely<Database>({ dialect: new PostgresJsDialect({ postgres: client, gate, acquireTimeoutMs: connectTimeoutMs + 1000 }) });
  return {
    db,
    driver: "postgres",
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await db.destroy();
      // Kysely only ends a pool it has used; end it ourselves in case no query ever ran.
      await client.end();
    },
  };
}
