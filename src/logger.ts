/**
 * pino JSON logs (contract §9). Secrets, authorization headers, IPN hashes and personal data are
 * redacted by path, wherever a caller puts them in a log object. A developer running the gateway in a
 * terminal reads them as text instead (pino-pretty, in process): see {@link logFormat}.
 */
import { createRequire } from "node:module";
import pino, { type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import type { Config } from "./config.ts";

/** Paths whose values never reach a log line. */
export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "*.headers.authorization",
  "secret",
  "*.secret",
  "clientSecret",
  "*.client_secret",
  "client_secret",
  "masterKey",
  "*.masterKey",
  "privateKey",
  "*.privateKey",
  "token",
  "*.token",
  "secretKey",
  "*.secretKey",
  "webhookSecret",
  "*.webhookSecret",
  "hash",
  "*.hash",
  "email",
  "*.email",
  "password",
  "*.password",
];

/** How log lines are written: one JSON object per line, or text for a person at a terminal. */
export type LogFormat = "json" | "pretty";

/**
 * Text (`pretty`) only in development with standard output a terminal: someone is reading it. JSON
 * everywhere else — production always (a log collector parses it), tests, and development piped to a file
 * or another program.
 *
 * @example
 * ```ts
 * logFormat({ nodeEnv: "development", isTTY: true }); // "pretty"
 * logFormat({ nodeEnv: "production", isTTY: true }); // "json"
 * logFormat({ nodeEnv: "development", isTTY: undefined }); // "json": stdout is a pipe or a file
 * ```
 */
export function logFormat(input: { nodeEnv: Config["nodeEnv"] | undefined; isTTY: boolean | undefined }): LogFormat {
  return input.nodeEnv === "development" && input.isTTY === true ? "pretty" : "json";
}

/** pino-pretty's stream to standard output, loaded only when used (a production process never loads it). */
function prettyStream(): pino.DestinationStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  // Synchronous writes: a line is on the terminal before the next statement runs, and none is lost at exit.
  return pretty({ colorize: true, sync: true, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,service" });
}

/**
 * The gateway's logger. `destination` lets tests capture lines (always JSON); without it, lines go to standard
 * output as {@link logFormat} chooses, from `config.nodeEnv` and whether standard output is a terminal
 * (`isTTY`, default `process.stdout.isTTY`).
 */
export function createLogger(
  config: Pick<Config, "logLevel"> & Partial<Pick<Config, "nodeEnv">>,
  destination?: pino.DestinationStream,
  isTTY: boolean | undefined = process.stdout.isTTY,
): Logger {
  const format = destination ? "json" : logFormat({ nodeEnv: config.nodeEnv, isTTY });
  return pino(
    {
      level: config.logLevel,
      base: { service: "passerelle" },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? (format === "pretty" ? prettyStream() : pino.destination({ sync: false })),
  );
}

/** What provider keys, our API keys and signing secrets start with (a regular expression's alternatives). */
const SECRET_PREFIX = "(?:sk|pk|wh)_(?:sandbox|live|test)_|psk_(?:sandbox|live)_|whsec_|test_private_|test_public_|live_private_|live_public_";

/**
 * Secret-shaped values that can appear inside a URL path (a simulator's `/_sim/accounts/{secretKey}/…`,
 * a key pasted into a path by mistake): provider keys, our API keys and signing secrets, and JWTs.
 */
const SECRET_IN_PATH = new RegExp(String.raw`\b(?:${SECRET_PREFIX})[A-Za-z0-9_+=-]+|\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+`, "g");

/** A URL path fit for a log line: secret-shaped segments are replaced by `[redacted]`. */
export function redactPath(pathname: string): string {
  return pathname.replace(SECRET_IN_PATH, "[redacted]");
}

/** What {@link logOutage} reports: a dependency became unreachable, or came back. */
export type OutageChange = (state: "down" | "up", error?: unknown) => void;

/**
 * One log line when `dependency` becomes unreachable (`warn`, with the reason and no stack) and one when it
 * is back (`info`, with how long it was down): what an operator needs during an outage, without a line per
 * reconnect attempt. Repeated `down`s (or `up`s) in a row are ignored.
 *
 * @example
 * ```ts
 * const report = logOutage(logger, "database");
 * report("down", error); // {"dependency":"database","reason":"ECONNREFUSED: connect ECONNREFUSED …","msg":"database unreachable"}
 * report("up");          // {"dependency":"database","downForMs":5012,"msg":"database reachable again"}
 * ```
 */
export function logOutage(logger: Pick<Logger, "warn" | "info">, dependency: string, now: () => number = Date.now): OutageChange {
  let since: number | undefined;
  return (state, error) => {
    if (state === "down") {
      if (since !== undefined) return;
      since = now();
      logger.warn({ dependency, reason: outageReason(error) }, `${dependency} unreachable`);
    } else {
      if (since === undefined) return;
      logger.info({ dependency, downForMs: now() - since }, `${dependency} reachable again`);
      since = undefined;
    }
  };
}

function outageReason(error: unknown): string | undefined {
  if (error === undefined || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  return typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * Resolves once every line written so far is out, so that the process may exit: ends the logger's stream when it
 * is pino's own destination (whose `flush(cb)` calls back at once, before a write in flight is done — the last
 * line was lost at exit). Bounded by `timeoutMs`; a stream of a caller's own is left alone.
 *
 * @example
 * ```ts
 * logger.info("passerelle stopped");
 * await endLogger(logger);
 * process.exit(0);
 * ```
 */
export async function endLogger(logger: Logger, timeoutMs = 2000): Promise<void> {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | { end?: () => void; once?: (event: string, listener: () => void) => void; destroyed?: boolean }
    | undefined;
  if (!stream || typeof stream.end !== "function" || typeof stream.once !== "function" || stream.destroyed) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    new Promise<void>((resolve) => {
      stream.once!("close", resolve);
      stream.once!("error", resolve);
      stream.end!();
    }),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]).finally(() => clearTimeout(timer));
}
