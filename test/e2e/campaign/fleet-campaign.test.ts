/**
 * A small campaign on a fleet (issue 28 points 3 and 4; `--fleet --redis-cluster`: HAProxy, PgBouncer, a
 * PostgreSQL and a Redis Cluster of its own) whose PostgreSQL is restarted and a Redis master killed under it
 * ends with its one line and nothing lost, twice, unbalanced or mismatched. Minutes of CPU: on the
 * real-server pass only (skipped, saying why, elsewhere).
 */
import { describe, expect, it } from "bun:test";
import { hasBinary } from "../../../deploy/fleet/processes.ts";
import { hasPostgresServer } from "../../../deploy/fleet/stores.ts";
import { campaign, onServers } from "../../support/campaign.ts";

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
