#!/usr/bin/env bun
/**
 * `bun scripts/with-pgbouncer.ts <command…>`: runs the command with PostgreSQL behind PgBouncer in transaction
 * pooling mode — PgBouncer started on a free port in front of the server `DATABASE_URL` names (default
 * `postgres://postgres@127.0.0.1:5432/postgres`), and `DATABASE_URL` replaced by its address with
 * `?pgbouncer=true` — then stops PgBouncer and exits with the command's code. CI runs the payment, webhook
 * and money-out suites this way (docs/fleet.md); so can anyone: `bun scripts/with-pgbouncer.ts bun run test test/e2e/payments`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startPgBouncer } from "../deploy/fleet/processes.ts";

const command = Bun.argv.slice(2);
if (command.length === 0) {
  process.stderr.write("usage: bun scripts/with-pgbouncer.ts <command…>\n");
  process.exit(2);
}
const server = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const dir = mkdtempSync(join(tmpdir(), "passerelle-pgbouncer-"));
const pgbouncer = await startPgBouncer({
  dir,
  port: await freePort(),
  upstream: { host: server.hostname, port: Number(server.port || 5432), user: decodeURIComponent(server.username || "postgres") },
  // The tests open a pool of 5 per file, four files at a time, plus their admin connections.
  poolSize: 40,
});
const database = server.pathname.slice(1) || "postgres";
process.stdout.write(`PgBouncer (transaction mode) on ${pgbouncer.port} in front of ${server.host}; DATABASE_URL=${pgbouncer.urlFor(database)}\n`);
const child = Bun.spawn(command, { stdio: ["inherit", "inherit", "inherit"], env: { ...process.env, DATABASE_URL: pgbouncer.urlFor(database) } });
const stop = () => child.kill("SIGTERM");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
const code = await child.exited;
await pgbouncer.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(code);
