/** Ports for tests that start servers or child processes of their own. */
import { readFileSync } from "node:fs";

/**
 * Where {@link freePort} picks: below the kernel's ephemeral range, which is where every `port: 0` listener
 * and every outgoing connection of every test file running meanwhile (`bun run test` runs four at a time)
 * gets its port. A port handed out here is bound later (after a gateway starts, or by a child process), so
 * a port from that range could be taken in between; below it, only another freePort could, and it picks at
 * random among thousands.
 */
const RANGE = pickableRange();

function pickableRange(): { low: number; high: number } {
  try {
    const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (ephemeralLow !== undefined && ephemeralLow > 12_000) return { low: 10_000, high: ephemeralLow - 1 };
  } catch {
    // Not Linux, or no /proc: the usual default range starts at 32768.
  }
  return { low: 10_000, high: 32_767 };
}

/** Whether nothing listens on `port` on 127.0.0.1 right now. */
function isFree(port: number): boolean {
  try {
    const probe = Bun.serve({ hostname: "127.0.0.1", port, fetch: () => new Response() });
    probe.stop(true);
    return true;
  } catch {
    return false;
  }
}

/** A port that was free a moment ago and has nothing listening on it now (for a child process to bind, or a receiver that is down). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = RANGE.low + Math.floor(Math.random() * (RANGE.high - RANGE.low + 1));
    if (isFree(port)) return port;
  }
  throw new Error(`no free port found between ${RANGE.low} and ${RANGE.high} in 100 tries`);
}
