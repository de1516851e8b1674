/**
 * The gateway while its PostgreSQL restarts behind PgBouncer, as on a fleet (issue 28; docs/reliability.md):
 * a PostgreSQL of the test's own (`deploy/fleet/stores.ts`) is stopped (`pg_ctl stop -m fast`) and started
 * again under merchants' calls, twice. Every call is answered 2xx or 503 `unavailable` with `Retry-After`, in
 * the contract's shape — never 500, whatever postgres.js or PgBouncer threw (a lost connection, PgBouncer's
 * `08P01 server login has been failing`, a statement written to a closed socket) — nothing is thrown uncaught,
 * and once PostgreSQL is up again the calls are served within seconds, not after PgBouncer's default 15-s
 * `server_login_retry` (`deploy/fleet/pgbouncer.ini` sets 1 s).
 *
 * Real-server pass only (it starts PostgreSQL and PgBouncer, seconds of CPU the embedded pass has no use for);
 * skipped, saying so, without Debian's `pgbouncer` and PostgreSQL's server binaries.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { ulid } from "ulid";
import { hasBinary, type PgBouncer, startPgBouncer } from "../../../deploy/fleet/processes.ts";
import { hasPostgresServer, type Postgres, startPostgres } from "../../../deploy/fleet/stores.ts";
import { loadConfig } from "../../../src/config.ts";
import { openDatabase, type DatabaseHandle } from "../../../src/db/connect.ts";
import { migrateToLatest } from "../../../src/db/migrate.ts";
import { createJobQueue } from "../../../src/jobs/mod.ts";
import { createLogger, logOutage } from "../../../src/logger.ts";
import { createGateway, mintToken, type Gateway } from "../../../src/mod.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { validateGatewayResponse } from "../../support/openapi-validation.ts";
import { onServerPass } from "../../support/passes.ts";
import { freePort } from "../../support/ports.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { waitUntil } from "../../support/wait.ts";

const missing = [...(hasBinary("pgbouncer") ? [] : ["pgbouncer"]), ...(hasPostgresServer() ? [] : ["initdb"])];
const runs = onServerPass && missing.length === 0;
const why = !onServerPass ? "the real-server pass runs it" : `not installed: ${missing.join(", ")}`;
const TENANT_ID = `ten_${ulid()}`;
/** PgBouncer's default `server_login_retry`: what the first calls after a restart waited before the fleet set 1 s. */
const DEFAULT_LOGIN_RETRY_MS = 15_000;

interface Answer {
  call: string;
  status: number;
  code: unknown;
  retryAfter: string | null;
  shape: boolean;
}

describe.skipIf(!runs)(`the gateway while PostgreSQL restarts behind PgBouncer${runs ? "" : ` (SKIPPED: ${why})`}`, () => {
  const prefix = testQueuePrefix();
  const config = loadConfig({ ...TEST_ENV, QUEUE_PREFIX: prefix, RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "100000" });
  const logs: Record<string, unknown>[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  let dir: string;
  let server: Postgres;
  let bouncer: PgBouncer;
  let database: DatabaseHandle;
  let gateway: Gateway;
  let admin: string;
  let merchant: string;

  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    process.on("unhandledRejection", onUncaught);
    dir = mkdtempSync(join(tmpdir(), "passerelle-pg-restart-"));
    server = await startPostgres({ dir, port: await freePort() });
    const superuser = postgres(server.adminUrl, { max: 1, onnotice: () => {} });
    try {
      await superuser.unsafe(`create database passerelle`);
      // Through a pooler, the session settings are the database's own (docs/fleet.md).
      await superuser.unsafe(`alter database passerelle set statement_timeout = 30000`);
      await superuser.unsafe(`alter database passerelle set idle_in_transaction_session_timeout = 60000`);
    } finally {
      await superuser.end();
    }
    bouncer = await startPgBouncer({ dir, port: await freePort(), upstream: { host: "127.0.0.1", port: server.port, user: "postgres" }, poolSize: 8 });
    const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
    database = await openDatabase({
      driver: "postgres",
      url: bouncer.urlFor("passerelle"),
      max: 6,
      connectTimeoutMs: 2000,
      onAvailabilityChange: logOutage(logger, "database"),
    });
    await migrateToLatest(database.db);
    await database.db
      .insertInto("tenants")
      .values({ id: TENANT_ID, name: "Restart", store_name: "Restart store", disabled: false, live_enabled: false })
      .execute();
    const queue = createJobQueue({ redisUrl: process.env.REDIS_URL, prefix, logger });
    gateway = await createGateway(config, { database, queue, logger });
    admin = await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" });
    merchant = await mintToken(config.jwt, { sub: `tenant:${TENANT_ID}`, tenantId: TENANT_ID, environment: "sandbox" });
  }, 120_000);

  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
    await gateway?.stop();
    await database?.close();
    await bouncer?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (process.env.REDIS_URL) await deleteKeysUnderPrefix(process.env.REDIS_URL, prefix);
  }, 60_000);

  /** One call, its answer checked against the OpenAPI document (a 503 too). */
  async function call(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
    const url = `http://localhost${path}`;
    const response = await gateway.fetch(
      new Request(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json", "idempotency-key": ulid() }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
    await validateGatewayResponse(method, url, response.clone());
    const text = await response.text();
    const parsed = text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {};
    return {
      call: `${method} ${path}`,
      status: response.status,
      code: parsed.code,
      retryAfter: response.headers.get("retry-after"),
      shape: parsed.statusCode === response.status && typeof parsed.requestId === "string" && typeof parsed.message === "string",
    };
  }

  it("answers every call 2xx or 503 unavailable with Retry-After while PostgreSQL restarts, never 500, and serves again within seconds", async () => {
    const answers: Answer[] = [];
    let stop = false;
    const client = async (i: number) => {
      for (let n = 0; !stop; n++) {
        // Writes (a transaction each) and reads, as merchants and the operator make them.
        const answer =
          n % 3 === 0
            ? await call("POST", "/tenants", admin, { name: `Load ${i}-${n}`, storeName: "Load" })
            : n % 3 === 1
              ? await call("GET", "/payments?limit=5", merchant)
              : await call("GET", "/webhooks", merchant);
        answers.push(answer);
        if (answer.status === 503) await Bun.sleep(50);
      }
    };
    const clients = Promise.all(Array.from({ length: 6 }, (_, i) => client(i)));
    const recoveries: number[] = [];
    for (const downMs of [1500, 3000]) {
      await waitUntil(() => answers.filter((a) => a.status === 200).length > 20 * (recoveries.length + 1), {
        what: "calls answered with PostgreSQL up",
        timeoutMs: 30_000,
      });
      await server.stopFor(downMs);
      // PostgreSQL is up again: how long until a call that needs it is served (PgBouncer's login retry, the gate's probe).
      const upAt = performance.now();
      await waitUntil(async () => (await call("GET", "/payments?limit=1", merchant)).status === 200, {
        what: "a call served after the restart",
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      recoveries.push(performance.now() - upAt);
    }
    stop = true;
    await clients;

    const withStatus = (status: number) => answers.filter((a) => a.status === status);
    // Every answer a merchant can act on: done, or 503 "try again" in the contract's shape with Retry-After.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(withStatus(503).filter((a) => a.code !== "unavailable" || a.retryAfter === null || !a.shape)).toEqual([]);
    // The restarts were felt (calls refused while PostgreSQL was down), and served again after each.
    expect(withStatus(503).length).toBeGreaterThan(0);
    expect(withStatus(200).length).toBeGreaterThan(40);
    // Generous (the machine is loaded), yet below PgBouncer's default login retry, which alone held the first calls 15 s.
    expect(recoveries.filter((ms) => ms >= DEFAULT_LOGIN_RETRY_MS * 0.6)).toEqual([]);
    expect(logs.filter((line) => line.msg === "unexpected error")).toEqual([]);
    expect(uncaught).toEqual([]);
  }, 180_000);
});
