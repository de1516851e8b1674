/**
 * The statements a gateway sends to its database, for tests that count a request's round trips: a copy of a
 * test database whose Kysely handle has an executor of its own (`withoutPlugins()`: same connections,
 * adapter and compiled statements), whose every autocommitted statement — built or precompiled — is
 * logged by its SQL, and every transaction as `transaction` (its statements run on a connection of their
 * own and are not listed). Hand `database` to one gateway: what the test or another gateway runs on the
 * original handle is not logged.
 */
import type { Kysely, CompiledQuery } from "kysely";
import type { Database } from "../../src/db/schema.ts";
import type { TestDatabase } from "./db.ts";

export interface StatementLog {
  /** The database to give the gateway whose statements are logged. */
  database: TestDatabase;
  /** Each statement's SQL (or `transaction`), in the order sent. */
  statements: string[];
}

export function logStatements(original: TestDatabase): StatementLog {
  const statements: string[] = [];
  const db = original.db.withoutPlugins() as Kysely<Database>;
  const executor = db.getExecutor() as unknown as { executeQuery: (query: CompiledQuery, options?: unknown) => Promise<unknown> };
  const execute = executor.executeQuery.bind(executor);
  executor.executeQuery = (query, options) => {
    statements.push(query.sql);
    return execute(query, options);
  };
  const transaction = db.transaction.bind(db);
  (db as { transaction: typeof db.transaction }).transaction = () => {
    statements.push("transaction");
    return transaction();
  };
  return { database: { ...original, db }, statements };
}
