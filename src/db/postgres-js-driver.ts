/**
 * A Kysely dialect for postgres.js whose statements outside a transaction run straight on the
 * pool, so postgres.js pipelines them (concurrent statements share a connection and a socket
 * write), instead of reserving a connection for each statement as `kysely-postgres-js` does.
 *
 * - A statement outside a transaction: `pool.unsafe(sql, parameters, { prepare: true })` —
 *   a named prepared statement, on whichever pooled connection postgres.js picks (an idle one
 *   first, else pipelined behind the statements in flight on a busy one).
 * - A transaction (`db.transaction()`, `db.startTransaction()`): postgres.js's own `sql.begin()`,
 *   held open from Kysely's BEGIN to its COMMIT or ROLLBACK (see {@link PostgresJsTransaction}).
 *   postgres.js's transaction path is the one that notices a connection dying under it and
 *   rejects; a connection taken with `reserve()` does not (postgres.js issues #1208, #1186, #1154:
 *   its statements then wait forever, a write on the closed socket throws an uncaught TypeError,
 *   and the dead connection goes back to the pool). Savepoints are `sql.savepoint()` scopes.
 * - `db.connection().execute(cb)`: the connection is reserved before `cb` runs, so every
 *   statement of `cb` (e.g. a session-level advisory lock and its unlock) runs on one backend,
 *   as Kysely documents. Nothing in the gateway uses it: it has `reserve()`'s weakness above.
 * - `stream()`: a postgres.js cursor, on the pool or in the transaction.
 * - While the database is unreachable (connections refused or timing out), statements fail at once
 *   with `DatabaseUnavailableError` (`availability.ts`), one probe at a time excepted; a transaction
 *   that cannot get a connection within `acquireTimeoutMs` fails the same way and, should its BEGIN
 *   get through later, is rolled back at once.
 *
 * Through a transaction-mode pooler (`?pgbouncer=true`) the pool pipelines nothing (`open-postgres.ts` sets
 * `max_pipeline: 0`): each connection carries one statement at a time outside transactions.
 *
 * Head-of-line blocking: a statement pipelined behind a slow one (e.g. one waiting for a row
 * lock) waits for it. postgres.js only pipelines when every connection is busy. Code running
 * inside a transaction must use `trx`, never `db`, for statements that a lock it holds could block.
 *
 * Kysely's `PostgresQueryCompiler` and `PostgresIntrospector` are used as is, and its `PostgresAdapter` but for the
 * migration lock, which is the migrations' transaction's ({@link TransactionMigrationLockAdapter}).
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
  type CompiledQuery,
  ConnectionBuilder,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  sql,
  type TransactionSettings,
} from "kysely";
import type { PendingQuery, ReservedSql, Sql, TransactionSql } from "postgres";
import { AvailabilityGate, DatabaseUnavailableError, isConnectionLost } from "./availability.ts";

/** What {@link PostgresJsDialect} needs. */
export interface PostgresJsDialectConfig {
  /** The postgres.js pool; the driver ends it when Kysely is destroyed. */
  readonly postgres: Sql<any>;
  /** How long a transaction waits for its connection before failing with `DatabaseUnavailableError`. Default 5000 ms. */
  readonly acquireTimeoutMs?: number;
  /** Fails statements fast while the database is unreachable. Default: a gate of its own. */
  readonly gate?: AvailabilityGate;
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
    return new TransactionMigrationLockAdapter();
  }

  createDriver(): Driver {
    return new PostgresJsDriver(this.#config.postgres, this.#config.gate ?? new AvailabilityGate(), this.#config.acquireTimeoutMs ?? 5000);
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

/** Kysely's migration lock's key (its `PostgresAdapter`'s), so that a process still on Kysely's own lock is excluded too. */
const MIGRATION_LOCK_ID = 3853314791062309107n;

/**
 * Kysely's `PostgresAdapter` with the migration lock taken by the migrations' transaction, `pg_advisory_xact_lock`,
 * and released with it. Kysely's own is a session-level `pg_advisory_lock` taken by a statement of its own on
 * `db.connection()` and released by another after the transaction: behind a pooler in transaction mode each
 * statement runs on whichever server it is given, so two starts could both "take" it on one server session and
 * migrate at once, and the unlock, run on another, left it held by that session for good — every later start
 * (and `passerelle audit`) then waited on it until the statement timeout. `migrateToLatest` (`migrate.ts`) hands the
 * migrator a transaction, so this lock is taken inside it: outside a transaction it would hold nothing.
 */
export class TransactionMigrationLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(db);
  }

  override async releaseMigrationLock(): Promise<void> {
    // Released by the transaction's COMMIT or ROLLBACK.
  }
}

/** The driver: a "connection" is only a handle that reserves a real one when it needs it. */
export class PostgresJsDriver implements Driver {
  #pool: Sql<any> | undefined;
  readonly #gate: AvailabilityGate;
  readonly #acquireTimeoutMs: number;

  constructor(pool: Sql<any>, gate: AvailabilityGate, acquireTimeoutMs: number) {
    this.#pool = pool;
    this.#gate = gate;
    this.#acquireTimeoutMs = acquireTimeoutMs;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#pool === undefined) throw new Error("driver has already been destroyed");
    return new PostgresJsConnection(this.#pool, this.#gate);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let mode = "";
    // Kysely validated both against its lists of allowed values; postgres.js sends `begin <mode>`.
    if (settings.isolationLevel !== undefined) mode += `isolation level ${settings.isolationLevel}`;
    if (settings.accessMode !== undefined) mode += ` ${settings.accessMode}`;
    await asOurs(connection).begin(mode.trim(), this.#acquireTimeoutMs);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await asOurs(connection).transaction("commit").commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await asOurs(connection).transaction("rollback").rollback();
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await asOurs(connection).transaction("savepoint").savepoint(name);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await asOurs(connection).transaction("rollback to savepoint").rollbackToSavepoint(name);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await asOurs(connection).transaction("release savepoint").releaseSavepoint(name);
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

const MUTATIONS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * Every statement is a named prepared statement of the extended protocol, even without
 * parameters (`unsafe` would otherwise use the simple protocol for those): as
 * kysely-postgres-js did, and measured ~15 % cheaper per transaction for BEGIN/COMMIT.
 * `simple` is a runtime option of postgres.js that its types omit.
 */
const PREPARED = { prepare: true, simple: false } as { prepare: true };

/**
 * The parameters as postgres.js is to bind them: a plain object (a jsonb value: the gateway has no other use for
 * one) goes typed jsonb, `sql.json`, so its Parse declares the type and it is `JSON.stringify`-ed whatever the
 * server's describe says. Left to the describe, an object was bound by the types of the describe postgres.js
 * received — another statement's, when PgBouncer answered one client's describe to another (`open-postgres.ts`):
 * bound as text, `[object Object]`. Arrays stay the describe's to type (a jsonb array or a PostgreSQL array).
 */
function bindable(sql: Pick<Sql<any>, "json">, parameters: readonly unknown[]): never[] {
  let typed: unknown[] | undefined;
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) continue;
    typed ??= parameters.slice();
    typed[i] = sql.json(value as never);
  }
  return (typed ?? parameters) as never[];
}

function toQueryResult<R>(result: { command: string; count: number } & unknown[]): QueryResult<R> {
  return {
    numAffectedRows: MUTATIONS.has(result.command) ? BigInt(result.count) : undefined,
    // postgres.js returns an Array subclass with extra properties; Kysely's users get a plain array.
    rows: result.slice() as R[],
  };
}

/**
 * One Kysely connection: the pool, a transaction ({@link begin} … commit/rollback), or a reserved
 * postgres.js connection (`db.connection()`, {@link reserve}), until {@link release}.
 */
class PostgresJsConnection implements DatabaseConnection {
  readonly #pool: Sql<any>;
  readonly #gate: AvailabilityGate;
  #transaction: PostgresJsTransaction | ReservedTransaction | undefined;
  #reserved: ReservedSql<any> | undefined;
  /** The statement in flight, for `cancelQuery`. */
  #pending: PendingQuery<any> | undefined;
  /** The reserved connection broke: postgres.js already took it back (do not release it). */
  #gone = false;

  constructor(pool: Sql<any>, gate: AvailabilityGate) {
    this.#pool = pool;
    this.#gate = gate;
  }

  /** Reserves a pooled connection for this handle's statements, once (`db.connection()`). */
  async reserve(): Promise<void> {
    if (this.#reserved !== undefined) return;
    this.#gate.admit();
    try {
      this.#reserved = await this.#pool.reserve();
      this.#gate.succeeded();
    } catch (error) {
      this.#gate.failed(error);
      throw error;
    }
  }

  /** Opens a transaction on this handle. */
  async begin(mode: string, acquireTimeoutMs: number): Promise<void> {
    if (this.#transaction !== undefined) throw new Error("a transaction is already open on this connection");
    if (this.#reserved !== undefined) {
      // `db.connection()` then a transaction on it (Kysely's migrator does): plain statements on that connection.
      this.#transaction = new ReservedTransaction(this.#reserved, (error) => this.#noteFailure(error));
      await this.#transaction.execute(mode === "" ? "begin" : `start transaction ${mode}`, []);
      return;
    }
    this.#gate.admit();
    try {
      this.#transaction = await PostgresJsTransaction.open(this.#pool, mode, acquireTimeoutMs);
      this.#gate.succeeded();
    } catch (error) {
      this.#gate.failed(error);
      throw error;
    }
  }

  /** The open transaction; `what` names the operation for the error when there is none. */
  transaction(what: string): PostgresJsTransaction | ReservedTransaction {
    if (this.#transaction === undefined) throw new Error(`${what}: no transaction is open`);
    return this.#transaction;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const parameters = compiledQuery.parameters as unknown[] as never[];
    if (this.#transaction !== undefined) return toQueryResult<R>(await this.#transaction.execute(compiledQuery.sql, parameters));
    if (this.#reserved === undefined) this.#gate.admit();
    const target = this.#reserved ?? this.#pool;
    const query = target.unsafe(compiledQuery.sql, bindable(target, parameters), PREPARED);
    this.#pending = query;
    try {
      const result = toQueryResult<R>(await query);
      this.#gate.succeeded();
      return result;
    } catch (error) {
      this.#noteFailure(error);
      throw error;
    } finally {
      if (this.#pending === query) this.#pending = undefined;
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error("chunkSize must be a positive integer");
    const parameters = compiledQuery.parameters as unknown[] as never[];
    if (this.#transaction === undefined && this.#reserved === undefined) this.#gate.admit();
    const target = this.#reserved ?? this.#pool;
    const query = this.#transaction?.query(compiledQuery.sql, parameters) ?? target.unsafe(compiledQuery.sql, bindable(target, parameters), PREPARED);
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
    await (this.#pending ?? this.#transaction?.pending)?.cancel();
  }

  release(): void {
    this.#transaction = undefined;
    const reserved = this.#reserved;
    this.#reserved = undefined;
    if (reserved === undefined || this.#gone) return;
    reserved.release();
  }

  #noteFailure(error: unknown): void {
    if (this.#reserved !== undefined) {
      if (isConnectionLost(error)) this.#gone = true;
    } else {
      this.#gate.failed(error);
    }
  }
}

/** The reason a transaction scope is ended when Kysely asks for a ROLLBACK (TO SAVEPOINT). */
class RollbackRequested extends Error {
  override name = "RollbackRequested";
}

/** One postgres.js transaction scope (the transaction itself, or a savepoint in it), held open. */
interface Scope {
  readonly sql: TransactionSql<any>;
  /** Kysely's savepoint name; undefined for the transaction itself. */
  readonly name: string | undefined;
  /** Ends the scope: resolve → COMMIT (the transaction) or keep (a savepoint); reject → ROLLBACK (TO SAVEPOINT). */
  readonly end: { resolve(): void; reject(reason: unknown): void };
  /** Settles when postgres.js has ended the scope: rejects on ROLLBACK, a failed COMMIT or a lost connection. */
  readonly settled: Promise<unknown>;
}

/**
 * Opens a scope through `start` (`pool.begin` or `sql.savepoint`), whose callback is held open until the
 * scope's `end` is called. With `timeoutMs`, gives up when the callback has not been called in time; the
 * scope, should it open later, is ended at once with a ROLLBACK.
 */
function openScope(
  start: (hold: (sql: TransactionSql<any>) => Promise<void>) => Promise<unknown>,
  name: string | undefined,
  timeoutMs?: number,
): Promise<Scope> {
  return new Promise<Scope>((resolveOpen, rejectOpen) => {
    let opened = false;
    let abandoned = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // `settled` is assigned before the callback can run: postgres.js calls it once BEGIN (SAVEPOINT) is answered.
    let settled: Promise<unknown> = Promise.resolve();
    settled = start(
      (sql) =>
        new Promise<void>((resolve, reject) => {
          if (abandoned) return reject(new RollbackRequested("abandoned: no connection in time"));
          opened = true;
          clearTimeout(timer);
          resolveOpen({ sql, name, end: { resolve, reject }, settled });
        }),
    );
    settled.then(
      () => {
        if (!opened) rejectOpen(new Error("the transaction ended before it began"));
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!opened) rejectOpen(error);
      },
    );
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        if (opened) return;
        abandoned = true;
        rejectOpen(new DatabaseUnavailableError(`no database connection within ${timeoutMs} ms`));
      }, timeoutMs);
    }
  });
}

/**
 * A transaction on postgres.js's `sql.begin()`, driven by Kysely's separate BEGIN, statements and
 * COMMIT/ROLLBACK calls: the callback `begin` runs is a promise this class settles when Kysely asks to end.
 *
 * When the connection dies, postgres.js rejects `begin`'s promise (`CONNECTION_CLOSED`); every statement
 * of the transaction races that rejection, so one that was queued behind the lost one rejects too instead
 * of waiting forever, and none is sent on the closed connection afterwards.
 *
 * postgres.js ends a scope whose statement failed with a ROLLBACK even when asked to commit, and rethrows
 * that statement's error: COMMIT then throws Kysely's `AbortedTransactionError`, as PostgreSQL's own
 * answer (a ROLLBACK tag) would.
 */
class PostgresJsTransaction {
  readonly #scopes: Scope[];
  /** Rejects when the transaction ended without being asked to (a lost connection). */
  readonly #lost: Promise<never>;
  /** Why it ended on its own, once it has. */
  #endedWith: unknown;
  #ending = false;
  /** Errors of statements that failed: postgres.js rethrows the first one at COMMIT. */
  readonly #failures = new WeakSet<object>();
  /** The statement in flight, for `cancelQuery`. */
  pending: PendingQuery<any> | undefined;

  static async open(pool: Sql<any>, mode: string, acquireTimeoutMs: number): Promise<PostgresJsTransaction> {
    return new PostgresJsTransaction(await openScope((hold) => pool.begin(mode, hold), undefined, acquireTimeoutMs));
  }

  private constructor(outer: Scope) {
    this.#scopes = [outer];
    this.#lost = new Promise<never>((_, reject) => {
      outer.settled.then(
        () => reject(this.#markEnded(new Error("the transaction has ended"))),
        (error: unknown) => reject(this.#markEnded(error)),
      );
    });
    this.#lost.catch(() => {});
  }

  #markEnded(error: unknown): unknown {
    if (!this.#ending && this.#endedWith === undefined) this.#endedWith = error;
    return error;
  }

  get #top(): Scope {
    return this.#scopes[this.#scopes.length - 1]!;
  }

  /** The statement on the innermost scope, not yet sent (for a cursor). */
  query(sql: string, parameters: never[]): PendingQuery<any> {
    if (this.#endedWith !== undefined) throw this.#endedWith;
    const scope = this.#top.sql;
    return scope.unsafe(sql, bindable(scope, parameters), PREPARED);
  }

  async execute(sql: string, parameters: never[]): Promise<{ command: string; count: number } & unknown[]> {
    const query = this.query(sql, parameters);
    this.pending = query;
    try {
      return await Promise.race([query, this.#lost]);
    } catch (error) {
      if (isConnectionLost(error)) this.#markEnded(error);
      else if (typeof error === "object" && error !== null) this.#failures.add(error);
      throw error;
    } finally {
      if (this.pending === query) this.pending = undefined;
    }
  }

  async commit(): Promise<void> {
    if (this.#endedWith !== undefined) throw this.#endedWith;
    this.#ending = true;
    try {
      while (this.#scopes.length > 0) {
        const scope = this.#scopes.pop()!;
        scope.end.resolve();
        await scope.settled;
      }
    } catch (error) {
      if (typeof error === "object" && error !== null && this.#failures.has(error)) {
        // A savepoint scope that failed only rolled back to its savepoint: end the transaction too.
        await this.rollback();
        throw new AbortedTransactionError();
      }
      throw error;
    }
  }

  async rollback(): Promise<void> {
    this.#ending = true;
    if (this.#endedWith !== undefined) return; // the server ended it with the connection
    const outer = this.#scopes[0];
    this.#scopes.length = 0;
    if (outer === undefined) return;
    outer.end.reject(new RollbackRequested("rollback"));
    try {
      await outer.settled;
    } catch (error) {
      // Our own reason, a statement's error postgres.js rethrows, or a connection that died: the server
      // has rolled back in each case.
      if (error instanceof RollbackRequested || isConnectionLost(error)) return;
      if (typeof error === "object" && error !== null && this.#failures.has(error)) return;
      throw error;
    }
  }

  async savepoint(name: string): Promise<void> {
    if (this.#endedWith !== undefined) throw this.#endedWith;
    const parent = this.#top;
    const scope = await Promise.race([openScope((hold) => parent.sql.savepoint(name, hold), name), this.#lost]);
    this.#scopes.push(scope);
  }

  async rollbackToSavepoint(name: string): Promise<void> {
    if (this.#endedWith !== undefined) throw this.#endedWith;
    await this.#endScopesDownTo(name, "rollback");
    // ROLLBACK TO keeps the savepoint: Kysely may roll back to it (or release it) again.
    await this.savepoint(name);
  }

  async releaseSavepoint(name: string): Promise<void> {
    if (this.#endedWith !== undefined) throw this.#endedWith;
    await this.#endScopesDownTo(name, "release");
  }

  async #endScopesDownTo(name: string, how: "rollback" | "release"): Promise<void> {
    const index = this.#scopes.findLastIndex((scope) => scope.name === name);
    if (index < 1) throw new Error(`no savepoint named ${name}`);
    while (this.#scopes.length > index) {
      const scope = this.#scopes.pop()!;
      if (how === "release") scope.end.resolve();
      else scope.end.reject(new RollbackRequested(`rollback to ${name}`));
      try {
        await Promise.race([scope.settled, this.#lost]);
      } catch (error) {
        if (!(error instanceof RollbackRequested)) throw error;
      }
    }
  }
}

function asOurs(connection: DatabaseConnection): PostgresJsConnection {
  if (connection instanceof PostgresJsConnection) return connection;
  throw new Error("not a connection of PostgresJsDriver");
}

const PINNING_INSTALLED = Symbol.for("passerelle.postgres-js-driver.connection-pinning");

/**
 * `db.connection().execute(cb)` promises that every statement of `cb` runs on one connection,
 * but a driver cannot tell that acquisition from a single statement's. So the builder's
 * `execute` reserves the connection before `cb` runs (a no-op for other drivers' connections).
 * Installed once per process; `test/db/postgres-js-driver.test.ts` fails if it stops working.
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

/**
 * A transaction on a connection taken with `db.connection()`: BEGIN, savepoints and COMMIT/ROLLBACK as
 * statements on it. Such a connection cannot tell that it died (see the module documentation); the
 * gateway only gets here through Kysely's migrator, at start-up.
 */
class ReservedTransaction {
  readonly #sql: ReservedSql<any>;
  readonly #onFailure: (error: unknown) => void;
  pending: PendingQuery<any> | undefined;

  constructor(sql: ReservedSql<any>, onFailure: (error: unknown) => void) {
    this.#sql = sql;
    this.#onFailure = onFailure;
  }

  query(sql: string, parameters: never[]): PendingQuery<any> {
    return this.#sql.unsafe(sql, bindable(this.#sql, parameters), PREPARED);
  }

  async execute(sql: string, parameters: never[]): Promise<{ command: string; count: number } & unknown[]> {
    const query = this.query(sql, parameters);
    this.pending = query;
    try {
      return await query;
    } catch (error) {
      this.#onFailure(error);
      throw error;
    } finally {
      if (this.pending === query) this.pending = undefined;
    }
  }

  async commit(): Promise<void> {
    // PostgreSQL completes COMMIT with a ROLLBACK tag when an earlier error aborted the transaction.
    if ((await this.execute("commit", [])).command === "ROLLBACK") throw new AbortedTransactionError();
  }

  async rollback(): Promise<void> {
    await this.execute("rollback", []);
  }

  async savepoint(name: string): Promise<void> {
    await this.execute(`savepoint ${quoteIdentifier(name)}`, []);
  }

  async rollbackToSavepoint(name: string): Promise<void> {
    await this.execute(`rollback to savepoint ${quoteIdentifier(name)}`, []);
  }

  async releaseSavepoint(name: string): Promise<void> {
    await this.execute(`release savepoint ${quoteIdentifier(name)}`, []);
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
