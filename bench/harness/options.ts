/**
 * The harness's settings: flags first, then `BENCH_*` environment variables, then defaults.
 */
import { parseArgs } from "node:util";

export type GeneratorChoice = "auto" | "wrk" | "bun";

export interface BenchOptions {
  durationS: number;
  warmupS: number;
  /** Each reference and scenario runs this many times, alternating; the table shows medians. */
  rounds: number;
  connections: number;
  /** wrk threads (`-t`); the Bun generator is always one process. */
  threads: number;
  generator: GeneratorChoice;
  /** Only scenarios whose name contains this text (and their references) run. */
  filter: string | undefined;
  startTimeoutS: number;
  /** Admin connection used to create and drop the scratch database. */
  postgresUrl: string;
  redisUrl: string;
  /** Skip writing `bench/results/`. */
  noSave: boolean;
  /** Fan-out scenario sizes; undefined: the scenario's own. */
  fanoutEvents: number | undefined;
  fanoutEndpoints: number | undefined;
  /** Checkouts made (and IPNs replayed at most) per round of the IPN intake. */
  ipns: number;
  /** The provider A simulator's approval delay below 1000 (`passerelle sandbox --approve-delay-ms`). */
  approveDelayMs: number;
  /** Run the gateway under `bun --cpu-prof --cpu-prof-md`, writing the profile under `bench/results/profiles/`. */
  cpuProf: boolean;
  /** The profiler's sampling interval in µs (`bun --cpu-prof-interval`); undefined: Bun's 1000. */
  cpuProfIntervalUs: number | undefined;
  /** Run the soak (`harness/soak.ts`) instead of the table: mixed traffic at a fixed rate, RSS and p99 per minute. */
  soak: boolean;
  /** Measured minutes of the soak, after its warm-up. */
  soakMinutes: number;
  /** Arrivals per second of the soak (an open model: sent on time whatever the answers do). */
  soakRate: number;
}

export const USAGE = `usage: bun run bench [options]        (or set the BENCH_* variable shown)
  --duration <s>        seconds measured per scenario            (BENCH_DURATION, default 10)
  --warmup <s>          seconds of unmeasured load before each   (BENCH_WARMUP, default 2)
  --rounds <n>          run everything n times, show medians    (BENCH_ROUNDS, default 1)
  --connections <n>     concurrent keep-alive connections        (BENCH_CONNECTIONS, default 50)
  --threads <n>         wrk threads                              (BENCH_THREADS, default 1)
  --generator <g>       auto | wrk | bun                         (BENCH_GENERATOR, default auto: wrk when installed)
  --filter <text>       only scenarios whose name contains text  (BENCH_FILTER)
  --start-timeout <s>   wait this long for /health/ready         (BENCH_START_TIMEOUT, default 30)
  --postgres-url <url>  admin connection for the scratch DB      (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>     Redis for the gateway's jobs             (BENCH_REDIS_URL, default redis://127.0.0.1:6379)
  --fanout-events <n>   events of the webhook fan-out            (BENCH_FANOUT_EVENTS, default 1000)
  --fanout-endpoints <n> endpoints each event goes to            (BENCH_FANOUT_ENDPOINTS, default 4)
  --ipns <n>            checkouts paid and IPNs replayed/round   (BENCH_IPNS, default 20000)
  --approve-delay-ms <n> provider A sandbox approval delay        (BENCH_APPROVE_DELAY_MS, default 2000)
  --cpu-prof            profile the gateway (bun --cpu-prof --cpu-prof-md) into bench/results/profiles/;
                        use with --filter: the profile covers the whole run
  --cpu-prof-interval <µs> the profiler's sampling interval     (BENCH_CPU_PROF_INTERVAL, default Bun's 1000)
  --no-save             do not write bench/results/*.json
  --soak                instead of the table: mixed traffic (payments, reads, lists, IPNs, payouts) at a fixed
                        rate, the gateway's and the simulators' RSS and p99 per minute, minute 1 vs the last
  --soak-minutes <n>    measured minutes of the soak, after 30 s of warm-up (BENCH_SOAK_MINUTES, default 10, at most 50)
  --soak-rate <r>       requests per second of the soak          (BENCH_SOAK_RATE, default 100)`;

function seconds(name: string, text: string): number {
  const value = Number(text.replace(/s$/, ""));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`bench: ${name} must be a positive number of seconds, got '${text}'`);
  return value;
}

function positive(name: string, text: string, unit: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`bench: ${name} must be a positive number of ${unit}, got '${text}'`);
  return value;
}

function count(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`bench: ${name} must be a positive integer, got '${text}'`);
  return value;
}

function optionalCount(name: string, text: string | undefined): number | undefined {
  return text ? count(name, text) : undefined;
}

/** Parses `argv` (without the program name) and `env`. Throws with a one-line message on a bad value. */
export function parseBenchOptions(argv: string[], env: Record<string, string | undefined>): BenchOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string" },
      threads: { type: "string" },
      generator: { type: "string" },
      filter: { type: "string" },
      "start-timeout": { type: "string" },
      "postgres-url": { type: "string" },
      "redis-url": { type: "string" },
      "no-save": { type: "boolean" },
      "fanout-events": { type: "string" },
      "fanout-endpoints": { type: "string" },
      ipns: { type: "string" },
      "cpu-prof": { type: "boolean" },
      "cpu-prof-interval": { type: "string" },
      "approve-delay-ms": { type: "string" },
      soak: { type: "boolean" },
      "soak-minutes": { type: "string" },
      "soak-rate": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const pick = (flag: string | undefined, envName: string, fallback: string) => flag ?? (env[envName] || fallback);
  const generator = pick(values.generator, "BENCH_GENERATOR", "auto");
  if (generator !== "auto" && generator !== "wrk" && generator !== "bun") throw new Error(`bench: --generator must be auto, wrk or bun, got '${generator}'`);
  const options: BenchOptions = {
    durationS: seconds("--duration", pick(values.duration, "BENCH_DURATION", "10")),
    warmupS: Number(pick(values.warmup, "BENCH_WARMUP", "2").replace(/s$/, "")),
    rounds: count("--rounds", pick(values.rounds, "BENCH_ROUNDS", "1")),
    connections: count("--connections", pick(values.connections, "BENCH_CONNECTIONS", "50")),
    threads: count("--threads", pick(values.threads, "BENCH_THREADS", "1")),
    generator,
    filter: values.filter ?? (env.BENCH_FILTER || undefined),
    startTimeoutS: seconds("--start-timeout", pick(values["start-timeout"], "BENCH_START_TIMEOUT", "30")),
    postgresUrl: pick(values["postgres-url"], "BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    redisUrl: pick(values["redis-url"], "BENCH_REDIS_URL", "redis://127.0.0.1:6379"),
    noSave: values["no-save"] ?? false,
    fanoutEvents: optionalCount("--fanout-events", values["fanout-events"] ?? env.BENCH_FANOUT_EVENTS),
    fanoutEndpoints: optionalCount("--fanout-endpoints", values["fanout-endpoints"] ?? env.BENCH_FANOUT_ENDPOINTS),
    ipns: count("--ipns", pick(values.ipns, "BENCH_IPNS", "20000")),
    approveDelayMs: Number(pick(values["approve-delay-ms"], "BENCH_APPROVE_DELAY_MS", "2000")),
    cpuProf: values["cpu-prof"] ?? false,
    cpuProfIntervalUs: optionalCount("--cpu-prof-interval", values["cpu-prof-interval"] ?? env.BENCH_CPU_PROF_INTERVAL),
    soak: values.soak ?? false,
    soakMinutes: count("--soak-minutes", pick(values["soak-minutes"], "BENCH_SOAK_MINUTES", "10")),
    soakRate: positive("--soak-rate", pick(values["soak-rate"], "BENCH_SOAK_RATE", "100"), "requests per second"),
  };
  // The tenants' bearer tokens last an hour, and the soak's set-up takes a few minutes of it.
  if (options.soakMinutes > 50) throw new Error("bench: --soak-minutes is at most 50 (the tenants' tokens last an hour)");
  if (!Number.isInteger(options.approveDelayMs) || options.approveDelayMs < 0)
    throw new Error("bench: --approve-delay-ms must be a whole number of milliseconds");
  if (!Number.isFinite(options.warmupS) || options.warmupS < 0) throw new Error("bench: --warmup must be 0 or more seconds");
  if (options.threads > options.connections) throw new Error("bench: --threads cannot exceed --connections");
  return options;
}
