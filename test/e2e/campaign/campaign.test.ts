/**
 * `bun run campaign` (issue 28 point 3): the same seed prints the same schedule, another seed another; and a
 * small campaign on the real servers — two API nodes and two workers of its own, faults striking — ends with
 * its one line and nothing lost, twice, unbalanced or mismatched.
 *
 * The campaign itself needs the real servers (its processes share a database): skipped without them.
 */
import { describe, expect, it } from "bun:test";
import { join } from "node:path";

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
});
