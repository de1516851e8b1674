/**
 * A small campaign on a fleet (issue 28 points 3 and 4; `--fleet --redis-cluster`: HAProxy, PgBouncer, a
 * PostgreSQL and a Redis Cluster of its own) whose PostgreSQL is restarted and a Redis master killed under it
 * ends with its one line and nothing lost, twice, unbalanced or mismatched. Minutes of CPU: on the
 * real-server pass only, and only with CAMPAIGN_FLEET=1 for now (skipped, saying why, elsewhere).
 */
import { describe, expect, it } from "bun:test";
import { hasBinary } from "../../../deploy/fleet/processes.ts";
import { hasPostgresServer } from "../../../deploy/fleet/stores.ts";
import { campaign, onServers } from "../../support/campaign.ts";

const fleetMissing = [...["haproxy", "pgbouncer", "redis-server", "redis-cli"].filter((name) => !hasBinary(name)), ...(hasPostgresServer() ? [] : ["initdb"])];
// Not in CI yet (CAMPAIGN_FLEET=1 runs it): a clock jump on an API node dates the deliveries it writes by its own
// clock, up to 184 s ahead in this schedule, so they are not due for the workers until then — longer than the
// wait before the checks (seen once as `lost 2`; docs/reliability.md, "Not in CI yet").
const fleetWanted = process.env.CAMPAIGN_FLEET === "1";
const fleetRuns = onServers && fleetMissing.length === 0 && fleetWanted;
const FLEET_NOTE = fleetRuns
  ? ""
  : ` (SKIPPED: ${!fleetWanted ? "CAMPAIGN_FLEET=1 runs it" : onServers ? `not installed: ${fleetMissing.join(", ")}` : "the real-server pass runs it"})`;

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
    // Its renewal schedule may be made on an API node whose clock is 184 s ahead (fault 9): its first period is
    // then due that much later, and the campaign waits for it (about 4 minutes in all, then).
    360_000,
  );
});
