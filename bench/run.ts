#!/usr/bin/env bun
/**
 * `bun run bench`: starts the gateway in production mode on a scratch PostgreSQL database and Redis
 * prefix, and the reference servers, each in its own process; loads each scenario for a fixed time at
 * fixed concurrency from a separate load-generator process; prints one table and writes it as JSON under
 * `bench/results/`. Everything it created is removed at the end, on an error and on Ctrl-C.
 *
 * See bench/README.md, and `bun run bench --help` for the options.
 */
import { join } from "node:path";
import { indent, stopChild } from "./harness/child-process.ts";
import { createCleanup, type Cleanup } from "./harness/cleanup.ts";
import { chooseGenerator, type Generator } from "./load/mod.ts";
import { measure, settle, type Surroundings, type Target } from "./harness/measure.ts";
import { parseBenchOptions, USAGE, type BenchOptions } from "./harness/options.ts";
import { formatCostTable, formatSettings, formatTable, machineFacts, saveReport, type BenchReport, type ResultRow } from "./harness/report.ts";
import { measureBackgroundCpu, readRssMb } from "./harness/proc-stats.ts";
import { combineRounds } from "./harness/rounds.ts";
import {
  FANOUT_PHASE,
  fanoutScenarios,
  fillPlaceholders,
  fillRequest,
  IPN_PHASE,
  ipnScenarios,
  references,
  scenarios,
  type BenchVariables,
  type FanoutScenario,
  type IpnScenario,
  type Reference,
  type ReferenceTarget,
  type Scenario,
  type SetupName,
} from "./scenarios.ts";
import {
  measureFanout,
  measureFetchReference,
  measureQueueFloor,
  QUEUE_FLOOR_NAME,
  setUpFanout,
  type FanoutContext,
  type FanoutSetup,
} from "./harness/fanout.ts";
import { formatSoak, runSoak, saveSoakReport } from "./harness/soak.ts";
import { measureInsertReference, measureIpnIntake, prepareIpns, type IpnContext } from "./harness/ipn-intake.ts";
import {
  gatewayApi,
  pointProviderAWebhook,
  prepareProviderWorld,
  refreshToken,
  setUpProviderA,
  setUpProviderB,
  sinkBaseUrl,
  type GatewayApi,
  type ProviderASetup,
  type ProviderBSetup,
  type ProviderWorld,
} from "./harness/provider-setup.ts";
import { createScratchDatabase, deleteRedisKeys, openDatabaseStats, pingRedis, randomSuffix, type DatabaseStats } from "./harness/scratch-stores.ts";
import { launchGateway, launchReferenceServer, launchSimulators, mintAdminToken, REPO_ROOT, type LaunchedServer } from "./harness/servers.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Whether `name` contains the filter, or one of its `|`-separated alternatives (`--filter "direct-payment (|POST /payments ("`). */
const matches = (filter: string | undefined, name: string) =>
  !filter ||
  filter
    .toLowerCase()
    .split("|")
    .some((part) => part !== "" && name.toLowerCase().includes(part));

/** Fan-out scenarios selected by `--filter`, with the sizes the options give. */
function planFanout(options: BenchOptions): FanoutScenario[] {
  return fanoutScenarios
    .filter((s) => matches(options.filter, s.name) || matches(options.filter, "fan-out"))
    .map((s) => {
      // --fanout-events sizes the burst; a paced run keeps its own length (its rate fixes its duration).
      const events = s.eventsPerSecond ? s.events : (options.fanoutEvents ?? s.events);
      const endpoints = options.fanoutEndpoints ?? s.endpoints;
      return { ...s, events, endpoints, name: `${s.name} (${events} events × ${endpoints} endpoints)` };
    });
}

/** IPN scenarios selected by `--filter` (`ipn` selects them all). */
function planIpn(options: BenchOptions): IpnScenario[] {
  return ipnScenarios.filter((s) => matches(options.filter, s.name) || matches(options.filter, s.webhookName) || matches(options.filter, "ipn"));
}

interface Group {
  reference: Reference;
  scenarios: Scenario[];
}

/** Scenarios selected by `--filter`, grouped under the reference each is compared with, in phase then list order. */
function plan(filter: string | undefined, others: number): Group[] {
  const chosen = scenarios.filter((s) => matches(filter, s.name));
  if (chosen.length === 0 && others === 0) throw new Error(`bench: no scenario matches --filter '${filter}'`);
  const groups = new Map<string, Group>();
  for (const scenario of chosen) {
    const reference = references.find((r) => r.name === scenario.reference);
    if (!reference) throw new Error(`bench: scenario '${scenario.name}' names an unknown reference '${scenario.reference}'`);
    const group = groups.get(reference.name) ?? { reference, scenarios: [] };
    group.scenarios.push(scenario);
    groups.set(reference.name, group);
  }
  return [...groups.values()].sort((a, b) => a.reference.phase - b.reference.phase);
}

async function launch(server: Promise<LaunchedServer>, cleanup: Cleanup): Promise<{ target: Target; startupMs: number }> {
  const launched = await server;
  cleanup.add(`stop ${launched.child.label}`, async () => {
    const how = await stopChild(launched.child);
    if (how !== "stopped" && !how.startsWith("already")) log(`bench: ${launched.child.label}: ${how}`);
  });
  const startupMs = await launched.ready;
  return { target: { baseUrl: launched.baseUrl, child: launched.child }, startupMs };
}

/** The set-ups made through the gateway's API, and the placeholders they fill. */
interface Setups {
  providerA?: ProviderASetup;
  providerB?: ProviderBSetup;
}

function variablesOf(adminToken: string, setups: Setups, world: ProviderWorld | undefined): BenchVariables {
  const variables: BenchVariables = { adminToken };
  if (setups.providerA && world)
    variables.providerA = {
      tenantToken: setups.providerA.tenant.token,
      approvedTransactionId: String(setups.providerA.approvedTransactionId),
      referenceSecretKey: world.referenceAccount.secretKey,
    };
  if (setups.providerB && world)
    variables.providerB = {
      tenantId: setups.providerB.tenant.id,
      tenantToken: setups.providerB.tenant.token,
      masterKey: setups.providerB.keys.masterKey,
      privateKey: setups.providerB.keys.privateKey,
      token: setups.providerB.keys.token,
      storeName: setups.providerB.tenant.storeName,
      callbackUrl: `${sinkBaseUrl(world.receiver)}/providerB/webhook`,
    };
  return variables;
}

/** One group of a round: its reference, then each scenario against the gateway, ratios and added p50 within the round. */
async function measureGroup(
  group: Group,
  variables: BenchVariables,
  targets: { gateway: Target; reference: Target; servers: Map<ReferenceTarget, Target> },
  env: { generator: Generator; options: BenchOptions; cleanup: Cleanup; around: Surroundings; databaseStats: DatabaseStats },
  tag: string,
): Promise<ResultRow[]> {
  const { generator, options, cleanup, around } = env;
  const rows: ResultRow[] = [];
  log(`bench: ${group.reference.name}${tag}`);
  const referenceEntry = {
    ...group.reference,
    kind: "reference" as const,
    reference: null,
    request: fillRequest(group.reference.request, variables),
    ...(group.reference.flow ? { flow: fillPlaceholders(group.reference.flow, variables) } : {}),
  };
  const referenceRow = await measure(referenceEntry, targets.reference, generator, options, cleanup, around);
  rows.push(referenceRow);
  for (const scenario of group.scenarios) {
    log(`bench: ${scenario.name}${tag}`);
    const entry = {
      ...scenario,
      kind: "scenario" as const,
      request: fillRequest(scenario.request, variables),
      ...(scenario.flow ? { flow: fillPlaceholders(scenario.flow, variables) } : {}),
    };
    // A floor loads its own server; only the gateway's rows count the database's transactions.
    const row = scenario.server
      ? await measure(entry, targets.servers.get(scenario.server)!, generator, options, cleanup, around)
      : await measure(entry, targets.gateway, generator, options, cleanup, {
          ...around,
          databaseStats: env.databaseStats,
          gatewayUrl: targets.gateway.baseUrl,
        });
    if (row.load && referenceRow.load) {
      row.ratio = row.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
      const [mine, theirs] = [row.load.latencyMs.p50, referenceRow.load.latencyMs.p50];
      if (mine !== null && theirs !== null) row.addedP50Ms = mine - theirs;
    }
    rows.push(row);
  }
  return rows;
}

async function run(options: BenchOptions, cleanup: Cleanup): Promise<boolean> {
  const startedAt = new Date().toISOString();
  // The soak replaces the table: none of its rows, both providers' set-ups.
  const fanout = options.soak ? [] : planFanout(options);
  const ipn = options.soak ? [] : planIpn(options);
  const groups = options.soak ? [] : plan(options.filter, fanout.length + ipn.length);
  const needs = new Set<SetupName>(options.soak ? ["providerA", "providerB"] : []);
  for (const group of groups) for (const entry of [group.reference, ...group.scenarios]) if (entry.setup) needs.add(entry.setup);
  if (ipn.length > 0) needs.add("providerB");
  const generator = await chooseGenerator(options.generator);
  log(`bench: load generator ${generator.version}${generator.name === "bun" ? " (wrk not found on PATH)" : ""}`);

  await pingRedis(options.redisUrl);
  const database = await createScratchDatabase(options.postgresUrl);
  cleanup.add(`drop database ${database.name}`, () => database.drop());
  const queuePrefix = `passerelle_bench_${randomSuffix()}`;
  cleanup.add(`delete Redis keys ${queuePrefix}:*`, async () => {
    await deleteRedisKeys(options.redisUrl, queuePrefix);
  });
  log(`bench: database ${database.name}, Redis prefix ${queuePrefix}`);
  const databaseStats = openDatabaseStats(options.postgresUrl, database.name);
  cleanup.add("close the database statistics connection", () => databaseStats.close());

  // The simulators (one `passerelle sandbox` process) and the providers' receiver start before the
  // gateway: its configuration names them and the service's provider A account made on the simulator.
  let world: ProviderWorld | undefined;
  if (needs.size > 0) {
    const simulators = await launchSimulators(options.startTimeoutS, options.approveDelayMs);
    const simulatorsUp = await launch(Promise.resolve(simulators), cleanup);
    const receiver = await launch(launchReferenceServer("webhook-receiver", options.startTimeoutS), cleanup);
    world = await prepareProviderWorld({ ...simulators, ...simulatorsUp.target }, receiver.target);
    log(
      `bench: simulators at ${simulators.providerAUrl} (provider A) and ${simulators.providerBUrl} (provider B), ready in ${Math.round(simulatorsUp.startupMs)} ms`,
    );
  }
  const providerWorld = world;
  const launchedGateway = await launchGateway(
    { databaseUrl: database.url, redisUrl: options.redisUrl, queuePrefix },
    options.startTimeoutS,
    providerWorld
      ? () => ({
          providerAUrl: providerWorld.simulators.providerAUrl,
          providerASecretKey: providerWorld.serviceAccount.secretKey,
          providerAWebhookSecret: providerWorld.serviceAccount.webhookSecret,
          providerBUrl: providerWorld.simulators.providerBUrl,
          publicBaseUrl: sinkBaseUrl(providerWorld.receiver),
        })
      : undefined,
    options.cpuProf
      ? { dir: join(import.meta.dir, "results", "profiles"), name: `gateway-${startedAt.replace(/:/g, "-")}`, intervalUs: options.cpuProfIntervalUs }
      : undefined,
  );
  if (options.cpuProf)
    log(`bench: profiling the gateway: bench/results/profiles/gateway-${startedAt.replace(/:/g, "-")}.cpuprofile (.md beside it), written when it stops`);
  const gateway = await launch(Promise.resolve(launchedGateway), cleanup);
  const idleRssMb = readRssMb(gateway.target.child.pid);
  log(`bench: gateway ready in ${Math.round(gateway.startupMs)} ms at ${gateway.target.baseUrl}`);
  if (world) await pointProviderAWebhook(world.simulators.providerAUrl, world.serviceAccount.secretKey, `${gateway.target.baseUrl}/providerA/webhook/sandbox`);
  const background = await measureBackgroundCpu(gateway.target.child.pid);
  if (background && background.machineCores - background.processCores > 0.25)
    log(
      `bench: ! before the run, other processes kept ${(background.machineCores - background.processCores).toFixed(2)} of ` +
        `${navigator.hardwareConcurrency} cores busy: the numbers below will be low and noisy`,
    );
  const adminToken = await mintAdminToken(launchedGateway.env);
  const api: GatewayApi = gatewayApi(gateway.target.baseUrl);

  // Tenants, tokens, credentials and endpoints, through the gateway's own API.
  const setups: Setups = {};
  if (world && needs.has("providerA")) setups.providerA = await setUpProviderA(api, adminToken);
  if (world && needs.has("providerB")) setups.providerB = await setUpProviderB(api, adminToken, world);

  if (options.soak) {
    const soak = await runSoak(
      {
        api,
        simulators: world!.simulators,
        providerA: setups.providerA!,
        ipn: { gateway: gateway.target, api, world: world!, setup: setups.providerB!, databaseUrl: database.url, databaseStats },
        gatewayPid: gateway.target.child.pid,
        simulatorsPid: world!.simulators.child.pid,
        gatewayExited: () => gateway.target.child.hasExited(),
      },
      { minutes: options.soakMinutes, ratePerS: options.soakRate },
      {
        cleanup,
        machine: machineFacts(REPO_ROOT),
        approveDelayMs: options.approveDelayMs,
        idleRssMb,
        logTail: () => gateway.target.child.outputTail(),
      },
    );
    process.stdout.write(`\n${formatSoak(soak)}\n\n`);
    const logTail = soak.gateway.logTail.trim();
    if (logTail) log(`bench: the gateway logged (LOG_LEVEL=warn), last lines:\n${indent(logTail.split("\n").slice(-20).join("\n"))}`);
    if (soak.failure) log(`bench: ${soak.failure}. Its output:\n${indent(gateway.target.child.outputTail())}`);
    if (!options.noSave) log(`bench: results written to ${saveSoakReport(join(import.meta.dir, "results"), soak)} and soak-latest.json`);
    return soak.failure === null && soak.minutes.length > 0;
  }

  // Reference servers (and the floors' servers) start once and stay up (idle, they take no CPU) so that rounds can alternate.
  const referenceTargets = new Map<ReferenceTarget, Target>();
  const servers = groups.flatMap((group) => [group.reference.server, ...group.scenarios.flatMap((s) => (s.server ? [s.server] : []))]);
  for (const server of servers) {
    if (referenceTargets.has(server)) continue;
    if (server === "provider-a-simulator" || server === "provider-b-simulator") {
      const sims = world!.simulators;
      referenceTargets.set(server, { baseUrl: server === "provider-a-simulator" ? sims.providerAUrl : sims.providerBUrl, child: sims.child });
      continue;
    }
    // The provider A floor calls the simulator on the reference's account (its webhooks go to the sink).
    const settings: Record<string, string> =
      server === "provider-a-proxy" ? { PROXY_UPSTREAM: world!.simulators.providerAUrl, PROXY_SECRET_KEY: world!.referenceAccount.secretKey } : {};
    const launched = await launch(launchReferenceServer(server, options.startTimeoutS, settings), cleanup);
    referenceTargets.set(server, launched.target);
  }

  // The fan-out's receiver, tenant and endpoints are set up once; each round sends a fresh batch.
  let fanoutContext: FanoutContext | undefined;
  const fanoutSetups = new Map<number, FanoutSetup>();
  if (fanout.length > 0) {
    const receiver = await launch(launchReferenceServer("webhook-receiver", options.startTimeoutS), cleanup);
    fanoutContext = { gateway: gateway.target, gatewayEnv: launchedGateway.env, adminToken, receiver: receiver.target };
    for (const endpoints of new Set(fanout.map((s) => s.endpoints))) fanoutSetups.set(endpoints, await setUpFanout(fanoutContext, endpoints));
  }

  const around: Surroundings = world
    ? { simulatorsPid: world.simulators.child.pid, quietPids: [gateway.target.child.pid, world.simulators.child.pid] }
    : { quietPids: [gateway.target.child.pid] };
  const ipnContext: IpnContext | undefined =
    ipn.length > 0 && world && setups.providerB
      ? { gateway: gateway.target, api, world, setup: setups.providerB, databaseUrl: database.url, databaseStats }
      : undefined;

  const rounds: ResultRow[][] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const tag = options.rounds > 1 ? ` (round ${round}/${options.rounds})` : "";
    // Tenant tokens from POST /auth/token last an hour: a fresh one per round.
    for (const setup of [setups.providerA, setups.providerB]) if (setup) await refreshToken(api, setup.tenant);
    const variables = variablesOf(adminToken, setups, world);

    const steps: { phase: number; run: () => Promise<ResultRow[]> }[] = groups.map((group) => ({
      phase: group.reference.phase,
      run: () =>
        measureGroup(
          group,
          variables,
          { gateway: gateway.target, reference: referenceTargets.get(group.reference.server)!, servers: referenceTargets },
          { generator, options, cleanup, around, databaseStats },
          tag,
        ),
    }));
    if (fanout.length > 0)
      steps.push({
        phase: FANOUT_PHASE,
        run: async () => {
          const rows: ResultRow[] = [];
          await settle(around.quietPids);
          // One reference row for the fan-outs (they share it), as many requests as the largest batch.
          const largest = fanout.reduce<FanoutScenario | undefined>(
            (big, s) => (!big || s.events * s.endpoints > big.events * big.endpoints ? s : big),
            undefined,
          );
          const referenceRow = largest
            ? await (log(`bench: ${largest.reference}${tag}`), measureFetchReference(largest, fanoutContext!, largest.endpoints))
            : undefined;
          if (referenceRow) rows.push(referenceRow);
          if (largest) {
            log(`bench: ${QUEUE_FLOOR_NAME}${tag}`);
            const floor = await measureQueueFloor(largest, fanoutContext!, largest.endpoints);
            if (floor.load && referenceRow?.load) floor.ratio = floor.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
            rows.push(floor);
          }
          for (const scenario of fanout) {
            log(`bench: ${scenario.name}${tag}`);
            const row = await measureFanout(scenario, fanoutContext!, fanoutSetups.get(scenario.endpoints)!, round);
            // A paced run's rate is its setting, not a result: no ratio.
            if (row.load && referenceRow?.load && !scenario.eventsPerSecond) row.ratio = row.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
            if (gateway.target.child.hasExited())
              row.failure = `the gateway exited during the fan-out. Its output:\n${indent(gateway.target.child.outputTail())}`;
            rows.push(row);
          }
          return rows;
        },
      });
    if (ipnContext)
      steps.push({
        phase: IPN_PHASE,
        run: async () => {
          const rows: ResultRow[] = [];
          for (const scenario of ipn) {
            log(`bench: ${scenario.name}${tag}: preparing ${options.ipns} paid checkouts`);
            const prepared = await prepareIpns(ipnContext, options.ipns, cleanup);
            log(`bench: ${scenario.reference}${tag}`);
            const referenceRow = await measureInsertReference(scenario, ipnContext, prepared.sampleData, options);
            log(`bench: ${scenario.name}${tag}`);
            const [intake, webhook, paced] = await measureIpnIntake(scenario, ipnContext, prepared, options, cleanup);
            if (intake.load && referenceRow.load) intake.ratio = intake.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
            rows.push(referenceRow, intake, webhook, paced);
          }
          return rows;
        },
      });
    const rows: ResultRow[] = [];
    for (const step of steps.sort((a, b) => a.phase - b.phase)) rows.push(...(await step.run()));
    rounds.push(rows);
  }
  const rows = combineRounds(rounds);

  const report: BenchReport = {
    startedAt,
    machine: machineFacts(REPO_ROOT),
    generator,
    settings: {
      durationS: options.durationS,
      warmupS: options.warmupS,
      connections: options.connections,
      threads: generator.name === "wrk" ? options.threads : null,
      rounds: options.rounds,
      ...(world ? { approveDelayMs: options.approveDelayMs } : {}),
      ...(ipnContext ? { ipns: options.ipns } : {}),
    },
    gateway: {
      startupMs: gateway.startupMs,
      idleRssMb,
      idleCpuCores: background?.processCores ?? null,
      logTail: gateway.target.child.outputTail(),
    },
    backgroundCpuCores: background ? background.machineCores - background.processCores : null,
    rows,
  };
  process.stdout.write(`\n${formatSettings(report)}\n\n${formatTable(rows)}\n\nWhere the time went (medians):\n\n${formatCostTable(rows)}\n\n`);
  const logTail = report.gateway.logTail.trim();
  if (logTail) log(`bench: the gateway logged (LOG_LEVEL=warn), last lines:\n${indent(logTail.split("\n").slice(-20).join("\n"))}`);
  if (world) {
    const simulatorTail = world.simulators.child
      .outputTail()
      .trim()
      .split("\n")
      .filter((line) => !/simulator on http/.test(line));
    if (simulatorTail.length > 0) log(`bench: the simulators wrote, last lines:\n${indent(simulatorTail.slice(-10).join("\n"))}`);
  }
  if (!options.noSave) log(`bench: results written to ${saveReport(join(import.meta.dir, "results"), report)} and latest.json`);
  return rows.every((row) => row.failure === null);
}

async function main(): Promise<number> {
  let options: BenchOptions | "help";
  try {
    options = parseBenchOptions(process.argv.slice(2), process.env);
  } catch (error) {
    log(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const cleanup = createCleanup(log);
  try {
    return (await run(options, cleanup)) ? 0 : 1;
  } catch (error) {
    // After a signal, anything thrown is its echo (a child that was stopped); the handler has reported it.
    if (cleanup.interrupted) return 130;
    log(error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    await cleanup.run();
  }
}

process.exit(await main());
