/**
 * Is the database there? Which errors mean it is not (mapped to 503 `unavailable`, or a job retry), and
 * a gate that answers at once while it is known to be unreachable instead of letting every request wait
 * for a connection attempt.
 *
 * Two kinds of failure, told apart because only one of them says anything about the next request:
 * - **unreachable**: a connection could not be made (refused, timed out, the server starting up or shutting
 *   down, too many connections). After two such failures in a row (one alone is seen when a connection
 *   attempt is caught in a storm of killed backends), the gate closes: statements fail at once with
 *   {@link DatabaseUnavailableError}, except one probe at a time every `probeEveryMs`, which reopens it when
 *   it gets through.
 * - **connection lost**: an established connection died under a statement (backend terminated, server
 *   restart, proxy reset). That statement (or transaction) fails, but the pool reconnects for the next one,
 *   so the gate stays open.
 *
 * @module
 */

/** Thrown when a statement is refused because the database is unreachable, or waited too long for a connection. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  readonly code = "DATABASE_UNAVAILABLE";
}

/** Network errors of a socket that could not connect. */
const UNREACHABLE_NETWORK = new Set(["ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/**
 * postgres.js's connect timeout, and the PostgreSQL SQLSTATEs a server answers a new connection with when it
 * cannot take it: 57P03 cannot_connect_now (starting up, shutting down, recovering), 53300
 * too_many_connections, and class 08 connection exceptions raised while connecting (08001, 08004).
 */
const UNREACHABLE_CODES = new Set(["CONNECT_TIMEOUT", "57P03", "53300", "08001", "08004"]);
/**
 * A connection that died under a statement: postgres.js's own codes, the server's 57P01 admin_shutdown
 * (`pg_terminate_backend`, a fast shutdown), 57P02 crash_shutdown, 25P03 idle_in_transaction_session_timeout,
 * class 08 (below), and a reset socket.
 */
const LOST_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "57P01",
  "57P02",
  "25P03",
  "08000",
  "08003",
  "08006",
  "ECONNRESET",
  "EPIPE",
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A connection could not be made: the database is unreachable right now. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  const code = codeOf(error);
  return code !== undefined && (UNREACHABLE_CODES.has(code) || UNREACHABLE_NETWORK.has(code));
}

/**
 * SQLSTATE class 08, connection exception, whatever its code. PgBouncer answers with 08P01 whatever keeps it
 * from serving a client: `server login has been failing, try again later (server_login_retry)` and `pgbouncer
 * cannot connect to server` while PostgreSQL restarts, `query_wait_timeout`, `server conn crashed?`, `no more
 * connections allowed (max_client_conn)`; from PostgreSQL itself, 08P01 protocol_violation ends the session too.
 */
const CONNECTION_EXCEPTION_CLASS = "08";

/** The connection a statement ran on died under it (or the pooler in front of the server could not serve it). */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (LOST_CODES.has(code) || (code.length === 5 && code.startsWith(CONNECTION_EXCEPTION_CLASS)));
}

/**
 * Does `error` (or its `cause`) mean the database, not the request, is at fault: unreachable, a lost
 * connection, or a statement the server cancelled at `statement_timeout` (57014)? The HTTP layer answers these
 * with 503 `unavailable`; a job that throws one is retried.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (isDatabaseUnreachable(e) || isConnectionLost(e) || codeOf(e) === "57014") return true;
  }
  return false;
}

/** Connection failures in a row, with no statement through in between, that close the gate. */
const FAILURES_TO_CLOSE = 2;

/** Options of {@link AvailabilityGate}. */
export interface AvailabilityGateOptions {
  /** While closed, one statement is let through this often to see whether the database is back. Default 1000 ms. */
  probeEveryMs?: number;
  /** Called when the gate closes (`down`) and when it opens again (`up`), once each per outage. */
  onChange?: (state: "down" | "up", error?: unknown) => void;
  now?: () => number;
}

/**
 * Fails statements fast while the database is unreachable.
 *
 * @example
 * ```ts
 * const gate = new AvailabilityGate({ onChange: (state) => log(state) });
 * gate.admit();               // throws DatabaseUnavailableError while closed (but lets a probe through)
 * try { await run(); gate.succeeded(); } catch (e) { gate.failed(e); throw e; }
 * ```
 */
export class AvailabilityGate {
  readonly #probeEveryMs: number;
  readonly #onChange: AvailabilityGateOptions["onChange"];
  readonly #now: () => number;
  /** When the gate closed; undefined while open. */
  #downSince: number | undefined;
  #lastProbeAt = 0;
  /** Connection failures since the last statement that got through. */
  #failuresInARow = 0;

  constructor(options: AvailabilityGateOptions = {}) {
    this.#probeEveryMs = options.probeEveryMs ?? 1000;
    this.#onChange = options.onChange;
    this.#now = options.now ?? Date.now;
  }

  /** Is the database known to be unreachable? */
  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** Throws {@link DatabaseUnavailableError} while closed, unless it is time for a probe. */
  admit(): void {
    if (this.#downSince === undefined) return;
    const now = this.#now();
    if (now - this.#lastProbeAt >= this.#probeEveryMs) {
      this.#lastProbeAt = now;
      return;
    }
    throw new DatabaseUnavailableError("The database is unreachable");
  }

  /** A statement got through: the database is reachable. */
  succeeded(): void {
    this.#failuresInARow = 0;
    if (this.#downSince === undefined) return;
    this.#downSince = undefined;
    this.#onChange?.("up");
  }

  /** A statement failed: closes the gate when the failure says the database is unreachable. */
  failed(error: unknown): void {
    if (this.#downSince !== undefined || !isDatabaseUnreachable(error) || error instanceof DatabaseUnavailableError) return;
    if (++this.#failuresInARow < FAILURES_TO_CLOSE) return;
    this.#downSince = this.#lastProbeAt = this.#now();
    this.#onChange?.("down", error);
  }
}
