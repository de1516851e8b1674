/**
 * `bun run campaign --dry-run` (issue 28 points 3 and 4): the same seed prints the same schedule, another seed
 * another. The campaigns themselves are fixed-seed.test.ts, random-seed.test.ts and fleet-campaign.test.ts here.
 */
import { describe, expect, it } from "bun:test";
import { campaign } from "../../support/campaign.ts";

// Each test runs `bun scripts/campaign.ts --dry-run` up to three times in turn, blocking this file's process: a
// second or so each, over 15 s for three on a loaded machine (a real-server pass beside other work ran out).

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
  }, 60_000);

  it("draws the faults on servers (pg-restart, redis-node-kill) only for --fleet, and the same fleet schedule for the same seed", () => {
    const args = ["--seed", "26", "--flows", "40", "--faults", "10", "--dry-run"];
    const shared = campaign(args);
    const fleet = campaign([...args, "--fleet", "--redis-cluster"]);
    expect(shared.stdout).not.toMatch(/ (pg-restart|redis-node-kill) /);
    expect(fleet.stdout).toMatch(/ pg-restart /);
    expect(fleet.stdout).toMatch(/ redis-node-kill target=[0-2] /);
    expect(fleet.stdout.split("\n")[0]).toEndWith(" fleet redis-nodes=3");
    expect(campaign([...args, "--fleet", "--redis-cluster"]).stdout).toBe(fleet.stdout);
  }, 60_000);

  it("refuses a count that is not a whole number, saying which", () => {
    const run = campaign(["--flows", "many", "--dry-run"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--flows must be a whole number");
  }, 60_000);
});
