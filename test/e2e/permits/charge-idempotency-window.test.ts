/**
 * A merchant's permit charge is charged once at provider B whatever happens between the charge and storing
 * its idempotent answer (issue 28: nine permits charged two or three times after a PostgreSQL restart).
 *
 * The window: the charge row is committed and provider B charged, but the `Idempotency-Key`'s answer is not
 * stored — its lock ran out while the first request was still at work (a node whose clock ran ahead, renewals
 * that could not reach the database), the API process was SIGKILLed, or the database connection died under
 * the answer — and a retry with the same key runs the procedure again. Before migration 0032 that run made a
 * second charge row, whose own id provider B took as a new idempotency key: a second charge. Now the key is
 * the charge row's own (unique per permit): the retry finds the charge and carries it through.
 *
 * Every test asserts with the provider B simulator's own books (`GET /_sim/invoices`: one completed invoice for
 * the permit) and with what the merchant sees (one charge listed, one `permit.charge.succeeded`). The lock
 * takeover runs on both passes; the process kill and `pg_terminate_backend` need the real servers.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import postgres from "postgres";
import { openDatabase } from "../../../src/db/connect.ts";
import { throughPooler } from "../../../src/db/open-postgres.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import type { TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import type { Json } from "../../support/json.ts";
import { activePermit, startPermitRig, type PermitRig } from "../../support/permit-rig.ts";
import { freePort } from "../../support/ports.ts";
import { startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { waitForStart, waitReady } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";

const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL)";

/** Runs after provider B answered a charge call (it charged), before the answer goes back to the gateway. */
type AfterCharge = (idempotencyKey: string) => Promise<void>;

/** A proxy in front of the simulator that can hold or act on the answer of a `POST …/permit/charge`. */
interface ChargeProxy {
  url: string;
  afterCharge(hook: AfterCharge | undefined): void;
  stop(): Promise<void>;
}

function startChargeProxy(sim: SimulatorServer): ChargeProxy {
  let hook: AfterCharge | undefined;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      const headers = new Headers(request.headers);
      headers.delete("host");
      const upstream = await fetch(`${sim.url}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
      if (!url.pathname.endsWith("/permit/charge") || !hook) return upstream;
      const answer = await upstream.text();
      const sent = JSON.parse(new TextDecoder().decode(body)) as Json;
      await hook(sent.idempotency_key as string);
      return new Response(answer, { status: upstream.status, headers: { "content-type": "application/json" } });
    },
  });
  return {
    url: server.url.toString().replace(/\/$/, ""),
    afterCharge: (next) => void (hook = next),
    stop: () => server.stop(true),
  };
}

let sim: SimulatorServer;
let proxy: ChargeProxy;

async function json(response: Response): Promise<Json> {
  const text = await response.text();
  return text ? (JSON.parse(text) as Json) : {};
}

/** Provider B's own books: the completed invoices it made against the permit (one invoice = one charge). */
async function completedInvoicesOf(permitToken: string): Promise<string[]> {
  const books = (await (await fetch(`${sim.url}/_sim/invoices`)).json()) as { invoices: Json[] };
  return books.invoices.filter((i) => i.permit_token === permitToken && i.status === "completed").map((i) => i.token as string);
}

/** `POST …/charges` with an Idempotency-Key. */
async function charge(gw: Pick<RigGateway, "call">, tenantId: string, permitId: string, key: string, body: Json = { amount: 5000, description: "Mai" }) {
  const response = await gw.call("POST", `/providerB/permits/${permitId}/charges`, tenantId, body, { "idempotency-key": key });
  return { status: response.status, body: await json(response), replayed: response.headers.get("idempotent-replayed") === "true" };
}

/** What the merchant sees: the permit's charges, and the `permit.charge.*` events of its charges. */
async function merchantView(gw: RigGateway, tenantId: string, permitId: string): Promise<{ charges: Json[]; events: Json[] }> {
  const charges = (await json(await gw.call("GET", `/providerB/permits/${permitId}/charges`, tenantId))).data as Json[];
  const events = ((await json(await gw.call("GET", "/events?limit=100", tenantId))).data as Json[]).filter(
    (e) => String(e.type).startsWith("permit.charge.") && e.data.permitId === permitId,
  );
  return { charges, events };
}

beforeAll(async () => {
  sim = await startSimulator();
  proxy = startChargeProxy(sim);
}, 30_000);

afterAll(async () => {
  await proxy?.stop();
  await sim?.stop();
});

describe("the key's lock taken over while the first request is still at work", () => {
  let rig: PermitRig<SimulatorServer>;
  let offsetMs = 0;

  beforeAll(async () => {
    // The gateway's clock (`deps.now`, which the idempotency lock is measured on) can jump ahead, as a
    // campaign `clock-jump` does; the simulator is reached through the proxy.
    rig = await startPermitRig({ sim: { ...sim, url: proxy.url, stop: async () => undefined }, now: () => new Date(Date.now() + offsetMs) });
  }, 60_000);
  afterAll(() => rig?.stop());

  it("provider B charged, the answer held; the lock runs out and the retry with the key carries the same charge through: one charge", async () => {
    const { gw } = rig;
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId, { maxAmount: 100_000 });
    const key = `mai-${crypto.randomUUID()}`;

    // The first request: provider B charges, and its answer is held on the way back (the request still at work).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstKey: string | undefined;
    let reached!: () => void;
    const charged = new Promise<void>((resolve) => (reached = resolve));
    proxy.afterCharge(async (chargeKey) => {
      if (firstKey !== undefined) return;
      firstKey = chargeKey;
      reached();
      await held;
    });
    try {
      const first = charge(gw, tenantId, permitId, key);
      await charged;
      expect(await completedInvoicesOf(token)).toHaveLength(1);

      // Its lock runs out (the clock past its term, before any renewal): the retry takes the key over.
      offsetMs = gw.config.idempotencyLockMs + 1_000;
      const retry = await charge(gw, tenantId, permitId, key);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body).toMatchObject({ status: "succeeded", chargeId: firstKey, amount: 5000 });

      release();
      const answered = await first;
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      expect(answered.body.chargeId).toBe(firstKey);

      // The same request twice at once, and again after: the same charge.
      const again = await Promise.all([charge(gw, tenantId, permitId, key), charge(gw, tenantId, permitId, key)]);
      for (const a of again) {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        expect(a.body.chargeId).toBe(firstKey);
      }
    } finally {
      release();
      proxy.afterCharge(undefined);
      offsetMs = 0;
    }

    // Provider B's books: one charge for the permit. The merchant's: one charge, one event.
    expect(await completedInvoicesOf(token)).toHaveLength(1);
    const seen = await merchantView(gw, tenantId, permitId);
    expect(seen.charges.map((c) => [c.chargeId, c.status])).toEqual([[firstKey, "succeeded"]]);
    expect(seen.events.map((e) => [e.type, e.data.chargeId])).toEqual([["permit.charge.succeeded", firstKey]]);
    // A second charge with another key is another charge (the key names one, it does not stop the next).
    const next = await charge(gw, tenantId, permitId, `juin-${crypto.randomUUID()}`, { amount: 5000, description: "Juin" });
    expect(next.body.chargeId).not.toBe(firstKey);
    expect(await completedInvoicesOf(token)).toHaveLength(2);
  }, 60_000);

  it("the key's charge keeps its key after the idempotency layer forgot it: the same body answers it, another is 422", async () => {
    const { gw } = rig;
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId, { maxAmount: 100_000 });
    const key = `juillet-${crypto.randomUUID()}`;
    const first = await charge(gw, tenantId, permitId, key, { amount: 3000, description: "Juillet" });
    expect(first.body.status).toBe("succeeded");
    // The stored answer gone (purged, or never stored: the process died before it could store it).
    await gw.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
    const retry = await charge(gw, tenantId, permitId, key, { amount: 3000, description: "Juillet" });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe(false);
    expect(retry.body).toMatchObject({ chargeId: first.body.chargeId, status: "succeeded" });
    await gw.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
    const other = await charge(gw, tenantId, permitId, key, { amount: 3100, description: "Juillet" });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await completedInvoicesOf(token)).toHaveLength(1);
    expect((await merchantView(gw, tenantId, permitId)).charges).toHaveLength(1);
  }, 60_000);
});

describe("faults on the real servers around the charge", () => {
  let named: { url: string; dispose(): Promise<void> };
  let db: TestDatabase;
  let parent: RigGateway;
  let prefix: string;
  let admin: ReturnType<typeof postgres> | undefined;

  beforeAll(async () => {
    if (!onServers) return;
    named = await createNamedServerDatabase(DATABASE_URL!);
    const handle = await openDatabase({ driver: "postgres", url: named.url, max: 5 });
    db = { ...handle, audited: true, dispose: async () => (await handle.close(), await named.dispose()) } as TestDatabase;
    prefix = testQueuePrefix();
    parent = await startRigGateway({ sim: { ...sim, url: proxy.url }, database: db, prefix });
    admin = postgres(throughPooler(DATABASE_URL!).url, { max: 1, onnotice: () => undefined });
  }, 60_000);

  afterAll(async () => {
    if (!onServers) return;
    await parent?.close();
    await admin?.end();
    await deleteKeysUnderPrefix(REDIS_URL!, prefix);
    await db?.dispose();
  });

  it.skipIf(!onServers)(
    `the API process SIGKILLed after provider B charged, before its answer was stored: the retry on another node charges nothing more${SKIP_NOTE}`,
    async () => {
      const { tenantId } = await parent.tenantWithAccount(sim);
      const { permitId, token } = await activePermit(parent, sim, tenantId, { maxAmount: 100_000 });
      const port = await freePort();
      // Another API node on the same database and Redis; its lock term is short so the test need not wait a minute.
      const node = Bun.spawn(["bun", "src/main.ts", "serve", "--no-workers"], {
        env: {
          ...(process.env as Record<string, string>),
          ...TEST_ENV,
          PORT: String(port),
          METRICS_PORT: String(await freePort()),
          LOG_LEVEL: "info",
          DATABASE_URL: named.url,
          REDIS_URL: REDIS_URL!,
          QUEUE_PREFIX: prefix,
          PUBLIC_BASE_URL: parent.url,
          PROVIDER_B_SANDBOX_URL: `${proxy.url}/sandbox-api/v1`,
          PROVIDER_B_LIVE_URL: `${proxy.url}/api/v1`,
          PROVIDER_TIMEOUT_MS: "1000",
          IDEMPOTENCY_LOCK_MS: "8000",
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "inherit",
      });
      try {
        await waitForStart(node, 20_000);
        await waitReady(port);
        const key = `aout-${crypto.randomUUID()}`;
        let firstKey: string | undefined;
        proxy.afterCharge(async (chargeKey) => {
          if (firstKey !== undefined) return;
          firstKey = chargeKey;
          node.kill("SIGKILL");
          await node.exited;
        });
        const onNode = { call: (m: string, p: string, t: string, b?: unknown, h?: Record<string, string>) => parent.call(m, p, t, b, h) };
        // The merchant's call to the node that dies: no answer.
        const token0 = await parent.tenantToken(tenantId);
        const lost = await fetch(`http://127.0.0.1:${port}/providerB/permits/${permitId}/charges`, {
          method: "POST",
          headers: { authorization: `Bearer ${token0}`, "x-tenant-id": tenantId, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ amount: 5000, description: "Mai" }),
        }).then(
          async (r) => `${r.status} ${await r.text()}`,
          (error: unknown) => `no answer (${String(error)})`,
        );
        // Killed by the proxy's hook once provider B had charged (its exit may be seen after the reset connection).
        expect(firstKey, lost).toBeDefined();
        await node.exited;
        expect(node.signalCode, lost).toBe("SIGKILL");
        expect(lost).toStartWith("no answer");
        proxy.afterCharge(undefined);
        expect(await completedInvoicesOf(token)).toHaveLength(1);

        // The merchant's client tries the other node with the same key: 409 while the dead node's lock lasts, then the charge.
        const answer = await waitUntil(
          async () => {
            const tried = await charge(onNode, tenantId, permitId, key);
            if (tried.status === 409) return undefined;
            return tried;
          },
          { what: "the retry past the dead node's lock", timeoutMs: 30_000, intervalMs: 250 },
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body).toMatchObject({ chargeId: firstKey, status: "succeeded" });
        const twice = await Promise.all([charge(onNode, tenantId, permitId, key), charge(onNode, tenantId, permitId, key)]);
        for (const t of twice) expect(t.body.chargeId).toBe(firstKey);

        expect(await completedInvoicesOf(token)).toHaveLength(1);
        const seen = await merchantView(parent, tenantId, permitId);
        expect(seen.charges.map((c) => [c.chargeId, c.status])).toEqual([[firstKey, "succeeded"]]);
        expect(seen.events.map((e) => [e.type, e.data.chargeId])).toEqual([["permit.charge.succeeded", firstKey]]);
      } finally {
        proxy.afterCharge(undefined);
        node.kill("SIGKILL");
        await node.exited;
      }
    },
    90_000,
  );

  it.skipIf(!onServers)(
    `every backend of the gateway's database terminated after provider B charged, before the answer's commit: one charge${SKIP_NOTE}`,
    async () => {
      const { tenantId } = await parent.tenantWithAccount(sim);
      const { permitId, token } = await activePermit(parent, sim, tenantId, { maxAmount: 100_000 });
      const database = new URL(named.url).pathname.slice(1);
      const key = `sept-${crypto.randomUUID()}`;
      let terminated = 0;
      proxy.afterCharge(async () => {
        if (terminated++ > 0) return;
        await admin!`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`;
      });
      try {
        // The same request twice at once as the connections die under it, then again.
        const [a, b] = await Promise.all([charge(parent, tenantId, permitId, key), charge(parent, tenantId, permitId, key)]);
        const answers = [a, b, await charge(parent, tenantId, permitId, key)];
        for (const x of answers) expect([200, 409, 503], JSON.stringify(x.body)).toContain(x.status);
        expect(terminated).toBeGreaterThan(0);
        proxy.afterCharge(undefined);
        // The merchant tries again until answered (a replay answers the charge as it was first answered).
        const answered = await waitUntil(
          async () => {
            const tried = await charge(parent, tenantId, permitId, key);
            return tried.status === 200 ? tried : undefined;
          },
          { what: "the charge answered", timeoutMs: 20_000, intervalMs: 250 },
        );
        for (const x of answers.filter((y) => y.status === 200)) expect(x.body.chargeId).toBe(answered.body.chargeId);
        // The charge settles: by its answer, its IPN, or its sync chain (which asks provider B under the charge's key).
        let last: Json[] = [];
        const settled = await waitUntil(
          async () => {
            last = (await merchantView(parent, tenantId, permitId)).charges;
            return last.length === 1 && last[0]!.status !== "pending" ? last[0]! : undefined;
          },
          { what: "the charge settled", timeoutMs: 40_000, intervalMs: 250, lastSeen: () => last },
        );
        expect(settled).toMatchObject({ chargeId: answered.body.chargeId, status: "succeeded" });
        expect(await completedInvoicesOf(token)).toHaveLength(1);
        const seen = await waitUntil(
          async () => {
            const view = await merchantView(parent, tenantId, permitId);
            return view.events.length > 0 ? view : undefined;
          },
          { what: "the charge's event", timeoutMs: 10_000 },
        );
        expect(seen.charges.map((c) => c.chargeId)).toEqual([settled.chargeId]);
        expect(seen.events.map((e) => [e.type, e.data.chargeId])).toEqual([["permit.charge.succeeded", settled.chargeId]]);
      } finally {
        proxy.afterCharge(undefined);
      }
    },
    90_000,
  );
});
