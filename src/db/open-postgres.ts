/**
 * PostgreSQL through postgres.js and our Kysely driver for it (`postgres-js-driver.ts`).
 *
 * @module
 */
import { Kysely, sql } from "kysely";
import postgres from "postgres";
import type { DatabaseHandle } from "./connect.ts";
import { PostgresJsDialect } from "./postgres-js-driver.ts";
import type { Database } from "./schema.ts";

const INT8_OID = 20;

/**
 * Connects a pool to `url`. Nothing is sent until the first query (postgres.js is lazy).
 *
 * @example
 * ```ts
 * const handle = await openPostgres("postgres://postgres@127.0.0.1:5432/passerelle", 10);
 * ```
 */
export async function openPostgres(url: string, max?: number): Promise<DatabaseHandle> {
  const client = postgres(url, {
    ...(max === undefined ? {} : { max }),
    // Kysely's migrator says "relation … already exists, skipping" on every start.
    onnotice: () => {},
    types: {
      // postgres.js reads int8 (and so `count(*)`) as a string; PGlite reads a number.
      // Our int8 values (counts, amounts) stay far below 2^53.
      int8: { to: INT8_OID, from: [INT8_OID], serialize: (value: number | bigint) => String(value), parse: Number },
    },
  });
  // The driver prepares every statement, so postgres.js learns each parameter's type from the
  // server and JSON.stringify-es jsonb parameters itself: pass objects, not strings. Statements
  // outside a transaction are pipelined on the pool; a transaction reserves one connection.
  const db = new Kysely<Database>({ dialect: new PostgresJsDialect({ postgres: client }) });
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
