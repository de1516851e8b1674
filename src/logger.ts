/**
 * pino JSON logs (contract §9). Secrets, authorization headers, IPN hashes and personal data are
 * redacted by path, wherever a caller puts them in a log object.
 */
import pino, { type Logger } from "pino";
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

/** The gateway's logger; `destination` lets tests capture lines. */
export function createLogger(config: Pick<Config, "logLevel">, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: "passerelle" },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ sync: false }),
  );
}

/**
 * Secret-shaped values that can appear inside a URL path (a simulator's `/_sim/accounts/{secretKey}/…`,
 * a key pasted into a path by mistake): provider keys, our API keys and signing secrets, and JWTs.
 */
const SECRET_IN_PATH = /\b(?:(?:sk|pk|wh)_(?:sandbox|live|test)_|psk_(?:sandbox|live)_|whsec_|test_private_|test_public_|live_private_|live_public_)[A-Za-z0-9_+=-]+|\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+/g;

/** A URL path fit for a log line: secret-shaped segments are replaced by `[redacted]`. */
export function redactPath(pathname: string): string {
  return pathname.replace(SECRET_IN_PATH, "[redacted]");
}
