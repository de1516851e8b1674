/**
 * A Kysely dialect for postgres.js whose statements outside a transaction run straight on the
 * pool, so postgres.js pipelines them (concurrent statements share a connection and a socket
 * write), instead of reserving a connection for each statement as `kysely-postgres-js` does.
 *
 * - A statement outside a transaction: `pool.unsafe(sql, parameters, { prepare: true })` —
 *   a named prepared statement, on whichever pooled connection postgres.js picks (an idle one
 *   first, else pipelined behind the statements in flight on a busy one).
 * - A transaction (`db.transaction()`, `db.startTransaction()`): one connection is reserved
 *   (`pool.reserve()`) for its whole life: BEGIN (with the isolation level and access mode
 *   asked for), every statement of `trx`, savepoints, COMMIT or ROLLBACK, then released — also
 *   when a statement, the callback or COMMIT fails. A connection that broke on the way is not
 *   handed back (postgres.js reconnects it), and one whose ROLLBACK failed is closed.
 * - `db.connection().execute(cb)`: the connection is reserved before `cb` runs, so every
 *   statement of `cb` (e.g. the migrator's session-level advisory lock and unlock) runs on one
 *   backend, as Kysely documents.
 * - `stream()`: a postgres.js cursor, on the pool or on the transaction's connection.
 *
 * Head-of-line blocking: a statement pipelined behind a slow one (e.g. one waiting for a row
 * lock) waits for it. postgres.js only pipelines when every connection is busy. Code running
 * inside a transaction must use `trx`, never `db`, for statements that a lock it holds could block.
 *
 * Kysely's `PostgresAdapter`, `PostgresQueryCompiler` and `PostgresIntrospector` are used as is.
 *
 * @example
 * ```ts
 * const pool = postgres(url, { max: 10 });
 * const db = new Kysely<Database>({ dialect: new PostgresJsDialect({ postgres: pool }) });
 * ```
 *
 * @module
 */
import {
  AbortedTransactionError,
  CompiledQuery,
  ConnectionBuilder,
  createQueryId,
  IdentifierNode,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  RawNode,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type { PendingQuery, ReservedSql, Sql } from "postgres";

/** What {@link PostgresJsDialect} needs. */
export interface PostgresJsDialectConfig {
  /** The postgres.js pool; the driver ends it when Kysely is destroyed. */
  readonly postgres: Sql<any>;
}

/**
 * Kysely's PostgreSQL dialect on a postgres.js pool, with pipelined statements outside
 * transactions (see the module documentation).
 */
export class PostgresJsDialect implements Dialect {
  readonly #config: PostgresJsDialectConfig;

  constructor(config: PostgresJsDialectConfig) {
    this.#config = Object.freeze({ ...config });
    installConnectionPinning();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PostgresJsDriver(this.#config.postgres);
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

/** The driver: a "connection" is only a handle that reserves a real one when it needs it. */
export class PostgresJsDriver implements Driver {
  #pool: Sql<any> | undefined;

  constructor(pool: Sql<any>) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#pool === undefined) throw new Error("driver has already been destroyed");
    return new PostgresJsConnection(this.#pool);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const conn = asOurs(connection);
    await conn.reserve();
    let begin = "begin";
    if (settings.isolationLevel !== undefined || settings.accessMode !== undefined) {
      // Kysely validated both against its lists of allowed values.
      begin = "start transaction";
      if (settings.isolationLevel !== undefined) begin += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode !== undefined) begin += ` ${settings.accessMode}`;
    }
    await conn.control(begin);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // PostgreSQL completes COMMIT with a ROLLBACK tag when an earlier error aborted the transaction.
    if ((await asOurs(connection).control("commit")) === "ROLLBACK") throw new AbortedTransactionError();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = asOurs(connection);
    try {
      await conn.control("rollback");
    } catch (error) {
      conn.discard();
      throw error;
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler["compileQuery"]): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand("savepoint", name), createQueryId()));
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler["compileQuery"],
  ): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand("rollback to", name), createQueryId()));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler["compileQuery"]): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand("release", name), createQueryId()));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    asOurs(connection).release();
  }

  async destroy(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}

/** postgres.js error codes of a connection that is gone (it is back in the pool's closed list). */
const CONNECTION_GONE = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT"]);

const MUTATIONS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * Every statement is a named prepared statement of the extended protocol, even without
 * parameters (`unsafe` would otherwise use the simple protocol for those): as
 * kysely-postgres-js did, and measured ~15 % cheaper per transaction for BEGIN/COMMIT.
 * `simple` is a runtime option of postgres.js that its types omit.
 */
const PREPARED = { prepare: true, simple: false } as { prepare: true };

/**
 * One Kysely connection: the pool until {@link reserve} is called (a transaction or
 * `db.connection()`), then the reserved postgres.js connection until {@link release}.
 */
class PostgresJsConnection implements DatabaseConnection {
  readonly #pool: Sql<any>;
  #reserved: ReservedSql<any> | undefined;
  /** The statement in flight, for `cancelQuery`. */
  #pending: PendingQuery<any> | undefined;
  /** The reserved connection broke: postgres.js already took it back (do not release it). */
  #gone = false;
  /** Its transaction state is unknown (ROLLBACK failed): close it rather than reuse it. */
  #discard = false;

  constructor(pool: Sql<any>) {
    this.#pool = pool;
  }

  /** Reserves a pooled connection for this handle's statements, once. */
  async reserve(): Promise<void> {
    this.#reserved ??= await this.#pool.reserve();
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const query = (this.#reserved ?? this.#pool).unsafe(compiledQuery.sql, compiledQuery.parameters as unknown[] as never[], PREPARED);
    this.#pending = query;
    try {
      const result = await query;
      return {
        numAffectedRows: MUTATIONS.has(result.command) ? BigInt(result.count) : undefined,
        // postgres.js returns an Array subclass with extra properties; Kysely's users get a plain array.
        rows: result.slice() as R[],
      };
    } catch (error) {
      this.#noteFailure(error);
      throw error;
    } finally {
      if (this.#pending === query) this.#pending = undefined;
    }
  }

  /** Runs a parameterless transaction command on the reserved connection; returns its tag. */
  async control(command: string): Promise<string> {
    if (this.#reserved === undefined) throw new Error(`${command}: no connection reserved`);
    try {
      const result = await this.#reserved.unsafe(command, [], PREPARED);
      return result.command;
    } catch (error) {
      this.#noteFailure(error);
      throw error;
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error("chunkSize must be a positive integer");
    const query = (this.#reserved ?? this.#pool).unsafe(compiledQuery.sql, compiledQuery.parameters as unknown[] as never[], PREPARED);
    this.#pending = query;
    try {
      for await (const rows of query.cursor(chunkSize)) yield { rows: rows as R[] };
    } catch (error) {
      this.#noteFailure(error);
      throw error;
    } finally {
      if (this.#pending === query) this.#pending = undefined;
    }
  }

  /** Asks the server to cancel the statement in flight (Kysely's "cancel query" abort strategy). */
  async cancelQuery(): Promise<void> {
    await this.#pending?.cancel();
  }

  discard(): void {
    this.#discard = true;
  }

  release(): void {
    const reserved = this.#reserved;
    this.#reserved = undefined;
    if (reserved === undefined || this.#gone) return;
    if (this.#discard) {
      // Closing the session ends whatever transaction is left; postgres.js then reconnects it.
      reserved.unsafe("select pg_terminate_backend(pg_backend_pid())").catch(() => {});
      return;
    }
    reserved.release();
  }

  #noteFailure(error: unknown): void {
    if (this.#reserved !== undefined && CONNECTION_GONE.has((error as { code?: unknown } | null)?.code as string)) {
      this.#gone = true;
    }
  }
}

function asOurs(connection: DatabaseConnection): PostgresJsConnection {
  if (connection instanceof PostgresJsConnection) return connection;
  throw new Error("not a connection of PostgresJsDriver");
}

function savepointCommand(command: string, name: string): RawNode {
  // As Kysely's own drivers build it: the name goes through the compiler's identifier quoting.
  return RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
}

const PINNING_INSTALLED = Symbol.for("passerelle.postgres-js-driver.connection-pinning");

/**
 * `db.connection().execute(cb)` promises that every statement of `cb` runs on one connection,
 * but a driver cannot tell that acquisition from a single statement's. So the builder's
 * `execute` reserves the connection before `cb` runs (a no-op for other drivers' connections).
 * Installed once per process; `test/postgres-js-driver.test.ts` fails if it stops working.
 */
function installConnectionPinning(): void {
  const proto = ConnectionBuilder.prototype as unknown as Record<PropertyKey, unknown> & {
    execute: (callback: (db: Kysely<any>) => Promise<unknown>, options?: unknown) => Promise<unknown>;
  };
  if (proto[PINNING_INSTALLED] === true) return;
  const execute = proto.execute;
  proto.execute = function (this: unknown, callback: (db: Kysely<any>) => Promise<unknown>, options?: unknown) {
    return execute.call(
      this,
      async (db: Kysely<any>) => {
        // `db` here runs everything on the acquired connection (a SingleConnectionProvider).
        await db.getExecutor().provideConnection(async (connection) => {
          if (connection instanceof PostgresJsConnection) await connection.reserve();
        });
        return callback(db);
      },
      options,
    );
  };
  proto[PINNING_INSTALLED] = true;
}
