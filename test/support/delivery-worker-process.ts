/**
 * A worker process for the "killed mid-delivery" test: the gateway's workers (as `passerelle worker`
 * runs them) against the PostgreSQL database and Redis prefix the test hands over in its environment.
 * Prints `ready` once the workers run; the test SIGKILLs it while a delivery is in flight.
 *
 *   DATABASE_URL=… REDIS_URL=… QUEUE_PREFIX=… WEBHOOK_TIMEOUT_MS=… SWEEP_EVERY_MS=… bun test/support/delivery-worker-process.ts
 */
import { loadConfig } from "../../src/config.ts";
import { createGateway } from "../../src/mod.ts";
import { TEST_ENV } from "./gateway.ts";

const env = process.env;
if (!env.DATABASE_URL || !env.REDIS_URL || !env.QUEUE_PREFIX) throw new Error("DATABASE_URL, REDIS_URL and QUEUE_PREFIX are required");

const config = loadConfig({
  ...TEST_ENV,
  LOG_LEVEL: "warn",
  DATABASE_URL: env.DATABASE_URL,
  REDIS_URL: env.REDIS_URL,
  QUEUE_PREFIX: env.QUEUE_PREFIX,
  WEBHOOK_TIMEOUT_MS: env.WEBHOOK_TIMEOUT_MS ?? "1000",
});
// The same sweep interval as the test's own workers: one sweeper schedule per prefix, upserted by both.
const gateway = await createGateway(config, { workers: { sweepEveryMs: Number(env.SWEEP_EVERY_MS ?? 60_000) } });
await gateway.start({ http: false, workers: true });
process.stdout.write("ready\n");
