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
import { chooseGenerator } from "./load/mod.ts";
import { measure, type Target } from "./harness/measure.ts";
import { parseBenchOptions, USAGE, type BenchOptions } from "./harness/options.ts";
import { formatSettings, formatTable, machineFacts, saveReport, type BenchReport, type ResultRow } from "./harness/report.ts";
import { measureBackgroundCpu, readRssMb } from "./harness/proc-stats.ts";
import { combineRounds } from "./harness/rounds.ts";
import { fanoutScenarios, fillRequest, references, scenarios, type BenchVariables, type FanoutScenario, type Reference, type ReferenceServerName, type Scenario } from "./scenarios.ts";
import { measureFanout, measureFetchReference, setUpFanout, type FanoutContext, type FanoutSetup } from "./harness/fanout.ts";
import { createScratchDatabase, deleteRedisKeys, pingRedis, randomSuffix } from "./harness/scratch-stores.ts";
import { launchGateway, launchReferenceServer, mintAdminToken, REPO_ROOT, type LaunchedServer } from "./harness/servers.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);

const matches = (filter: string | undefined, name: string) => !filter || name.toLowerCase().includes(filter.toLowerCase());

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

/** Scenarios selected by `--filter`, grouped under the reference each is compared with, in list order. */
function plan(filter: string | undefined, fanout: FanoutScenario[]): { reference: Reference; scenarios: Scenario[] }[] {
  const chosen = scenarios.filter((s) => matches(filter, s.name));
  if (chosen.length === 0 && fanout.length === 0) throw new Error(`bench: no scenario matches --filter '${filter}'`);
  const groups = new Map<string, { reference: Reference; scenarios: Scenario[] }>();
  for (const scenario of chosen) {
    const reference = references.find((r) => r.name === scenario.reference);
    if (!reference) throw new Error(`bench: scenario '${scenario.name}' names an unknown reference '${scenario.reference}'`);
    const group = groups.get(reference.name) ?? { reference, scenarios: [] };
    group.scenarios.push(scenario);
    groups.set(reference.name, group);
  }
  return [...groups.values()];
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

async function run(options: BenchOptions, cleanup: Cleanup): Promise<boolean> {
  const startedAt = new Date().toISOString();
  const fanout = planFanout(options);
  const groups = plan(options.filter, fanout);
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

  const launchedGateway = await launchGateway({ databaseUrl: database.url, redisUrl: options.redisUrl, queuePrefix }, options.startTimeoutS);
  const gateway = await launch(Promise.resolve(launchedGateway), cleanup);
  const idleRssMb = readRssMb(gateway.target.child.pid);
  log(`bench: gateway ready in ${Math.round(gateway.startupMs)} ms at ${gateway.target.baseUrl}`);
  const background = await measureBackgroundCpu(gateway.target.child.pid);
  if (background && background.machineCores - background.processCores > 0.25)
    log(
      `bench: ! before the run, other processes kept ${(background.machineCores - background.processCores).toFixed(2)} of ` +
        `${navigator.hardwareConcurrency} cores busy: the numbers below will be low and noisy`,
    );
  const variables: BenchVariables = { adminToken: await mintAdminToken(launchedGateway.env) };

  // Reference servers start once and stay up (idle, they take no CPU) so that rounds can alternate.
  const referenceTargets = new Map<ReferenceServerName, Target>();
  for (const { reference } of groups) {
    if (referenceTargets.has(reference.server)) continue;
    const launched = await launch(launchReferenceServer(reference.server, options.startTimeoutS), cleanup);
    referenceTargets.set(reference.server, launched.target);
  }

  // The fan-out's receiver, tenant and endpoints are set up once; each round sends a fresh batch.
  let fanoutContext: FanoutContext | undefined;
  const fanoutSetups = new Map<number, FanoutSetup>();
  if (fanout.length > 0) {
    const receiver = await launch(launchReferenceServer("webhook-receiver", options.startTimeoutS), cleanup);
    fanoutContext = { gateway: gateway.target, gatewayEnv: launchedGateway.env, adminToken: variables.adminToken, receiver: receiver.target };
    for (const endpoints of new Set(fanout.map((s) => s.endpoints))) fanoutSetups.set(endpoints, await setUpFanout(fanoutContext, endpoints));
  }

  const rounds: ResultRow[][] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const tag = options.rounds > 1 ? ` (round ${round}/${options.rounds})` : "";
    const rows: ResultRow[] = [];
    for (const group of groups) {
      log(`bench: ${group.reference.name}${tag}`);
      const referenceEntry = { ...group.reference, kind: "reference" as const, reference: null };
      const referenceRow = await measure(referenceEntry, referenceTargets.get(group.reference.server)!, generator, options, cleanup);
      rows.push(referenceRow);
      for (const scenario of group.scenarios) {
        log(`bench: ${scenario.name}${tag}`);
        const entry = { ...scenario, kind: "scenario" as const, request: fillRequest(scenario.request, variables) };
        const row = await measure(entry, gateway.target, generator, options, cleanup);
        if (row.load && referenceRow.load) row.ratio = row.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
        rows.push(row);
      }
    }
    // One reference row for the fan-outs (they share it), as many requests as the largest batch.
    const largest = fanout.reduce<FanoutScenario | undefined>((big, s) => (!big || s.events * s.endpoints > big.events * big.endpoints ? s : big), undefined);
    const referenceRow = largest ? await (log(`bench: ${largest.reference}${tag}`), measureFetchReference(largest, fanoutContext!, largest.endpoints)) : undefined;
    if (referenceRow) rows.push(referenceRow);
    for (const scenario of fanout) {
      log(`bench: ${scenario.name}${tag}`);
      const row = await measureFanout(scenario, fanoutContext!, fanoutSetups.get(scenario.endpoints)!, round);
      // A paced run's rate is its setting, not a result: no ratio.
      if (row.load && referenceRow?.load && !scenario.eventsPerSecond) row.ratio = row.load.requestsPerSecond / referenceRow.load.requestsPerSecond;
      if (gateway.target.child.hasExited()) row.failure = `the gateway exited during the fan-out. Its output:\n${indent(gateway.target.child.outputTail())}`;
      rows.push(row);
    }
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
  process.stdout.write(`\n${formatSettings(report)}\n\n${formatTable(rows)}\n\n`);
  const logTail = report.gateway.logTail.trim();
  if (logTail) log(`bench: the gateway logged (LOG_LEVEL=warn), last lines:\n${indent(logTail.split("\n").slice(-20).join("\n"))}`);
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
