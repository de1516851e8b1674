/**
 * `bun run campaign` (issue 28 points 3 and 4): the same seed prints the same schedule, another seed another; a
 * small campaign on the real servers — two API nodes and two workers of its own, faults striking — ends with
 * its one line and nothing lost, twice, unbalanced or mismatched, with a fixed seed and with a random one
 * (printed in the test's name and output, to replay a failure); and so does a small one on a fleet
 * (`--fleet --redis-cluster`: HAProxy, PgBouncer, a PostgreSQL and a Redis Cluster of its own) whose
 * PostgreSQL is restarted and a Redis master killed under it.
 *
 * The campaigns run on the real-server pass only (the first shares the servers' database; the second is
 * minutes of CPU the embedded pass has no use for): skipped, saying why, elsewhere.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { hasBinary } from "../../../deploy/fleet/processes.ts";
import { hasPostgresServer } from "../../../deploy/fleet/stores.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL — the campaign's processes share one database)";

function campaign(args: string[], env: Record<string, string> = {}) {
  const run = Bun.spawnSync(["bun", "scripts/campaign.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
  });
  return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe("bun run campaign --dry-run", () => {
  it("prints the same schedule for the same seed, and another for another seed", () => {
    const first = campaign(["--seed", "7", "--flows", "30", "--faults", "6", "--dry-run"]);
    const again = campaign(["--seed", "7", "--flows", "30", "--faults", "6", "--dry-run"]);
    const other = campaign(["--seed", "8", "--flows", "30", "--faults", "6", "--dry-run"]);
    expect(first.exitCode).toBe(0);
    const lines = first.stdout.trim().split("\n");
    expect(lines[0]).toStartWith("campaign seed=7 flows=30 faults=6 ");
    expect(lines.filter((line) => / flow \d+ /.test(line))).toHaveLength(30);
    expect(lines.filter((line) => / fault \d+ /.test(line))).toHaveLength(6);
    expect(again.stdout).toBe(first.stdout);
    expect(other.stdout).not.toBe(first.stdout);
  });

  it("draws the faults on servers (pg-restart, redis-node-kill) only for --fleet, and the same fleet schedule for the same seed", () => {
    const args = ["--seed", "26", "--flows", "40", "--faults", "10", "--dry-run"];
    const shared = campaign(args);
    const fleet = campaign([...args, "--fleet", "--redis-cluster"]);
    expect(shared.stdout).not.toMatch(/ (pg-restart|redis-node-kill) /);
    expect(fleet.stdout).toMatch(/ pg-restart /);
    expect(fleet.stdout).toMatch(/ redis-node-kill target=[0-2] /);
    expect(fleet.stdout.split("\n")[0]).toEndWith(" fleet redis-nodes=3");
    expect(campaign([...args, "--fleet", "--redis-cluster"]).stdout).toBe(fleet.stdout);
  });

  it("refuses a count that is not a whole number, saying which", () => {
    const run = campaign(["--flows", "many", "--dry-run"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--flows must be a whole number");
  });
});

describe("bun run campaign on the real servers", () => {
  it.skipIf(!onServers)(
    `--seed 7 --flows 30 --faults 6 ends with nothing lost, twice, unbalanced or mismatched${SKIP_NOTE}`,
    () => {
      const run = campaign(["--seed", "7", "--flows", "30", "--faults", "6", "--quiet-ms", "45000"], { DATABASE_URL: DATABASE_URL!, REDIS_URL: REDIS_URL! });
      if (run.exitCode !== 0) console.error(run.stderr);
      expect(run.stdout.trim()).toBe("campaign seed=7 flows=30 faults=6: lost 0, twice 0, unbalanced 0, mismatches 0");
      expect(run.exitCode).toBe(0);
      // The faults did strike: each one's line is in the log.
      expect(run.stderr.match(/^fault \d+ /gm)).toHaveLength(6);
    },
    120_000,
  );

  // A seed CI has not tried before, each run: the same size as the fixed one. It is drawn here and printed first,
  // so that a failure can be replayed (`bun run campaign -- --seed <n> --flows 30 --faults 6`) even when the
  // campaign dies before its last line.
  const randomSeed = Math.floor(Math.random() * 2 ** 31);
  it.skipIf(!onServers)(
    `a random seed (${randomSeed}) --flows 30 --faults 6 ends with nothing lost, twice, unbalanced or mismatched${SKIP_NOTE}`,
    () => {
      console.log(`campaign with a random seed: --seed ${randomSeed} --flows 30 --faults 6`);
      const run = campaign(["--seed", String(randomSeed), "--flows", "30", "--faults", "6", "--quiet-ms", "90000"], {
        DATABASE_URL: DATABASE_URL!,
        REDIS_URL: REDIS_URL!,
      });
      if (run.exitCode !== 0) console.error(`campaign --seed ${randomSeed} failed:\n${run.stderr}`);
      expect(run.stdout.trim()).toBe(`campaign seed=${randomSeed} flows=30 faults=6: lost 0, twice 0, unbalanced 0, mismatches 0`);
      expect(run.exitCode).toBe(0);
      expect(run.stderr.match(/^fault \d+ /gm)).toHaveLength(6);
    },
    180_000,
  );
});

const fleetMissing = [...["haproxy", "pgbouncer", "redis-server", "redis-cli"].filter((name) => !hasBinary(name)), ...(hasPostgresServer() ? [] : ["initdb"])];
const fleetRuns = onServers && fleetMissing.length === 0;
const FLEET_NOTE = fleetRuns ? "" : ` (SKIPPED: ${onServers ? `not installed: ${fleetMissing.join(", ")}` : "the real-server pass runs it"})`;

describe("bun run campaign --fleet", () => {
  it.skipIf(!fleetRuns)(
    `--seed 26 --flows 40 --faults 10 --fleet --redis-cluster: PostgreSQL restarted, a Redis master killed, clocks jumping; nothing lost, twice, unbalanced or mismatched${FLEET_NOTE}`,
    () => {
      const run = campaign(["--seed", "26", "--flows", "40", "--faults", "10", "--fleet", "--redis-cluster", "--quiet-ms", "90000"]);
      if (run.exitCode !== 0) console.error(run.stderr);
      expect(run.stdout.trim()).toBe("campaign seed=26 flows=40 faults=10: lost 0, twice 0, unbalanced 0, mismatches 0");
      expect(run.exitCode).toBe(0);
      expect(run.stderr.match(/^fault \d+ /gm)).toHaveLength(10);
      // The faults on the campaign's own servers did strike.
      expect(run.stderr).toMatch(/^fault \d+ pg-restart: PostgreSQL stopped \(fast\) for \d+ ms, up again/m);
      expect(run.stderr).toMatch(/^fault \d+ redis-node-kill: Redis 127\.0\.0\.1:\d+ SIGKILLed, started again with its data/m);
      expect(run.stderr).toMatch(/^fault \d+ clock-jump: (api|worker) \d's clock \d+ s ahead/m);
    },
    // Its renewal schedule may be made on an API node whose clock is 184 s ahead (fault 9): its first period was
    // then due that much later, and the campaign waited for it (about 4 minutes in all); since issue 28 it is due at
    // once (77 s in all on a loaded machine). The limit leaves room for a loaded CI machine.
    360_000,
  );
});
