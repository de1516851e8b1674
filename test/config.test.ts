import { describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig, parseDurationList, parseEncryptionKeys } from "../src/config.ts";
import { TEST_ENV } from "./support/gateway.ts";

const KEY = Buffer.alloc(32, 1).toString("base64");
const PRODUCTION = {
  NODE_ENV: "production",
  JWT_SECRET: "p".repeat(40),
  ENCRYPTION_KEYS: `2:${KEY},1:${Buffer.alloc(32, 2).toString("base64")}`,
  API_KEY_PEPPER: "pepper-pepper-pepper",
  DATABASE_URL: "postgres://app@db.internal:5432/passerelle",
  REDIS_URL: "redis://cache.internal:6379",
};

function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-config-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("loadConfig", () => {
  it("with nothing set, picks the development defaults and keeps generated secrets under DATA_DIR", () => {
    withTempDir((dir) => {
      const config = loadConfig({ DATA_DIR: dir });
      expect(config.nodeEnv).toBe("development");
      expect(config.port).toBe(3000);
      expect(config.host).toBe("0.0.0.0");
      expect(config.databaseUrl).toBeUndefined();
      expect(config.redisUrl).toBeUndefined();
      expect(config.simulators).toBe(true);
      expect(config.allowPrivateTargets).toBe(true);
      expect(config.publicBaseUrl).toBe("http://localhost:3000");
      expect(config.providerA.sandboxUrl).toBe("http://localhost:3000/sandbox/providerA");
      expect(config.providerB.sandboxUrl).toBe("http://localhost:3000/sandbox/providerB/sandbox-api/v1");
      expect(config.providerB.liveUrl).toBe("http://localhost:3000/sandbox/providerB/api/v1");
      expect(config.webhookRetrySchedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
      expect(config.renewalRetrySchedule).toEqual([86_400_000, 3 * 86_400_000, 5 * 86_400_000]);
      expect(config.rateLimit).toEqual({ rps: 100, burst: 200 });
      expect(config.metrics).toEqual({ port: 9464, host: "127.0.0.1" });
      expect(config.maxAmount).toBe(10_000_000);
      expect(config.providerTimeoutMs).toBe(15_000);
      expect(config.queuePrefix).toBe("passerelle");
      expect(Buffer.byteLength(config.jwt.secret)).toBeGreaterThanOrEqual(32);
      expect(config.encryptionKeys[0]!.key.length).toBe(32);
      expect(config.developmentDefaults.join(", ")).toContain("PGlite under");
      expect(config.developmentDefaults.join(", ")).toContain("in-process jobs");

      // Generated once: a second start reads the same secrets back.
      const again = loadConfig({ DATA_DIR: dir });
      expect(again.jwt.secret).toBe(config.jwt.secret);
      expect(again.apiKeyPepper).toBe(config.apiKeyPepper);
      const stored = JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8"));
      expect(stored.jwtSecret).toBe(config.jwt.secret);
    });
  });

  it("with NODE_ENV=production applies none of the development defaults", () => {
    const config = loadConfig(PRODUCTION);
    expect(config.simulators).toBe(false);
    expect(config.allowPrivateTargets).toBe(false);
    expect(config.developmentDefaults).toEqual([]);
    expect(config.providerA.sandboxUrl).toBe("https://sandbox-api.fedapay.com");
    expect(config.providerB.liveUrl).toBe("https://app.paydunya.com/api/v1");
    expect(config.encryptionKeys.map((k) => k.version)).toEqual([2, 1]);
  });

  it("takes a Redis Cluster instead of REDIS_URL, with its queue prefix hash-tagged", () => {
    const { REDIS_URL: _, ...withoutRedis } = PRODUCTION;
    const config = loadConfig({ ...withoutRedis, REDIS_CLUSTER_NODES: "10.0.0.1:7000, 10.0.0.2:7000,10.0.0.3:7000" });
    expect(config.redisUrl).toBe("redis-cluster://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000");
    expect(config.queuePrefix).toBe("{passerelle}");
    expect(loadConfig({ ...withoutRedis, REDIS_CLUSTER_NODES: "cache:7000", QUEUE_PREFIX: "{shop}" }).queuePrefix).toBe("{shop}");
    expect(() => loadConfig({ ...withoutRedis, REDIS_CLUSTER_NODES: "cache" })).toThrow("REDIS_CLUSTER_NODES");
    expect(() => loadConfig(withoutRedis)).toThrow("REDIS_URL is required when NODE_ENV=production");
  });

  it("in production, turns simulators and private targets on only when set explicitly", () => {
    const config = loadConfig({ ...PRODUCTION, SIMULATORS: "on", ALLOW_PRIVATE_TARGETS: "true", PUBLIC_BASE_URL: "http://127.0.0.1:4000/" });
    expect(config.simulators).toBe(true);
    expect(config.allowPrivateTargets).toBe(true);
    expect(config.providerA.sandboxUrl).toBe("http://127.0.0.1:4000/sandbox/providerA");
  });

  for (const name of ["JWT_SECRET", "ENCRYPTION_KEYS", "API_KEY_PEPPER", "DATABASE_URL", "REDIS_URL"]) {
    it(`in production, stops on a missing ${name} with one line naming it`, () => {
      const env: Record<string, string> = { ...PRODUCTION };
      delete env[name];
      expect(() => loadConfig(env)).toThrow(new ConfigError(`Invalid configuration: ${name} is required when NODE_ENV=production`));
    });
  }

  const bad: [string, string, string][] = [
    ["PORT", "eighty", "PORT"],
    ["JWT_SECRET", "short", "JWT_SECRET must be at least 32 bytes"],
    ["ENCRYPTION_KEYS", "1:c2hvcnQ=", "ENCRYPTION_KEYS must be <N>:<base64 of 32 bytes>"],
    ["ENCRYPTION_KEYS", `1:${KEY},1:${KEY}`, "ENCRYPTION_KEYS must be"],
    ["WEBHOOK_RETRY_SCHEDULE", "5s,soon", "WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations"],
    ["TRUSTED_PROXIES", "10.0.0.0/8,balancer", "TRUSTED_PROXIES must be a comma-separated list of addresses or CIDR ranges"],
    ["SETTLED_REREAD_SCHEDULE", "10m,2m", "SETTLED_REREAD_SCHEDULE must be increasing"],
    ["DATABASE_URL", "mysql://x", "DATABASE_URL"],
    ["SIMULATORS", "maybe", "SIMULATORS"],
    ["LOG_LEVEL", "loud", "LOG_LEVEL"],
    ["NODE_ENV", "staging", "NODE_ENV"],
    ["RETENTION_EVENTS", "7d", "RETENTION_EVENTS must be at least 30d (the event log shows 30 days)"],
    ["RETENTION_IDEMPOTENCY_KEYS", "12h", "RETENTION_IDEMPOTENCY_KEYS must be at least 1d (a key is replayed for 24 hours)"],
    ["RETENTION_IPNS", "30d,60d", "RETENTION_IPNS must be one duration like 30d or 12h"],
    ["PRUNE_BATCH_SIZE", "0", "PRUNE_BATCH_SIZE must be an integer from 1 to 50000"],
  ];
  for (const [name, value, expected] of bad) {
    it(`refuses ${name}=${value} naming the variable`, () => {
      let message = "";
      try {
        loadConfig({ ...TEST_ENV, [name]: value });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message).toStartWith("Invalid configuration: ");
      expect(message).toContain(expected);
      expect(message).not.toContain("\n");
    });
  }

  it("reads the retentions as durations, with their defaults", () => {
    expect(loadConfig(TEST_ENV).retention).toEqual({
      eventsMs: 30 * 86_400_000,
      deliveriesMs: 30 * 86_400_000,
      ipnsMs: 90 * 86_400_000,
      routeOutcomesMs: 7 * 86_400_000,
      idempotencyKeysMs: 86_400_000,
      auditLogMs: 1825 * 86_400_000,
      everyMs: 3_600_000,
      batchSize: 1_000,
    });
    const set = loadConfig({ ...TEST_ENV, RETENTION_EVENTS: "45d", RETENTION_ROUTE_OUTCOMES: "36h", PRUNE_EVERY_MS: "0" }).retention;
    expect(set).toMatchObject({ eventsMs: 45 * 86_400_000, routeOutcomesMs: 36 * 3_600_000, everyMs: 0 });
  });

  it("runs the sweeper every minute unless SWEEP_EVERY_MS says otherwise, never more often than every second", () => {
    expect(loadConfig(TEST_ENV).sweepEveryMs).toBe(60_000);
    expect(loadConfig({ ...TEST_ENV, SWEEP_EVERY_MS: "5000" }).sweepEveryMs).toBe(5_000);
    expect(() => loadConfig({ ...TEST_ENV, SWEEP_EVERY_MS: "500" })).toThrow(/SWEEP_EVERY_MS/);
    expect(loadConfig(TEST_ENV).renewalSweepEveryMs).toBe(60_000);
    expect(loadConfig({ ...TEST_ENV, RENEWAL_SWEEP_EVERY_MS: "5000" }).renewalSweepEveryMs).toBe(5_000);
    expect(() => loadConfig({ ...TEST_ENV, RENEWAL_SWEEP_EVERY_MS: "500" })).toThrow(/RENEWAL_SWEEP_EVERY_MS/);
  });

  it("parses durations and encryption keys", () => {
    expect(parseDurationList("500ms,5s,5m,2h,1d")).toEqual([500, 5_000, 300_000, 7_200_000, 86_400_000]);
    expect(parseDurationList("5 s")).toBeUndefined();
    expect(parseEncryptionKeys(`3:${KEY}`)?.[0]?.version).toBe(3);
    expect(parseEncryptionKeys("3:abc")).toBeUndefined();
  });
});
