#!/usr/bin/env bun
/**
 * The `passerelle` command: argument parsing over `src/mod.ts`, nothing more. `passerelle --help` lists the
 * commands, `passerelle <command> --help` (or `-h`) shows one; a command never runs when asked for its help.
 *
 *   passerelle serve [--no-workers]   HTTP and (unless --no-workers) the workers, in one process
 *   passerelle worker                 the workers only
 *   passerelle migrate                apply the database migrations and exit
 *   passerelle token --admin [--env live] [--ttl 3600]
 *   passerelle token --tenant ten_… [--env live] [--ttl 3600]
 *   passerelle sandbox [--port-a 4001] [--port-b 4002] [--approve-delay-ms 2000]   the provider simulators, standalone
 *   passerelle keys rotate [--pause-ms 0]   re-seal every stored secret under the first ENCRYPTION_KEYS key
 *   passerelle audit [--env live] [--no-providers]   check the money invariants and the audit log's chains (exit 1 on a violation)
 *   passerelle prune [--batch-size 1000]   delete the rows past their retention (RETENTION_*), in batches
 *   passerelle openapi                print the OpenAPI document
 *
 * Exit status: 0 done, 1 failed (configuration, database, …), 2 wrong usage (unknown command or option, bad argument).
 */
import { join } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Config } from "./mod.ts";

// The gateway's code is loaded when a command runs, not before its arguments are read: `--help` and a usage
// error answer in milliseconds instead of the half second of CPU loading every module costs.
const gatewayCode = () => import("./mod.ts");

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const USAGE = `usage: passerelle <command> [options]
  serve [--no-workers]     serve HTTP and run the workers (what 'bun run start' runs)
  worker                   run the workers only
  migrate                  apply the database migrations
  token --admin | --tenant <ten_…> [--env sandbox|live] [--ttl <seconds>]
                           print a bearer token on one line
  sandbox [--port-a <n>] [--port-b <n>] [--approve-delay-ms <n>]
                           serve the provider simulators standalone (default ports 4001, 4002)
  keys rotate [--pause-ms <n>]
                           re-seal every stored secret under the first ENCRYPTION_KEYS key
  audit [--env sandbox|live] [--no-providers]
                           check the money invariants and the audit log's chains; one line per
                           violation, exit 1 when any
  prune [--batch-size <n>] delete the rows past their retention (RETENTION_*) that nothing needs
  openapi                  print the OpenAPI document
  help [<command>]         print this, or a command's usage ('passerelle <command> --help' does too)
exit status: 0 done, 1 failed, 2 wrong usage`;

type Values = Record<string, string | boolean | undefined>;

/** One command: its usage (printed by `--help`, and after a usage error), its options, and what it does. */
interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  run(values: Values): Promise<void>;
}

/** A wrong argument: reported with the command's usage and exit status 2. */
class UsageError extends Error {
  override name = "UsageError";
}

function fail(message: string, status = EXIT_FAILURE): never {
  process.stderr.write(`passerelle: ${message}\n`);
  process.exit(status);
}

function usageError(message: string, usage: string): never {
  fail(`${message}\n${usage}`, EXIT_USAGE);
}

/**
 * The configuration, or one line and exit 1. Only the commands that run the gateway or prepare its data
 * directory (`serve`, `worker`, `migrate`) may generate development secrets: `token` and `keys rotate`
 * must use the ones the server uses, and a new set would only mint tokens it rejects.
 */
async function configOrExit(options: { createDevelopmentSecrets: boolean } = { createDevelopmentSecrets: true }): Promise<Config> {
  const { ConfigError, loadConfig } = await gatewayCode();
  try {
    return loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

/** A whole number of at least `min` from an option's text, or a {@link UsageError} naming the option. */
function wholeNumber(text: unknown, option: string, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(String(text)) || value < min || value > max) throw new UsageError(`${option} must be ${what} (got ${JSON.stringify(text)})`);
  return value;
}

/** Runs `stop` once on the first SIGINT or SIGTERM, then exits 0, or 1 when stopping failed. */
function stopOnSignals(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      () => process.exit(EXIT_FAILURE),
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}

async function serve(workers: boolean, http: boolean): Promise<void> {
  const loaded = await configOrExit();
  const [{ createGateway }, { endLogger }] = await Promise.all([gatewayCode(), import("./logger.ts")]);
  // The simulators are mounted on the HTTP server: a process without one (`worker`) mounts none and reaches
  // those of the `serve` process at their URLs, with the same derived service account (issue 25).
  const config = http ? loaded : { ...loaded, simulators: false };
  const opening = (async () => {
    const gateway = await createGateway(config);
    const { logger } = gateway.deps;
    if (config.developmentDefaults.length > 0)
      logger.warn(`development defaults in use: ${config.developmentDefaults.join(", ")} — set NODE_ENV=production to turn them off`);
    const { url, metricsUrl } = await gateway.start({ http, workers });
    logger.info(
      { url, metricsUrl, workers, driver: { database: config.databaseUrl ? "postgres" : "pglite", jobs: gateway.deps.queue.driver } },
      "passerelle started",
    );
    return gateway;
  })();
  // The handlers are in before anything opens: a SIGTERM while the gateway is still migrating or starting (or
  // already answering /health/ready before "started" is logged) waits for the start, then stops as usual.
  // A start that fails exits through the rejection below, not here.
  stopOnSignals(async (signal) => {
    const gateway = await opening.catch(() => new Promise<never>(() => {}));
    const { logger } = gateway.deps;
    const started = performance.now();
    const stopMs = () => Math.round(performance.now() - started);
    try {
      await gateway.stop();
      logger.info({ signal, stopMs: stopMs() }, "passerelle stopped");
    } catch (error) {
      logger.error({ signal, stopMs: stopMs(), reason: error instanceof Error ? error.message : String(error) }, "passerelle stopped");
      throw error;
    } finally {
      // The logger writes asynchronously: the line must be out before the process exits.
      await endLogger(logger);
    }
  });
  await opening;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: `usage: passerelle serve [--no-workers]
  Serves HTTP on PORT (metrics on METRICS_PORT) and runs the workers until SIGINT or SIGTERM.
  --no-workers   serve HTTP only (run 'passerelle worker' in another process)`,
    options: { "no-workers": { type: "boolean" } },
    run: (values) => serve(!values["no-workers"], true),
  },
  worker: {
    usage: `usage: passerelle worker
  Runs the workers only (deliveries, provider sync, renewals, sweeps) until SIGINT or SIGTERM.`,
    options: {},
    run: () => serve(true, false),
  },
  migrate: {
    usage: `usage: passerelle migrate
  Applies the pending database migrations and says which (they also run at every start).`,
    options: {},
    async run() {
      const config = await configOrExit();
      const [{ openDatabase }, { migrateToLatest }, { migrations }] = await Promise.all([
        import("./db/connect.ts"),
        import("./db/migrate.ts"),
        import("./db/migrations/index.ts"),
      ]);
      const database = await openDatabase(
        config.databaseUrl
          ? { driver: "postgres", url: config.databaseUrl, ...config.database }
          : {
              driver: "pglite",
              dataDir: join(config.dataDir, "pglite"),
              // As the gateway does: a new data directory starts from the migrated snapshot.
              snapshot: async () => {
                const { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } = await import("./db/pglite-snapshot.ts");
                return loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR);
              },
            },
      );
      try {
        const { applied } = await migrateToLatest(database.db);
        const latest = Object.keys(migrations).sort().at(-1);
        process.stdout.write(
          applied.length === 0
            ? `no migration to apply (the database is at ${latest})\n`
            : `applied ${applied.length} migration${applied.length === 1 ? "" : "s"} (${applied.join(", ")})\n`,
        );
      } finally {
        await database.close();
      }
    },
  },
  token: {
    usage: `usage: passerelle token --admin | --tenant <ten_…> [--env sandbox|live] [--ttl <seconds>]
  Prints a bearer token on one line, signed with the server's JWT_SECRET.
  --admin            an operator token
  --tenant <ten_…>   a token of that tenant
  --env <env>        sandbox (default) or live
  --ttl <seconds>    lifetime (default 3600)`,
    options: {
      admin: { type: "boolean" },
      tenant: { type: "string" },
      env: { type: "string", default: "sandbox" },
      ttl: { type: "string", default: "3600" },
    },
    async run(values) {
      if (!values.admin === !values.tenant) throw new UsageError("token needs exactly one of --admin or --tenant <ten_…>");
      if (values.env !== "sandbox" && values.env !== "live") throw new UsageError("--env must be sandbox or live");
      const ttlSeconds = wholeNumber(values.ttl, "--ttl", "a positive number of seconds", 1);
      const config = await configOrExit({ createDevelopmentSecrets: false });
      const { mintToken } = await gatewayCode();
      const tenantId = typeof values.tenant === "string" ? values.tenant : undefined;
      const token = await mintToken(config.jwt, {
        sub: values.admin ? "operator" : `tenant:${tenantId}`,
        role: values.admin ? "admin" : undefined,
        tenantId,
        environment: values.env,
        ttlSeconds,
      });
      process.stdout.write(`${token}\n`);
    },
  },
  sandbox: {
    usage: `usage: passerelle sandbox [--port-a <n>] [--port-b <n>] [--approve-delay-ms <n>]
  Serves the provider simulators standalone, each from / on its own port, until SIGINT or SIGTERM.
  --port-a <n>             provider A's port (default 4001)
  --port-b <n>             provider B's port (default 4002)
  --approve-delay-ms <n>   how long a simulated payment waits before it is approved (default 2000)`,
    options: {
      "port-a": { type: "string", default: "4001" },
      "port-b": { type: "string", default: "4002" },
      "approve-delay-ms": { type: "string", default: "2000" },
    },
    async run(values) {
      const approveDelayMs = wholeNumber(values["approve-delay-ms"], "--approve-delay-ms", "a whole number of milliseconds");
      const ports = {
        providerA: wholeNumber(values["port-a"], "--port-a", "a port number", 0, 65535),
        providerB: wholeNumber(values["port-b"], "--port-b", "a port number", 0, 65535),
      };
      const host = process.env.HOST ?? "127.0.0.1";
      // Loaded by this command only: `serve` and `worker` in production never load the simulators.
      const { createSimulatorApp } = await import("./providers/simulators.ts");
      const running = (["providerA", "providerB"] as const).map((name) => {
        const simulator = createSimulatorApp(name, { approveDelayMs });
        const server = Bun.serve({ port: ports[name], hostname: host, fetch: simulator.fetch });
        process.stdout.write(`${name} simulator on ${server.url.toString().replace(/\/$/, "")}\n`);
        return { server, simulator };
      });
      stopOnSignals(async () => {
        for (const { server, simulator } of running) {
          simulator.close();
          await server.stop(true);
        }
      });
    },
  },
  "keys rotate": {
    usage: `usage: passerelle keys rotate [--pause-ms <n>]
  Re-seals every stored secret under the first ENCRYPTION_KEYS key, so that the others can be removed.
  Progress goes to stderr; an interrupted rotation is finished by running it again.
  --pause-ms <n>   wait n milliseconds after each row, to spare a busy database (default 0)`,
    options: { "pause-ms": { type: "string", default: "0" } },
    async run(values) {
      const pauseMs = wholeNumber(values["pause-ms"], "--pause-ms", "a whole number of milliseconds");
      // Without the simulators: mounting them would make the service's accounts on them, and log it, for nothing.
      const { createGateway, rotateSealedSecrets } = await gatewayCode();
      const gateway = await createGateway({ ...(await configOrExit({ createDevelopmentSecrets: false })), simulators: false });
      try {
        // A progress line every tenth of the way, and at least every second: a few lines whatever the size.
        let lastTenth = 0;
        let lastLineAt = performance.now();
        const report = await rotateSealedSecrets(gateway.deps, gateway.deps.keyring, {
          afterRow: async ({ done, total }) => {
            const tenth = Math.floor((done * 10) / total);
            if (done < total && (tenth > lastTenth || performance.now() - lastLineAt >= 1000)) {
              process.stderr.write(`re-sealed ${done}/${total}\n`);
              [lastTenth, lastLineAt] = [tenth, performance.now()];
            }
            if (pauseMs > 0) await Bun.sleep(pauseMs);
          },
        });
        const key = `v${gateway.deps.keyring.currentVersion}`;
        process.stdout.write(`re-sealed ${report.resealed} secret(s) under key ${key}; ${report.current} already were\n`);
      } finally {
        await gateway.stop();
      }
    },
  },
  audit: {
    usage: `usage: passerelle audit [--env sandbox|live] [--no-providers]
  Checks the money invariants against the database: every journal sums to zero; no pooled account, and no
  tenant's money on one, below zero; a payment's refunds never above what it collected; one collection per
  payment and per Idempotency-Key; no final state moved backwards; each pooled account's provider balance
  at least what the tenants may spend there (read from the providers; --no-providers skips it); every audit
  log entry matches its hash and follows the one before it in its chain.
  Prints one line per violation and exits 1, or 'audit: no violation' and exits 0.
  --env <env>        only this environment (default both)
  --no-providers     do not read the providers' balances`,
    options: { env: { type: "string" }, "no-providers": { type: "boolean", default: false } },
    async run(values) {
      const env = values.env as string | undefined;
      if (env !== undefined && env !== "sandbox" && env !== "live") throw new UsageError(`--env must be sandbox or live, not ${env}`);
      const { audit, createGateway, violationLine } = await gatewayCode();
      const gateway = await createGateway({ ...(await configOrExit({ createDevelopmentSecrets: false })), simulators: false });
      try {
        const violations = await audit(gateway.deps, { ...(env !== undefined && { environment: env }), withProviders: values["no-providers"] !== true });
        for (const violation of violations) process.stdout.write(`${violationLine(violation)}\n`);
        if (violations.length > 0) {
          process.stderr.write(`passerelle: audit found ${violations.length} violation(s)\n`);
          process.exitCode = EXIT_FAILURE;
        } else process.stdout.write("audit: no violation\n");
      } finally {
        await gateway.stop();
      }
    },
  },
  prune: {
    usage: `usage: passerelle prune [--batch-size <n>]
  Deletes the rows past their retention that nothing needs any more (what a worker does every PRUNE_EVERY_MS):
  final webhook deliveries and their attempts (RETENTION_DELIVERIES), events left without a delivery
  (RETENTION_EVENTS), handled IPNs of final payments (RETENTION_IPNS), the routing window's old minutes
  (RETENTION_ROUTE_OUTCOMES), idempotency keys past their replay (RETENTION_IDEMPOTENCY_KEYS), the oldest
  audit log entries of each chain (RETENTION_AUDIT_LOG, the cut recorded). Pending deliveries, their events,
  open payments' IPNs and keys still replayed are never touched.
  Prints one line per table, then the total; safe to run beside the workers and to interrupt.
  --batch-size <n>   rows per statement (default PRUNE_BATCH_SIZE, 1000)`,
    options: { "batch-size": { type: "string" } },
    async run(values) {
      const batchSize =
        values["batch-size"] === undefined ? undefined : wholeNumber(values["batch-size"], "--batch-size", "a whole number from 1 to 50000", 1, 50_000);
      const { createGateway, PRUNED_TABLES, pruneOldRows, totalPruned } = await gatewayCode();
      const gateway = await createGateway({ ...(await configOrExit({ createDevelopmentSecrets: false })), simulators: false });
      try {
        const report = await pruneOldRows(gateway.deps, batchSize === undefined ? {} : { batchSize });
        const width = Math.max(...PRUNED_TABLES.map((table) => table.length));
        for (const table of PRUNED_TABLES) {
          const { pruned, batches } = report[table];
          process.stdout.write(`${table.padEnd(width)}  ${pruned} pruned in ${batches} batch${batches === 1 ? "" : "es"}\n`);
        }
        process.stdout.write(`prune: ${totalPruned(report)} row(s) pruned\n`);
      } finally {
        await gateway.stop();
      }
    },
  },
  openapi: {
    usage: `usage: passerelle openapi
  Prints the OpenAPI document (JSON) to stdout.`,
    options: {},
    async run() {
      const { generateOpenApi } = await gatewayCode();
      process.stdout.write(`${JSON.stringify(await generateOpenApi(), null, 2)}\n`);
    },
  },
};

const KEYS_USAGE = `usage: passerelle keys rotate [--pause-ms <n>]
  ('passerelle keys rotate --help' for more)`;

/** The command that `argv` names and its own arguments; a usage error when it names none. */
function findCommand(argv: string[]): { command: Command; args: string[] } {
  const [name, ...rest] = argv;
  if (name === "keys") {
    const [sub, ...args] = rest;
    const command = COMMANDS[`keys ${sub}`];
    if (command) return { command, args };
    if (sub === "--help" || sub === "-h") {
      process.stdout.write(`${KEYS_USAGE}\n`);
      process.exit(0);
    }
    if (sub === undefined) usageError("keys needs a command: rotate", KEYS_USAGE);
    usageError(`unknown keys command '${sub}' (did you mean 'keys rotate'?)`, KEYS_USAGE);
  }
  const command = name === undefined ? undefined : Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) usageError(`unknown command '${name}'`, USAGE);
  return { command, args: rest };
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || (first === "help" && rest.length === 0)) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (first === "help") {
    process.stdout.write(`${rest.join(" ") === "keys" ? KEYS_USAGE : findCommand(rest).command.usage}\n`);
    return;
  }
  const { command, args } = findCommand(argv);
  let values: Values;
  try {
    const options = { ...command.options, help: { type: "boolean", short: "h" } } as const;
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (error) {
    // node:util's parse errors ("Unknown option '--x'. To specify a positional…"): their first sentence is the line.
    if ((error as { code?: unknown }).code?.toString().startsWith("ERR_PARSE_ARGS")) {
      const sentence = (error as Error).message.split(/\.(?:\s|$)/)[0]!;
      usageError(sentence.charAt(0).toLowerCase() + sentence.slice(1), command.usage);
    }
    throw error;
  }
  if (values.help) {
    process.stdout.write(`${command.usage}\n`);
    return;
  }
  try {
    await command.run(values);
  } catch (error) {
    if (error instanceof UsageError) usageError(error.message, command.usage);
    throw error;
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  // A start-up failure (database unreachable, a migration failing, a data directory in use) is one line.
  const message = error instanceof Error ? error.message : String(error);
  const causeMessage = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  const cause = causeMessage && !message.includes(causeMessage) ? ` (${causeMessage})` : "";
  fail(`${message}${cause}`.split("\n")[0]!);
}
