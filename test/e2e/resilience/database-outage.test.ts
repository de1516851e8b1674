/**
 * The gateway when PostgreSQL goes away (issue 13, points 1 and 2): every route answers 503 `unavailable`
 * within 5 s while the database is unreachable, `/health/ready` names it, one log line marks the outage's
 * start and one its end, service resumes by itself; and requests in flight when every backend is killed
 * settle as 503 (never 500, never hanging). The database is reached through a TCP proxy the test can take
 * down. PostgreSQL only: skipped without `DATABASE_URL`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { loadConfig } from "../../../src/config.ts";
import { openDatabase, type DatabaseHandle } from "../../../src/db/connect.ts";
import { migrateToLatest } from "../../../src/db/migrate.ts";
import { createJobQueue } from "../../../src/jobs/mod.ts";
import { createLogger, logOutage } from "../../../src/logger.ts";
import { createGateway, mintToken, type Gateway } from "../../../src/mod.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { restRequest, routesWithInputs } from "../../support/route-inputs.ts";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.ts";
import { validateGatewayResponse } from "../../support/openapi-validation.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const WITHIN_MS = 5000;
const TENANT_ID = `ten_${ulid()}`;

describe.skipIf(!DATABASE_URL)("the gateway when PostgreSQL goes away", () => {
  const prefix = testQueuePrefix();
  const config = loadConfig({ ...TEST_ENV, QUEUE_PREFIX: prefix, RATE_LIMIT_RPS: "100000" });
  const logs: Record<string, unknown>[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let database: DatabaseHandle;
  let gateway: Gateway;
  let headers: Record<string, string>;

  const request = (path: string, init?: RequestInit) => gateway.fetch(new Request(`http://localhost${path}`, init));

  async function timed(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
    const started = performance.now();
    const response = await request(path, init);
    const kept = response.clone();
    const text = await response.text();
    const ms = performance.now() - started;
    // Outside the timed span: the answer (a 503 during the outage too) is checked against the OpenAPI document.
    await validateGatewayResponse(init?.method ?? "GET", `http://localhost${path}`, kept);
    return { status: response.status, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : { text }, ms };
  }

  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    scratch = await createScratchDatabase(DATABASE_URL!);
    const direct = new URL(scratch.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(direct);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);

    const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
    database = await openDatabase({
      driver: "postgres",
      url: proxied.toString(),
      max: 4,
      connectTimeoutMs: 2000,
      onAvailabilityChange: logOutage(logger, "database"),
    });
    await migrateToLatest(database.db);
    await database.db
      .insertInto("tenants")
      .values({ id: TENANT_ID, name: "Outage", store_name: "Outage store", disabled: false, live_enabled: false })
      .execute();
    const queue = createJobQueue({ redisUrl: process.env.REDIS_URL, prefix, logger });
    gateway = await createGateway(config, { database, queue, logger });
    headers = { authorization: `Bearer ${await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" })}`, "x-tenant-id": TENANT_ID };
  }, 60_000);

  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await proxy?.forward();
    await gateway?.stop();
    await database?.close();
    await proxy?.stop();
    await scratch?.drop();
    if (process.env.REDIS_URL) await deleteKeysUnderPrefix(process.env.REDIS_URL, prefix);
  }, 30_000);

  it("settles every request in flight when all its backends are killed, as 2xx or 503, never 500", async () => {
    const tenantToken = await mintToken(config.jwt, { sub: `tenant:${TENANT_ID}`, tenantId: TENANT_ID, environment: "sandbox" });
    let stop = false;
    const outcomes: { status: number; ms: number }[] = [];
    const client = async (i: number) => {
      for (let n = 0; !stop; n++) {
        const outcome =
          n % 2 === 0
            ? await timed("/tenants", {
                method: "POST",
                headers: { ...headers, "content-type": "application/json" },
                body: JSON.stringify({ name: `Load ${i}-${n}`, storeName: "Load" }),
              })
            : await timed("/payments", { headers: { authorization: `Bearer ${tenantToken}` } });
        outcomes.push(outcome);
      }
    };
    const clients = Promise.all(Array.from({ length: 8 }, (_, i) => client(i)));
    await Bun.sleep(300);
    await scratch.admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${scratch.name} and pid <> pg_backend_pid()`;
    await Bun.sleep(300);
    await scratch.admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${scratch.name} and pid <> pg_backend_pid()`;
    await Bun.sleep(500);
    stop = true;
    await clients;
    const statuses = new Set(outcomes.map((o) => o.status));
    expect([...statuses].filter((status) => status !== 200 && status !== 201 && status !== 503)).toEqual([]);
    expect(statuses.has(503)).toBe(true);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(WITHIN_MS);
    // The next requests succeed.
    const next = await timed("/payments", { headers: { authorization: `Bearer ${tenantToken}` } });
    expect({ status: next.status, body: next.status === 200 ? {} : next.body, outage: logs.filter((line) => line.dependency) }).toEqual({
      status: 200,
      body: {},
      outage: [],
    });
    expect(logs.filter((line) => line.msg === "unexpected error")).toEqual([]);
    expect(uncaught).toEqual([]);
  }, 30_000);

  it("answers 503 on every route within 5 s while the database is unreachable, says so on /health/ready, and resumes by itself", async () => {
    expect((await timed("/health/ready")).status).toBe(200);
    const routes = routesWithInputs(TENANT_ID).map((route) => ({ route: `${route.method} ${route.path}`, ...restRequest(route, route.input, headers) }));
    // What each route answers with the database up: an input refused up front, an unknown id or a cached read
    // may answer the same without it; anything else must be 503.
    const answeredUp = new Map<string, number>();
    for (const { route, url, init } of routes) answeredUp.set(route, (await timed(url, init)).status);

    await proxy.refuse();

    const ready = await timed("/health/ready");
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: "unavailable", checks: { database: expect.not.stringMatching(/^ok$/), queue: "ok" } });

    const answers: { route: string; status: number; code: unknown; ms: number }[] = [];
    for (const { route, url, init } of routes) {
      const answer = await timed(url, init);
      answers.push({ route, status: answer.status, code: answer.body.code, ms: answer.ms });
    }
    const ipn = await timed("/providerB/webhook", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "data%5Bhash%5D=00&data%5Binvoice%5D%5Btoken%5D=test_abc",
    });
    answers.push({ route: "POST /providerB/webhook", status: ipn.status, code: ipn.body.code, ms: ipn.ms });
    expect(answers.length).toBeGreaterThan(40);
    expect(answers.filter((a) => !(a.status === 503 && a.code === "unavailable") && a.status !== answeredUp.get(a.route))).toEqual([]);
    // Every route that wrote or read the database with it up is among the 503s.
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThanOrEqual(20);
    expect(answers.filter((a) => a.ms >= WITHIN_MS)).toEqual([]);

    // Hanging connections (a host gone without a reset): still 503 within 5 s.
    await proxy.blackhole();
    for (let i = 0; i < 3; i++) {
      const answer = await timed("/payments?limit=10", { headers });
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(WITHIN_MS);
    }

    await proxy.forward();
    let back = false;
    for (let i = 0; i < 60 && !back; i++) {
      back = (await timed("/payments?limit=10", { headers })).status === 200;
      if (!back) await Bun.sleep(100);
    }
    expect(back).toBe(true);
    expect((await timed("/health/ready")).status).toBe(200);

    // One stack-free line when the outage started, one when it ended.
    const outage = logs.filter((line) => line.dependency === "database");
    expect(outage.map((line) => line.msg)).toEqual(["database unreachable", "database reachable again"]);
    expect(JSON.stringify(outage)).not.toContain("stack");
    expect(logs.filter((line) => line.msg === "unexpected error")).toEqual([]);
    expect(uncaught).toEqual([]);
  }, 60_000);
});
