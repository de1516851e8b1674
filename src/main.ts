#!/usr/bin/env bun
/**
 * The `passerelle` command: argument parsing over `src/mod.ts`, nothing more.
 *
 *   passerelle serve [--no-workers]   HTTP and (unless --no-workers) the workers, in one process
 *   passerelle worker                 the workers only
 *   passerelle migrate                apply the database migrations and exit
 *   passerelle token --admin [--env live] [--ttl 3600]
 *   passerelle token --tenant ten_… [--env live] [--ttl 3600]
 *   passerelle sandbox [--port-a 4001] [--port-b 4002] [--approve-delay-ms 2000]   the provider simulators, standalone
 *   passerelle keys rotate            re-seal every stored secret under the first ENCRYPTION_KEYS key
 *   passerelle openapi                print the OpenAPI document
 */
import { parseArgs } from "node:util";
import { ConfigError, createGateway, generateOpenApi, loadConfig, mintToken, rotateSealedSecrets, type Config } from "./mod.ts";

const USAGE = `usage: passerelle <command>
  serve [--no-workers]     serve HTTP and run the workers (what 'bun run start' runs)
  worker                   run the workers only
  migrate                  apply the database migrations
  token --admin | --tenant <ten_…> [--env sandbox|live] [--ttl <seconds>]
                           print a bearer token on one line
  sandbox [--port-a <n>] [--port-b <n>] [--approve-delay-ms <n>]
                           serve the provider simulators standalone (default ports 4001, 4002)
  keys rotate              re-seal every stored secret under the first ENCRYPTION_KEYS key
  openapi                  print the OpenAPI document`;

function fail(message: string): never {
  process.stderr.write(`passerelle: ${message}\n`);
  process.exit(1);
}

/**
 * The configuration, or one line and exit 1. Only the commands that run the gateway or prepare its data
 * directory (`serve`, `worker`, `migrate`) may generate development secrets: `token` and `keys rotate`
 * must use the ones the server uses, and a new set would only mint tokens it rejects.
 */
function configOrExit(options: { createDevelopmentSecrets: boolean } = { createDevelopmentSecrets: true }): Config {
  try {
    return loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

function stopOnSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}

async function serve(workers: boolean, http: boolean): Promise<void> {
  const config = configOrExit();
  const gateway = await createGateway(config);
  if (config.developmentDefaults.length > 0)
    gateway.deps.logger.warn(`development defaults in use: ${config.developmentDefaults.join(", ")} — set NODE_ENV=production to turn them off`);
  const { url, metricsUrl } = await gateway.start({ http, workers });
  gateway.deps.logger.info({ url, metricsUrl, workers, driver: { database: config.databaseUrl ? "postgres" : "pglite", jobs: gateway.deps.queue.driver } }, "passerelle started");
  stopOnSignals(() => gateway.stop());
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve": {
      const { values } = parseArgs({ args: rest, options: { "no-workers": { type: "boolean" } } });
      return serve(!values["no-workers"], true);
    }
    case "worker":
      return serve(true, false);
    case "migrate": {
      const gateway = await createGateway(configOrExit());
      await gateway.stop();
      process.stdout.write("migrations applied\n");
      return;
    }
    case "token": {
      const { values } = parseArgs({
        args: rest,
        options: {
          admin: { type: "boolean" },
          tenant: { type: "string" },
          env: { type: "string", default: "sandbox" },
          ttl: { type: "string", default: "3600" },
        },
      });
      if (!values.admin === !values.tenant) fail("token needs exactly one of --admin or --tenant <ten_…>");
      if (values.env !== "sandbox" && values.env !== "live") fail("--env must be sandbox or live");
      const ttlSeconds = Number(values.ttl);
      if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) fail("--ttl must be a positive number of seconds");
      const config = configOrExit({ createDevelopmentSecrets: false });
      const token = await mintToken(config.jwt, {
        sub: values.admin ? "operator" : `tenant:${values.tenant}`,
        role: values.admin ? "admin" : undefined,
        tenantId: values.tenant,
        environment: values.env,
        ttlSeconds,
      });
      process.stdout.write(`${token}\n`);
      return;
    }
    case "sandbox": {
      const { values } = parseArgs({
        args: rest,
        options: { "port-a": { type: "string", default: "4001" }, "port-b": { type: "string", default: "4002" }, "approve-delay-ms": { type: "string", default: "2000" } },
      });
      const approveDelayMs = Number(values["approve-delay-ms"]);
      if (!Number.isInteger(approveDelayMs) || approveDelayMs < 0) fail("--approve-delay-ms must be a whole number of milliseconds");
      const host = process.env.HOST ?? "127.0.0.1";
      // Loaded by this command only: `serve` and `worker` in production never load the simulators.
      const { createSimulatorApp } = await import("./providers/simulators/mod.ts");
      const running = (["providerA", "providerB"] as const).map((name) => {
        const port = Number(name === "providerA" ? values["port-a"] : values["port-b"]);
        if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port-${name === "providerA" ? "a" : "b"} must be a port number`);
        const simulator = createSimulatorApp(name, { approveDelayMs });
        const server = Bun.serve({ port, hostname: host, fetch: simulator.fetch });
        process.stdout.write(`${name} simulator on ${server.url.toString().replace(/\/$/, "")}\n`);
        return { server, simulator };
      });
      stopOnSignals(async () => {
        for (const { server, simulator } of running) {
          simulator.close();
          await server.stop(true);
        }
      });
      return;
    }
    case "keys": {
      if (rest[0] !== "rotate") fail(`unknown keys command '${rest[0] ?? ""}' (did you mean 'keys rotate'?)`);
      const gateway = await createGateway(configOrExit({ createDevelopmentSecrets: false }));
      try {
        const report = await rotateSealedSecrets(gateway.deps, gateway.deps.keyring);
        process.stdout.write(`re-sealed ${report.resealed} secret(s) under key v${gateway.deps.keyring.currentVersion}; ${report.current} already were\n`);
      } finally {
        await gateway.stop();
      }
      return;
    }
    case "openapi":
      process.stdout.write(`${JSON.stringify(await generateOpenApi(), null, 2)}\n`);
      return;
    case undefined:
    case "help":
    case "--help":
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      fail(`unknown command '${command}'\n${USAGE}`);
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
