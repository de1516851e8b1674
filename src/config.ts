/**
 * The one place that reads the environment. Every variable of contract §10 is parsed and validated here,
 * once, with zod; the rest of the code receives a typed {@link Config}.
 *
 * @example
 * ```ts
 * const config = await loadConfig(process.env);
 * const gateway = await createGateway(config);
 * ```
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import proxyAddr from "proxy-addr";
import { z } from "zod";
import { describeConfigIssue } from "./config-issue.ts";
import { clusterAddress } from "./jobs/redis-client.ts";
import type { PaymentProvider } from "./providers/provider.ts";
import type { ProviderASettings } from "./providers/providerA/accounts.ts";
import type { ProviderBSettings } from "./providers/providerB/accounts.ts";
import { DEFAULT_PROVIDERS } from "./providers/registry.ts";
import type { RateLimit } from "./db/schema.ts";

/** The project folder's `data/`: the default `DATA_DIR`, the same whatever folder a command runs in. */
const DEFAULT_DATA_DIR = join(import.meta.dir, "..", "data");

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Declared once in `environment.ts`; re-exported for the importers of the configuration. */
export type { Environment } from "./environment.ts";

export interface EncryptionKey {
  version: number;
  key: Uint8Array;
}

/**
 * The configuration: the gateway's own settings, and each provider's section under its name
 * (`config.providerA`), built from the variables the provider declares (`PaymentProvider.configuration`).
 * The default providers' sections are typed here; another provider's is its own to read.
 */
export type Config = GatewayConfig & DefaultProviderSections & { readonly [provider: string]: unknown };

/** The sections of {@link DEFAULT_PROVIDERS}, by name. */
interface DefaultProviderSections {
  providerA: ProviderASettings;
  providerB: ProviderBSettings;
}

/** The gateway's own settings. */
export interface GatewayConfig {
  nodeEnv: "development" | "production" | "test";
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  /**
   * Bounds on PostgreSQL (`DATABASE_URL`): a statement's run time (`statement_timeout`), a transaction left idle
   * (`idle_in_transaction_session_timeout`), and a connection attempt. Ignored by PGlite.
   */
  database: { statementTimeoutMs: number; idleInTransactionTimeoutMs: number; connectTimeoutMs: number };
  dataDir: string;
  /** `REDIS_URL`, or a Redis Cluster's address from `REDIS_CLUSTER_NODES` (`jobs/redis-client.ts`). */
  redisUrl: string | undefined;
  queuePrefix: string;
  jwt: { secret: string; issuer: string | undefined; audience: string | undefined; jwksUrl: string | undefined };
  /** First seals, all open (contract §3). */
  encryptionKeys: EncryptionKey[];
  apiKeyPepper: string;
  providerTimeoutMs: number;
  /**
   * How long a request's `Idempotency-Key` lock lasts before it is renewed (contract §9): the request that
   * holds it renews it while it runs, and a lock that runs out (its process died) is taken over.
   */
  idempotencyLockMs: number;
  simulators: boolean;
  simulatorApproveDelayMs: number;
  /**
   * `TEST_CLOCK_OFFSET_FILE`: the fault campaign's handle on this process's clock (`offset-clock.ts`): `deps.now()`
   * is the machine's clock plus the milliseconds the file holds. Unset (always, outside the campaign): the machine's.
   */
  testClockOffsetFile: string | undefined;
  allowPrivateTargets: boolean;
  maxAmount: number;
  /** How often a worker process checks the money invariants (`services/audit`), in ms; 0: never (issue 24). */
  auditEveryMs: number;
  /**
   * Routing of `POST /payments` (issue 16): the sliding window of each route's success rate, the share of
   * payments kept on a weaker route so it can recover, and each provider × operator circuit breaker's
   * consecutive failures to open and pause before half-opening.
   */
  routing: { windowMinutes: number; halfLifeMinutes: number; rateMargin: number; exploreShare: number; breakerFailures: number; breakerHalfOpenMs: number };
  /**
   * How long rows that only record the past are kept (issue 28), in ms, and how a worker prunes them
   * (`services/retention`): every `everyMs` (0: never), `batchSize` rows per statement.
   */
  retention: {
    eventsMs: number;
    deliveriesMs: number;
    ipnsMs: number;
    routeOutcomesMs: number;
    idempotencyKeysMs: number;
    /** The audit log (issue 30 point 5): a chain's oldest entries past it go, the chain recording where it was cut. */
    auditLogMs: number;
    everyMs: number;
    batchSize: number;
  };
  /** How often a worker's sweeper runs (`SWEEP_EVERY_MS`). */
  sweepEveryMs: number;
  /** How often the renewal sweep runs (`RENEWAL_SWEEP_EVERY_MS`). */
  renewalSweepEveryMs: number;
  webhookTimeoutMs: number;
  /** Waits between delivery attempts, in milliseconds. */
  webhookRetrySchedule: number[];
  /** Dunning retries after a renewal's due date, in milliseconds. */
  renewalRetrySchedule: number[];
  /**
   * When a settled payment is read again from a provider that can give it back outside the gateway, in
   * milliseconds after its settlement, increasing (`SETTLED_REREAD_SCHEDULE`; `direct-payments/settled-rereads.ts`).
   */
  settledRereadSchedule: number[];
  rateLimit: RateLimit;
  /** The pay page's public calls (`/pay/{id}/…`), per address: customers behind one carrier's NAT share one. */
  payPageRateLimit: RateLimit;
  /** A direct payment's push unanswered this long offers a rescue (`RESCUE_AFTER`, seconds; milliseconds here). */
  rescueAfterMs: number;
  /** Browser origins answered with CORS headers (`scheme://host[:port]`, lower case); none by default. */
  corsOrigins: string[];
  /** The gateway's own balancers (`TRUSTED_PROXIES`): addresses, CIDR ranges or `loopback`; whose `X-Forwarded-For` names the client. */
  trustedProxies: string[];
  metrics: { port: number; host: string };
  /**
   * E-mail (issue 30): invitations and password resets leave through the outbox, by SMTP when `smtpUrl` is set;
   * without it they are written to the log in development (never in production, where they wait unsent).
   */
  mail: { smtpUrl: string | undefined; from: string };
  /** Sign-in attempts one address may make in 15 minutes (issue 30): a bucket of that many, refilled over 15 minutes. */
  signInAddressLimit: number;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** The development defaults that were applied, for the one start-up warning line. */
  developmentDefaults: string[];
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `5s,5m,30m,2h` into milliseconds; undefined when any item is malformed. */
export function parseDurationList(text: string): number[] | undefined {
  const items = text.split(",").map((item) => item.trim());
  const out: number[] = [];
  for (const item of items) {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(item);
    if (!match) return undefined;
    out.push(Number(match[1]) * DURATION_UNITS[match[2]!]!);
  }
  return out.length > 0 ? out : undefined;
}

/** Parses `ENCRYPTION_KEYS` (`<N>:<base64 of 32 bytes>,…`); undefined when malformed. */
export function parseEncryptionKeys(text: string): EncryptionKey[] | undefined {
  const keys: EncryptionKey[] = [];
  for (const item of text.split(",")) {
    const match = /^(\d+):([A-Za-z0-9+/=_-]+)$/.exec(item.trim());
    if (!match) return undefined;
    const key = Uint8Array.from(Buffer.from(match[2]!, "base64"));
    if (key.length !== 32) return undefined;
    keys.push({ version: Number(match[1]), key });
  }
  const versions = new Set(keys.map((k) => k.version));
  return keys.length > 0 && versions.size === keys.length ? keys : undefined;
}

const boolean = z.enum(["true", "false", "on", "off", "1", "0"]).transform((v) => v === "true" || v === "on" || v === "1");
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const url = z.url({ protocol: /^https?$/ });
/**
 * Parses `CORS_ORIGINS` (`https://a.example,https://b.example:8443`) into origins as browsers send them;
 * undefined when an item is not a bare http(s) origin. `*` is refused: a payment API names the pages it trusts.
 */
export function parseCorsOrigins(text: string): string[] | undefined {
  const origins: string[] = [];
  for (const item of text.split(",").map((entry) => entry.trim().replace(/\/$/, ""))) {
    if (!URL.canParse(item)) return undefined;
    const parsed = new URL(item);
    if (!/^https?:$/.test(parsed.protocol) || parsed.origin.toLowerCase() !== item.toLowerCase()) return undefined;
    origins.push(parsed.origin);
  }
  return origins;
}

const durations = z.string().transform((text, ctx) => {
  const parsed = parseDurationList(text);
  if (!parsed) ctx.addIssue({ code: "custom", message: "must be a comma-separated list of durations like 5s,5m,2h" });
  return parsed ?? [];
});

const DAY_MS = 86_400_000;

/** One duration (`30d`, `12h`) of at least `minMs`, in milliseconds; `minText` says the minimum in the message. */
function retention(minMs: number, minText: string, why: string) {
  return z.string().transform((text, ctx) => {
    const parsed = parseDurationList(text);
    if (parsed?.length !== 1) ctx.addIssue({ code: "custom", message: "must be one duration like 30d or 12h" });
    else if (parsed[0]! < minMs) ctx.addIssue({ code: "custom", message: `must be at least ${minText} (${why})` });
    return parsed?.[0] ?? 0;
  });
}

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: port.default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  PUBLIC_BASE_URL: url.optional(),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** A Redis Cluster's seed nodes, `host:port,host:port,…`: used instead of REDIS_URL (docs/fleet.md). */
  REDIS_CLUSTER_NODES: z
    .string()
    .transform((value) => value.split(",").map((node) => node.trim()))
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, "must be host:port, separated by commas")).min(1))
    .optional(),
  QUEUE_PREFIX: z
    .string()
    .regex(/^(\{[A-Za-z0-9_.:-]+\}|[A-Za-z0-9_.:-]+)$/, "must be letters, digits, '_', '.', ':' or '-' (on a Redis Cluster, optionally in braces)")
    .default("passerelle"),
  JWT_SECRET: z
    .string()
    .refine((s) => Buffer.byteLength(s) >= 32, "must be at least 32 bytes")
    .optional(),
  JWT_ISSUER: z.string().min(1).optional(),
  JWT_AUDIENCE: z.string().min(1).optional(),
  JWT_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
  ENCRYPTION_KEYS: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseEncryptionKeys(text);
      if (!parsed) ctx.addIssue({ code: "custom", message: "must be <N>:<base64 of 32 bytes>[,…] with distinct versions" });
      return parsed ?? [];
    })
    .optional(),
  API_KEY_PEPPER: z
    .string()
    .refine((s) => Buffer.byteLength(s) >= 16, "must be at least 16 bytes")
    .optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(30_000),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: positiveInt.default(60_000),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(5_000).default(3_000),
  PROVIDER_TIMEOUT_MS: positiveInt.default(15_000),
  IDEMPOTENCY_LOCK_MS: z.coerce.number().int().min(1_000).default(60_000),
  SIMULATORS: boolean.optional(),
  TEST_CLOCK_OFFSET_FILE: z.string().min(1).optional(),
  SIMULATOR_APPROVE_DELAY_MS: z.coerce.number().int().min(0).default(2_000),
  ALLOW_PRIVATE_TARGETS: boolean.optional(),
  MAX_AMOUNT: positiveInt.default(10_000_000),
  AUDIT_EVERY_MS: z.coerce.number().int().min(0).default(300_000),
  ROUTING_WINDOW_MINUTES: z.coerce.number().int().min(1).max(1_440).default(15),
  ROUTING_EXPLORE_SHARE: z.coerce.number().min(0).max(0.5).default(0.1),
  ROUTING_HALF_LIFE_MINUTES: z.coerce.number().min(0).max(1_440).default(5),
  ROUTING_RATE_MARGIN: z.coerce.number().min(0).max(0.5).default(0.05),
  CIRCUIT_BREAKER_FAILURES: positiveInt.default(5),
  CIRCUIT_BREAKER_HALF_OPEN_MS: positiveInt.default(30_000),
  RETENTION_EVENTS: retention(30 * DAY_MS, "30d", "the event log shows 30 days").default(30 * DAY_MS),
  RETENTION_DELIVERIES: retention(DAY_MS, "1d", "the delivery log").default(30 * DAY_MS),
  RETENTION_IPNS: retention(DAY_MS, "1d", "a notification is kept while its payment is open").default(90 * DAY_MS),
  RETENTION_ROUTE_OUTCOMES: retention(DAY_MS, "1d", "the routing window is at most a day").default(7 * DAY_MS),
  RETENTION_IDEMPOTENCY_KEYS: retention(DAY_MS, "1d", "a key is replayed for 24 hours").default(DAY_MS),
  RETENTION_AUDIT_LOG: retention(DAY_MS, "1d", "who did what is kept at least a day").default(1825 * DAY_MS),
  PRUNE_EVERY_MS: z.coerce.number().int().min(0).default(3_600_000),
  SWEEP_EVERY_MS: z.coerce.number().int().min(1_000).default(60_000),
  RENEWAL_SWEEP_EVERY_MS: z.coerce.number().int().min(1_000).default(60_000),
  PRUNE_BATCH_SIZE: z.coerce.number().int().min(1).max(50_000).default(1_000),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(15_000),
  WEBHOOK_RETRY_SCHEDULE: durations.default([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
  RENEWAL_RETRY_SCHEDULE: durations.default([86_400_000, 259_200_000, 432_000_000]),
  SETTLED_REREAD_SCHEDULE: durations
    .refine((list) => list.every((ms, i) => i === 0 || ms > list[i - 1]!), "must be increasing, like 2m,10m,1h")
    .default([120_000, 600_000, 3_600_000, 21_600_000, 86_400_000, 259_200_000, 604_800_000, 2_592_000_000]),
  RATE_LIMIT_RPS: positiveInt.default(100),
  RATE_LIMIT_BURST: positiveInt.default(200),
  PAY_PAGE_RATE_LIMIT_RPS: positiveInt.default(10),
  PAY_PAGE_RATE_LIMIT_BURST: positiveInt.default(200),
  RESCUE_AFTER: z.coerce.number().int().min(1).max(86_400).default(90),
  CORS_ORIGINS: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseCorsOrigins(text);
      if (!parsed) ctx.addIssue({ code: "custom", message: "must be a comma-separated list of origins like https://dashboard.example.com (no path, no *)" });
      return parsed ?? [];
    })
    .default([]),
  TRUSTED_PROXIES: z
    .string()
    .transform((text, ctx) => {
      const entries = text
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== "");
      try {
        proxyAddr.compile(entries);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be a comma-separated list of addresses or CIDR ranges like 10.0.0.0/8, or loopback" });
      }
      return entries;
    })
    .default([]),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).default("Passerelle <no-reply@localhost>"),
  SIGN_IN_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(100_000).default(20),
  METRICS_PORT: port.default(9464),
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

type EnvInput = Record<string, string | undefined>;

/** The most provider calls one request makes in turn: a direct payment's create, token and USSD push. */
export const MAX_PROVIDER_CALLS_PER_REQUEST = 3;
/** Room beside those calls for the database work and the refused-connection retries (100 + 400 ms a call). */
export const IDEMPOTENCY_LOCK_SLACK_MS = 5_000;

/**
 * The longest a request can spend on its provider calls must fit in its idempotency lock's first term,
 * so that the lock never depends on its renewal alone: a renewal that cannot reach the database in time
 * would otherwise let a retry run the payment a second time.
 */
function checkLockFitsProviderCalls(providerTimeoutMs: number, lockMs: number): void {
  const worstCase = MAX_PROVIDER_CALLS_PER_REQUEST * providerTimeoutMs + IDEMPOTENCY_LOCK_SLACK_MS;
  if (worstCase <= lockMs) return;
  const largestTimeout = Math.floor((lockMs - IDEMPOTENCY_LOCK_SLACK_MS) / MAX_PROVIDER_CALLS_PER_REQUEST);
  throw new ConfigError(
    `Invalid configuration: PROVIDER_TIMEOUT_MS=${providerTimeoutMs} does not fit in IDEMPOTENCY_LOCK_MS=${lockMs}: ` +
      `a direct payment makes ${MAX_PROVIDER_CALLS_PER_REQUEST} provider calls in turn (${MAX_PROVIDER_CALLS_PER_REQUEST} × ${providerTimeoutMs} ms + ` +
      `${IDEMPOTENCY_LOCK_SLACK_MS} ms = ${worstCase} ms); ` +
      `set PROVIDER_TIMEOUT_MS to at most ${Math.max(0, largestTimeout)} or IDEMPOTENCY_LOCK_MS to at least ${worstCase}`,
  );
}

interface DevelopmentSecrets {
  jwtSecret: string;
  encryptionKey: string;
  apiKeyPepper: string;
}

/** Reads the development secrets kept under `dataDir`, generating them on first use when `create`. */
function developmentSecrets(dataDir: string, create: boolean): DevelopmentSecrets {
  const file = join(dataDir, "secrets.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as DevelopmentSecrets;
  if (!create)
    throw new ConfigError(
      `no development secrets in ${resolve(file)}: start 'passerelle serve' with this DATA_DIR first, or set JWT_SECRET, ` +
        `ENCRYPTION_KEYS and API_KEY_PEPPER to the server's`,
    );
  const random = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64");
  const secrets: DevelopmentSecrets = {
    jwtSecret: random(48),
    encryptionKey: `1:${random(32)}`,
    apiKeyPepper: random(32),
  };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/** Parses `schema` out of `cleaned`; a bad variable is a {@link ConfigError} naming it. */
function parseVariables<S extends z.ZodObject>(schema: S, cleaned: Record<string, string>): z.infer<S> {
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = String(issue.path[0] ?? "environment");
  const field = Object.hasOwn(schema.shape, name) ? (schema.shape[name] as z.ZodType) : undefined;
  throw new ConfigError(`Invalid configuration: ${describeConfigIssue(name, field, issue, cleaned[name])}`);
}

/**
 * Builds the configuration from environment variables: the gateway's own, and those each of `providers`
 * (default {@link DEFAULT_PROVIDERS}: pass the list the gateway will run) declares. Throws
 * {@link ConfigError} with one line naming the first bad variable. Outside production, missing secrets are
 * generated once under `DATA_DIR`, unless `createDevelopmentSecrets` is false (a command that must use the
 * server's secrets, like `token`): then their absence is a {@link ConfigError}.
 */
export function loadConfig(env: EnvInput = process.env, options: { createDevelopmentSecrets?: boolean; providers?: readonly PaymentProvider[] } = {}): Config {
  // Empty strings count as unset, as a shell `FOO=` usually means.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const e = parseVariables(envSchema, cleaned as Record<string, string>);
  const providers = options.providers ?? DEFAULT_PROVIDERS;
  const providerValues = providers.map((provider) =>
    provider.configuration ? parseVariables(z.object(provider.configuration.variables), cleaned as Record<string, string>) : {},
  );
  checkLockFitsProviderCalls(e.PROVIDER_TIMEOUT_MS, e.IDEMPOTENCY_LOCK_MS);
  const production = e.NODE_ENV === "production";
  const defaults: string[] = [];

  const require = <T>(name: string, value: T | undefined): T => {
    if (value === undefined) throw new ConfigError(`Invalid configuration: ${name} is required when NODE_ENV=production`);
    return value;
  };

  let jwtSecret = e.JWT_SECRET;
  let encryptionKeys = e.ENCRYPTION_KEYS;
  let pepper = e.API_KEY_PEPPER;
  if (production) {
    jwtSecret = require("JWT_SECRET", jwtSecret);
    encryptionKeys = require("ENCRYPTION_KEYS", encryptionKeys);
    pepper = require("API_KEY_PEPPER", pepper);
    require("DATABASE_URL", e.DATABASE_URL);
    if (!e.REDIS_CLUSTER_NODES) require("REDIS_URL", e.REDIS_URL);
  } else if (!jwtSecret || !encryptionKeys || !pepper) {
    const dev = developmentSecrets(e.DATA_DIR, options.createDevelopmentSecrets ?? true);
    jwtSecret ??= dev.jwtSecret;
    encryptionKeys ??= parseEncryptionKeys(dev.encryptionKey)!;
    pepper ??= dev.apiKeyPepper;
    defaults.push(`secrets kept in ${join(e.DATA_DIR, "secrets.json")}`);
  }
  if (!production && !e.DATABASE_URL) defaults.push(`PGlite under ${join(e.DATA_DIR, "pglite")}`);
  if (!production && !e.REDIS_URL && !e.REDIS_CLUSTER_NODES) defaults.push("in-process jobs");

  const simulators = e.SIMULATORS ?? !production;
  if (e.SIMULATORS === undefined && simulators) defaults.push("provider simulators on");
  const allowPrivateTargets = e.ALLOW_PRIVATE_TARGETS ?? !production;
  if (e.ALLOW_PRIVATE_TARGETS === undefined && allowPrivateTargets) defaults.push("private targets allowed");

  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, "");
  // Each provider's section, from the variables it declared; the simulators' keys of a service account
  // are derived from JWT_SECRET, the same in every process of the deployment.
  const sections = Object.fromEntries(
    providers.flatMap((provider, index) =>
      provider.configuration
        ? [[provider.name, provider.configuration.section(providerValues[index]!, { publicBaseUrl, simulators, simulatorSeed: jwtSecret! })]]
        : [],
    ),
  );

  const gateway: GatewayConfig = {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl,
    databaseUrl: e.DATABASE_URL,
    database: {
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    },
    dataDir: e.DATA_DIR,
    redisUrl: e.REDIS_CLUSTER_NODES ? clusterAddress(e.REDIS_CLUSTER_NODES) : e.REDIS_URL,
    // On a cluster, one queue's keys (and one rate-limit bucket) must share a slot: the prefix is a hash tag.
    queuePrefix: e.REDIS_CLUSTER_NODES && !e.QUEUE_PREFIX.startsWith("{") ? `{${e.QUEUE_PREFIX}}` : e.QUEUE_PREFIX,
    jwt: { secret: jwtSecret!, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE, jwksUrl: e.JWT_JWKS_URL },
    encryptionKeys: encryptionKeys!,
    apiKeyPepper: pepper!,
    providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
    idempotencyLockMs: e.IDEMPOTENCY_LOCK_MS,
    simulators,
    simulatorApproveDelayMs: e.SIMULATOR_APPROVE_DELAY_MS,
    testClockOffsetFile: e.TEST_CLOCK_OFFSET_FILE,
    allowPrivateTargets,
    maxAmount: e.MAX_AMOUNT,
    auditEveryMs: e.AUDIT_EVERY_MS,
    routing: {
      windowMinutes: e.ROUTING_WINDOW_MINUTES,
      halfLifeMinutes: e.ROUTING_HALF_LIFE_MINUTES,
      rateMargin: e.ROUTING_RATE_MARGIN,
      exploreShare: e.ROUTING_EXPLORE_SHARE,
      breakerFailures: e.CIRCUIT_BREAKER_FAILURES,
      breakerHalfOpenMs: e.CIRCUIT_BREAKER_HALF_OPEN_MS,
    },
    retention: {
      eventsMs: e.RETENTION_EVENTS,
      deliveriesMs: e.RETENTION_DELIVERIES,
      ipnsMs: e.RETENTION_IPNS,
      routeOutcomesMs: e.RETENTION_ROUTE_OUTCOMES,
      idempotencyKeysMs: e.RETENTION_IDEMPOTENCY_KEYS,
      auditLogMs: e.RETENTION_AUDIT_LOG,
      everyMs: e.PRUNE_EVERY_MS,
      batchSize: e.PRUNE_BATCH_SIZE,
    },
    sweepEveryMs: e.SWEEP_EVERY_MS,
    renewalSweepEveryMs: e.RENEWAL_SWEEP_EVERY_MS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookRetrySchedule: e.WEBHOOK_RETRY_SCHEDULE,
    renewalRetrySchedule: e.RENEWAL_RETRY_SCHEDULE,
    settledRereadSchedule: e.SETTLED_REREAD_SCHEDULE,
    rateLimit: { rps: e.RATE_LIMIT_RPS, burst: e.RATE_LIMIT_BURST },
    payPageRateLimit: { rps: e.PAY_PAGE_RATE_LIMIT_RPS, burst: e.PAY_PAGE_RATE_LIMIT_BURST },
    rescueAfterMs: e.RESCUE_AFTER * 1_000,
    corsOrigins: e.CORS_ORIGINS,
    trustedProxies: e.TRUSTED_PROXIES,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    signInAddressLimit: e.SIGN_IN_ADDRESS_LIMIT,
    logLevel: e.LOG_LEVEL,
    developmentDefaults: defaults,
  };
  // A provider's section never replaces a setting of the gateway's own.
  for (const name of Object.keys(sections))
    if (Object.hasOwn(gateway, name)) throw new ConfigError(`Invalid configuration: provider ${name} is named like a setting of the gateway`);
  return { ...sections, ...gateway } as Config;
}
