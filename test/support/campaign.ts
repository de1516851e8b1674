/**
 * What the campaign's tests (test/e2e/campaign/*.test.ts) share: `bun scripts/campaign.ts` run to its end, and
 * whether this is the real-server pass. The campaigns run on the real-server pass only (each makes its own
 * database and key prefix on the servers); each is a file of its own, so that CI's parallel workers run them
 * side by side rather than one after the other.
 */
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

export const { DATABASE_URL, REDIS_URL } = process.env;

/** True on the real-server pass (DATABASE_URL and REDIS_URL set). */
export const onServers = Boolean(DATABASE_URL && REDIS_URL);

/** What a skipped campaign's test name says elsewhere. */
export const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL — the campaign's processes share one database)";

/** Runs `bun scripts/campaign.ts <args>` to its end with only `env` (and PATH, HOME) set. */
export function campaign(args: string[], env: Record<string, string> = {}) {
  const run = Bun.spawnSync(["bun", "scripts/campaign.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
  });
  return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}
