/**
 * A Redis outage in the log (issue 13, point 2): one stack-free line when it starts, one when it ends —
 * not a line per connection and reconnect attempt. The gateway's Redis (its BullMQ queues and workers and the
 * rate limiter's client) is reached through a TCP proxy the test takes down. Redis only: skipped without
 * `REDIS_URL`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { loadConfig } from "../../../src/config.ts";
import { createLogger } from "../../../src/logger.ts";
import { createGateway, type Gateway } from "../../../src/mod.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.ts";

const REDIS_URL = process.env.REDIS_URL;

describe.skipIf(!REDIS_URL)("the gateway when Redis goes away", () => {
  const prefix = testQueuePrefix();
  const logs: Record<string, unknown>[] = [];
  let proxy: TcpProxy;
  let database: TestDatabase;
  let gateway: Gateway;

  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const proxied = new URL(REDIS_URL!);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    const config = loadConfig({ ...TEST_ENV, QUEUE_PREFIX: prefix, REDIS_URL: proxied.toString() });
    const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
    database = await createTestDatabase();
    gateway = await createGateway(config, { database, logger, workers: { sweepEveryMs: 500 } });
    await gateway.start({ http: false, workers: true });
    expect(await gateway.fetch(new Request("http://localhost/health/ready")).then((r) => r.status)).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await proxy?.forward();
    await gateway?.stop();
    await database?.dispose();
    await proxy?.stop();
    await deleteKeysUnderPrefix(REDIS_URL!, prefix);
  }, 30_000);

  it("logs one stack-free line when the outage starts and one when it ends, and /health/ready names the queue meanwhile", async () => {
    await proxy.refuse();
    await Bun.sleep(3000); // several reconnect attempts of every connection
    const ready = await gateway.fetch(new Request("http://localhost/health/ready"));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: "unavailable", checks: { database: "ok", queue: expect.not.stringMatching(/^ok$/) } });

    await proxy.forward();
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = (await gateway.fetch(new Request("http://localhost/health/ready"))).status === 200;
      if (!back) await Bun.sleep(100);
    }
    expect(back).toBe(true);
    await Bun.sleep(2500); // the reconnects still under way land

    const redisLines = logs.filter((line) => JSON.stringify(line).toLowerCase().includes("redis"));
    expect(redisLines.map((line) => line.msg)).toEqual(["redis unreachable", "redis reachable again"]);
    expect(redisLines[0]).toMatchObject({ dependency: "redis", level: 40 });
    expect(typeof redisLines[0]!.reason).toBe("string");
    expect(JSON.stringify(redisLines)).not.toContain("stack");
  }, 30_000);
});
