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
