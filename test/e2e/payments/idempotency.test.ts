import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { onTestClock } from "../../support/clock.ts";
import type { KyselyPlugin, PluginTransformQueryArgs } from "kysely";
import { createHttpApp, type HttpApp } from "../../../src/http/app.ts";
import { createMetrics } from "../../../src/http/metrics.ts";
import { buildOpenApiDocument } from "../../../src/http/openapi.ts";
import { createKeyring } from "../../../src/crypto/seal.ts";
import { mintToken, pruneOldRows } from "../../../src/mod.ts";
import type { Deps } from "../../../src/services/deps.ts";
import {
  canonicalJson,
  IDEMPOTENCY_TTL_MS,
  OPERATOR_TENANT_ID,
  requestHash,
  resealIdempotencyResponses,
  SEALED_RESPONSE_FIELD,
} from "../../../src/services/idempotency/mod.ts";
import { idempotencyProbe, routerWithIdempotencyFixtures } from "../../support/fixture-router.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { virtualTime, type VirtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";

let tg: TestGateway;
let http: HttpApp;
let tenantA: string;
let tenantB: string;
let tokenA: string;
let tokenALive: string;
let tokenB: string;
let admin: string;

type Surface = "rest" | "trpc";
const SURFACES: Surface[] = ["rest", "trpc"];

interface Answer {
  status: number;
  /** The output on success, the contract's error body otherwise — the same on both surfaces. */
  body: Record<string, unknown>;
  replayed: string | null;
  requestId: string | null;
}

interface ThingInput {
  group: string;
  name: string;
  outcome?: "created" | "not_found" | "refused" | "invalid" | "unavailable" | "crash" | "provider_timeout" | "provider_unreachable";
}

let counter = 0;
/** A name (the fixture counts calls by it) and a key no other test uses. */
const fresh = (label: string) => ({ name: `${label}-${++counter}-${crypto.randomUUID().slice(0, 8)}`, key: `key-${crypto.randomUUID()}` });
const callsOf = (name: string) => idempotencyProbe.calls.get(name) ?? 0;

/** Holds every call under `name` in flight until the returned function is called. */
function gate(name: string): () => void {
  const { promise, resolve } = Promise.withResolvers<void>();
  idempotencyProbe.gates.set(name, promise);
  return () => {
    idempotencyProbe.gates.delete(name);
    resolve();
  };
}

async function read(response: Response, surface: Surface): Promise<Answer> {
  const json = (await response.json()) as Record<string, any>;
  const body = surface === "rest" ? json : response.ok ? json.result.data : json.error.data.httpBody;
  return { status: response.status, body, replayed: response.headers.get("idempotent-replayed"), requestId: response.headers.get("x-request-id") };
}

interface SendOptions {
  token?: string;
  key?: string | null;
  headers?: Record<string, string>;
  app?: HttpApp;
}

/** POST to a fixture over REST (`restPath`, body without path parameters) or over /trpc (whole input). */
async function post(surface: Surface, procedure: string, restPath: string, restBody: object, trpcInput: object, options: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? tokenA}`, "content-type": "application/json", ...options.headers };
  if (options.key) headers["idempotency-key"] = options.key;
  const path = surface === "rest" ? restPath : `/trpc/fixtureIdempotency.${procedure}`;
  const body = JSON.stringify(surface === "rest" ? restBody : trpcInput);
  const response = await (options.app ?? http).fetch(new Request(`http://localhost${path}`, { method: "POST", headers, body }));
  return read(response, surface);
}

function createThing(surface: Surface, input: ThingInput, options: SendOptions = {}): Promise<Answer> {
  const { group, ...rest } = input;
  return post(surface, "createThing", `/fixture/groups/${encodeURIComponent(group)}/things`, rest, input, options);
}

async function rowsFor(key: string) {
  return tg.gateway.deps.db.selectFrom("idempotency_keys").selectAll().where("key", "=", key).execute();
}

/**
 * An HTTP app whose database refuses the next `count` writes that end a key (an update or delete of
 * `idempotency_keys`) as a connection lost under them would: the database going away as a request ends. Its
 * tries again wait on `time`, which the test advances.
 */
function appLosingItsDatabase(count: number, time: VirtualTime): { app: HttpApp; refused: () => number } {
  let left = count;
  const plugin: KyselyPlugin = {
    transformQuery({ node }: PluginTransformQueryArgs) {
      const ending = (node.kind === "UpdateQueryNode" || node.kind === "DeleteQueryNode") && JSON.stringify(node).includes('"idempotency_keys"');
      if (ending && left > 0) {
        left--;
        throw Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" });
      }
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const deps: Deps = { ...tg.gateway.deps, db: tg.gateway.deps.db.withPlugin(plugin), timers: time.timers };
  return {
    app: createHttpApp({ deps, router: routerWithIdempotencyFixtures, openapi: {} as never, metrics: createMetrics(), readiness: {} }),
    refused: () => count - left,
  };
}

/** An HTTP app over the test gateway's database whose clock the test sets. */
function appWithClock(clock: { now: Date }): HttpApp {
  const deps: Deps = onTestClock(tg.gateway.deps, () => clock.now);
  return createHttpApp({ deps, router: routerWithIdempotencyFixtures, openapi: {} as never, metrics: createMetrics(), readiness: {} });
}

beforeAll(async () => {
  tg = await startTestGateway();
  http = createHttpApp({ deps: tg.gateway.deps, router: routerWithIdempotencyFixtures, openapi: {} as never, metrics: createMetrics(), readiness: {} });
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant();
  // Valid for three days, so that tests moving the clock a day ahead keep them.
  const mint = (tenantId: string, environment: "sandbox" | "live") =>
    mintToken(tg.config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment, ttlSeconds: 3 * 86_400 });
  tokenA = await mint(tenantA, "sandbox");
  tokenALive = await mint(tenantA, "live");
  tokenB = await mint(tenantB, "sandbox");
  admin = await mintToken(tg.config.jwt, { sub: "operator", role: "admin", ttlSeconds: 3 * 86_400 });
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("canonical request hash", () => {
  it("ignores key order at every depth, and nothing else", async () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }], e: undefined })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(await requestHash({ a: 1, b: { c: [1, 2] } })).toBe(await requestHash({ b: { c: [1, 2] }, a: 1 }));
    expect(await requestHash({ a: 1, b: { c: [1, 2] } })).not.toBe(await requestHash({ a: 1, b: { c: [2, 1] } }));
    expect(await requestHash(undefined)).toBe(await requestHash({}));
    expect(await requestHash({})).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("idempotencyKeyHeader", () => {
  it("documents the Idempotency-Key header of a procedure that declares it", () => {
    const document = buildOpenApiDocument(routerWithIdempotencyFixtures, {}, "0.0.0");
    const operation = (document.paths as Record<string, Record<string, { parameters: Record<string, unknown>[] }>>)["/fixture/groups/{group}/things"]!.post!;
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({ in: "header", name: "idempotency-key", schema: expect.objectContaining({ type: "string", maxLength: 255 }) }),
    );
  });
});

for (const surface of SURFACES) {
  describe(`Idempotency-Key on ${surface === "rest" ? "the REST surface" : "/trpc"}`, () => {
    it("replays the first answer for the same key and body, with idempotent-replayed: true, and runs once", async () => {
      const { name, key } = fresh("replay");
      const input = { group: "g1", name };
      const first = await createThing(surface, input, { key });
      expect(first.status).toBe(200);
      expect(first.replayed).toBeNull();
      expect(first.body).toMatchObject({ group: "g1", name, call: 1, tenantId: tenantA, environment: "sandbox" });

      const second = await createThing(surface, input, { key });
      expect(second.status).toBe(200);
      expect(second.replayed).toBe("true");
      expect(second.body).toEqual(first.body);
      expect(second.requestId).not.toBe(first.requestId);
      expect(callsOf(name)).toBe(1);
    });

    it("runs every call without a key", async () => {
      const { name } = fresh("no-key");
      const first = await createThing(surface, { group: "g1", name });
      const second = await createThing(surface, { group: "g1", name });
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.replayed).toBeNull();
      expect(second.body.id).not.toBe(first.body.id);
      expect(callsOf(name)).toBe(2);
    });

    it("answers 422 idempotency_mismatch for the same key with another body, without running", async () => {
      const { name, key } = fresh("mismatch");
      expect((await createThing(surface, { group: "g1", name }, { key })).status).toBe(200);
      const other = await createThing(surface, { group: "g1", name, outcome: "created" }, { key });
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ statusCode: 422, code: "idempotency_mismatch", error: "Unprocessable Entity", requestId: other.requestId });
      expect(callsOf(name)).toBe(1);
    });

    it("answers 409 idempotency_in_flight while the first request runs, then replays it", async () => {
      const { name, key } = fresh("in-flight");
      const release = gate(name);
      const first = createThing(surface, { group: "g1", name }, { key });
      await waitUntil(() => callsOf(name) === 1, { what: "the first request runs", timeoutMs: 2500, intervalMs: 5 });

      const second = await createThing(surface, { group: "g1", name }, { key });
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({ statusCode: 409, code: "idempotency_in_flight", error: "Conflict" });

      release();
      const done = await first;
      expect(done.status).toBe(200);
      const third = await createThing(surface, { group: "g1", name }, { key });
      expect(third.status).toBe(200);
      expect(third.replayed).toBe("true");
      expect(third.body).toEqual(done.body);
      expect(callsOf(name)).toBe(1);
    });

    it("replays a 4xx answer as the same error", async () => {
      const { name, key } = fresh("not-found");
      const first = await createThing(surface, { group: "g1", name, outcome: "not_found" }, { key });
      expect(first.status).toBe(404);
      expect(first.replayed).toBeNull();
      const second = await createThing(surface, { group: "g1", name, outcome: "not_found" }, { key });
      expect(second.status).toBe(404);
      expect(second.replayed).toBe("true");
      const { requestId: firstId, ...firstBody } = first.body;
      const { requestId: secondId, ...secondBody } = second.body;
      expect(secondBody).toEqual(firstBody);
      expect(secondBody).toMatchObject({ statusCode: 404, code: "not_found", message: "Thing not found", error: "Not Found" });
      expect(secondId).toBe(second.requestId!);
      expect(secondId).not.toBe(firstId);
      expect(callsOf(name)).toBe(1);
    });

    it("replays a provider refusal and a validation error with all their fields", async () => {
      const refused = fresh("refused");
      const input = { group: "g1", name: refused.name, outcome: "refused" as const };
      const first = await createThing(surface, input, { key: refused.key });
      const second = await createThing(surface, input, { key: refused.key });
      expect(second.status).toBe(422);
      expect(second.replayed).toBe("true");
      expect(second.body).toMatchObject({ code: "provider_refused", providerErrors: ["thing is too big"], providerResponseCode: "42" });
      expect({ ...second.body, requestId: null }).toEqual({ ...first.body, requestId: null });
      expect(callsOf(refused.name)).toBe(1);

      const invalid = fresh("invalid");
      const bad = { group: "g1", name: invalid.name, outcome: "invalid" as const };
      await createThing(surface, bad, { key: invalid.key });
      const again = await createThing(surface, bad, { key: invalid.key });
      expect(again.status).toBe(400);
      expect(again.replayed).toBe("true");
      expect(again.body).toMatchObject({ code: "validation_failed", message: ["name must be shorter", "group is odd"] });
      expect(callsOf(invalid.name)).toBe(1);
    });

    it("does not store a 5xx: the retry runs again, and its success is stored", async () => {
      const { name, key } = fresh("unavailable");
      idempotencyProbe.failures.set(name, 2);
      const first = await createThing(surface, { group: "g1", name }, { key });
      expect(first.status).toBe(503);
      expect(first.body.code).toBe("unavailable");
      expect(await rowsFor(key)).toHaveLength(0);

      const second = await createThing(surface, { group: "g1", name }, { key });
      expect(second.status).toBe(503);
      expect(second.replayed).toBeNull();

      const third = await createThing(surface, { group: "g1", name }, { key });
      expect(third.status).toBe(200);
      expect(third.replayed).toBeNull();
      expect(third.body.call).toBe(3);
      const fourth = await createThing(surface, { group: "g1", name }, { key });
      expect(fourth.replayed).toBe("true");
      expect(fourth.body).toEqual(third.body);
      expect(callsOf(name)).toBe(3);
    });

    it("stores a provider timeout (504) that names its payment, and replays it with paymentId and transactionId", async () => {
      const { name, key } = fresh("provider-timeout");
      const input = { group: "g1", name, outcome: "provider_timeout" as const };
      const first = await createThing(surface, input, { key });
      expect(first.status).toBe(504);
      expect(first.body).toMatchObject({ code: "provider_timeout", paymentId: `pay_${name}`, transactionId: 412 });
      const second = await createThing(surface, input, { key });
      expect(second.status).toBe(504);
      expect(second.replayed).toBe("true");
      expect({ ...second.body, requestId: null }).toEqual({ ...first.body, requestId: null });
      expect(callsOf(name)).toBe(1);
    });

    it("does not store a provider 502 that names no payment (nothing was sent): the retry runs again", async () => {
      const { name, key } = fresh("provider-unreachable");
      const input = { group: "g1", name, outcome: "provider_unreachable" as const };
      const first = await createThing(surface, input, { key });
      expect(first.status).toBe(502);
      expect(first.body.code).toBe("provider_error");
      expect(first.body).not.toHaveProperty("paymentId");
      expect(await rowsFor(key)).toHaveLength(0);
      const second = await createThing(surface, input, { key });
      expect(second.status).toBe(502);
      expect(second.replayed).toBeNull();
      expect(callsOf(name)).toBe(2);
    });

    it("does not store a crash (500) either", async () => {
      const { name, key } = fresh("crash");
      const input = { group: "g1", name, outcome: "crash" as const };
      expect((await createThing(surface, input, { key })).status).toBe(500);
      expect(await rowsFor(key)).toHaveLength(0);
      const retry = await createThing(surface, input, { key });
      expect(retry.status).toBe(500);
      expect(retry.replayed).toBeNull();
      expect(callsOf(name)).toBe(2);
    });

    it("refuses an empty key or one over 255 characters with a 400 naming Idempotency-Key, and takes one of 255", async () => {
      const { name } = fresh("long-key");
      const tooLong = await createThing(surface, { group: "g1", name }, { key: "k".repeat(256) });
      expect(tooLong.status).toBe(400);
      expect(tooLong.body).toMatchObject({ code: "validation_failed", message: ["Idempotency-Key must be shorter than or equal to 255 characters"] });
      const empty = await createThing(surface, { group: "g1", name }, { headers: { "idempotency-key": "" } });
      expect(empty.status).toBe(400);
      expect(empty.body).toMatchObject({ code: "validation_failed", message: ["Idempotency-Key should not be empty"] });
      expect(callsOf(name)).toBe(0);
      const longest = `${crypto.randomUUID()}${"k".repeat(255 - 36)}`;
      expect((await createThing(surface, { group: "g1", name }, { key: longest })).status).toBe(200);
      expect((await createThing(surface, { group: "g1", name }, { key: longest })).replayed).toBe("true");
      expect(callsOf(name)).toBe(1);
    });
  });
}

describe("Idempotency-Key across surfaces and scopes", () => {
  it("uses the same scope on REST and on /trpc: a key used on one replays on the other", async () => {
    const { name, key } = fresh("cross");
    const rest = await createThing("rest", { group: "shared", name }, { key });
    const trpc = await createThing("trpc", { group: "shared", name }, { key });
    expect(trpc.status).toBe(200);
    expect(trpc.replayed).toBe("true");
    expect(trpc.body).toEqual(rest.body);
    expect(callsOf(name)).toBe(1);
    const [row] = await rowsFor(key);
    expect(row).toMatchObject({
      tenant_id: tenantA,
      environment: "sandbox",
      method: "POST",
      path: "/fixture/groups/shared/things",
      state: "done",
      response_status: 200,
    });
  });

  it("keeps keys apart by tenant, environment and path", async () => {
    const { name, key } = fresh("scoped");
    const base = await createThing("rest", { group: "g1", name }, { key });
    const otherTenant = await createThing("rest", { group: "g1", name }, { key, token: tokenB });
    const otherEnvironment = await createThing("trpc", { group: "g1", name }, { key, token: tokenALive });
    const otherPath = await createThing("rest", { group: "g2", name }, { key });
    for (const answer of [base, otherTenant, otherEnvironment, otherPath]) {
      expect(answer.status).toBe(200);
      expect(answer.replayed).toBeNull();
    }
    expect(otherTenant.body.tenantId).toBe(tenantB);
    expect(otherEnvironment.body.environment).toBe("live");
    expect(new Set([base, otherTenant, otherEnvironment, otherPath].map((a) => a.body.id)).size).toBe(4);
    expect(callsOf(name)).toBe(4);

    // Each is replayed within its own scope.
    expect((await createThing("trpc", { group: "g1", name }, { key, token: tokenB })).body).toEqual(otherTenant.body);
    expect((await createThing("rest", { group: "g2", name }, { key })).body).toEqual(otherPath.body);
    expect(callsOf(name)).toBe(4);
    const scopes = (await rowsFor(key)).map((r) => `${r.tenant_id} ${r.environment} ${r.path}`).sort();
    expect(scopes).toEqual(
      [
        `${tenantA} sandbox /fixture/groups/g1/things`,
        `${tenantA} live /fixture/groups/g1/things`,
        `${tenantA} sandbox /fixture/groups/g2/things`,
        `${tenantB} sandbox /fixture/groups/g1/things`,
      ].sort(),
    );
  });

  it("scopes an admin acting for a tenant to that tenant", async () => {
    const { name, key } = fresh("admin-for-tenant");
    const asTenant = await createThing("rest", { group: "g1", name }, { key });
    const asAdmin = await createThing("trpc", { group: "g1", name }, { key, token: admin, headers: { "x-tenant-id": tenantA } });
    expect(asAdmin.replayed).toBe("true");
    expect(asAdmin.body).toEqual(asTenant.body);
  });

  it("scopes operator calls without a tenant to the operator sentinel", async () => {
    const { name, key } = fresh("operator");
    const first = await post("rest", "createOperatorThing", "/fixture/operator-things", { name }, { name }, { key, token: admin });
    const second = await post("trpc", "createOperatorThing", "/fixture/operator-things", { name }, { name }, { key, token: admin });
    expect(first.status).toBe(200);
    expect(second.replayed).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(callsOf(name)).toBe(1);
    const [row] = await rowsFor(key);
    expect(row).toMatchObject({ tenant_id: OPERATOR_TENANT_ID, environment: "sandbox", method: "POST", path: "/fixture/operator-things" });
  });

  it("stores an answer holding a secret sealed, and replays it opened", async () => {
    const { name, key } = fresh("sealed");
    const first = await post("rest", "createSecret", "/fixture/secrets", { name }, { name }, { key });
    expect(first.status).toBe(200);
    const secret = first.body.secret as string;
    expect(secret).toStartWith("whsec_");

    const [row] = await rowsFor(key);
    const raw = JSON.stringify(row);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(secret.slice(6, 30));
    expect(raw).not.toContain(first.body.id as string);
    expect(row!.response_body).toEqual({ sealed: expect.stringMatching(/^v1:/) });

    const second = await post("trpc", "createSecret", "/fixture/secrets", { name }, { name }, { key });
    expect(second.replayed).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(callsOf(name)).toBe(1);
  });

  it("re-seals stored sealed answers under a new key (keys rotate)", async () => {
    const { name, key } = fresh("reseal");
    const first = await post("rest", "createSecret", "/fixture/secrets", { name }, { name }, { key });
    const rotated = await createKeyring([{ version: 2, key: new Uint8Array(32).fill(9) }, ...tg.config.encryptionKeys]);
    const report = await resealIdempotencyResponses({ db: tg.gateway.deps.db }, rotated);
    expect(report.resealed).toBeGreaterThanOrEqual(1);
    const [row] = await rowsFor(key);
    const sealed = (row!.response_body as { sealed: string }).sealed;
    expect(sealed).toStartWith("v2:");
    const opened = JSON.parse(await rotated.open(sealed, { tenantId: tenantA, field: SEALED_RESPONSE_FIELD }));
    expect(opened).toEqual(first.body);
    expect(await resealIdempotencyResponses({ db: tg.gateway.deps.db }, rotated)).toEqual({ resealed: 0, current: report.resealed + report.current });
  });

  it("stores a plain answer as is", async () => {
    const { name, key } = fresh("plain");
    const first = await createThing("rest", { group: "g1", name }, { key });
    const [row] = await rowsFor(key);
    expect(row!.response_body).toEqual({ plain: first.body as never });
    expect(row!.expires_at.getTime() - row!.created_at.getTime()).toBe(IDEMPOTENCY_TTL_MS);
  });
});

describe("Idempotency-Key over time", () => {
  it("stores an answer the database was away for as soon as it is back: the retry replays it, never runs again", async () => {
    const time = virtualTime();
    const { app, refused } = appLosingItsDatabase(2, time);
    const { name, key } = fresh("store-later");
    const first = await createThing("rest", { group: "g1", name }, { key, app });
    expect(first.status).toBe(200);
    expect(refused()).toBe(1);
    // Tried again every second, not before: the second try is refused too, the third stores it — well within the lock's term.
    await time.advance(999);
    expect(refused()).toBe(1);
    await time.advance(1);
    await waitUntil(() => refused() === 2, { what: "the second try, a second later" });
    await time.advance(999);
    expect((await rowsFor(key))[0]?.state).toBe("in_flight");
    await time.advance(1);
    await waitUntil(async () => (await rowsFor(key))[0]?.state === "done", { what: "the answer stored once the database is back" });
    expect(refused()).toBe(2);
    const retry = await createThing("trpc", { group: "g1", name }, { key });
    expect(retry.replayed).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(callsOf(name)).toBe(1);
  });

  it("frees the key of a 5xx the database was away for as soon as it is back: the retry runs again, not 409", async () => {
    const time = virtualTime();
    const { app } = appLosingItsDatabase(1, time);
    const { name, key } = fresh("free-later");
    idempotencyProbe.failures.set(name, 1);
    const first = await createThing("rest", { group: "g1", name }, { key, app });
    expect(first.status).toBe(503);
    await time.advance(999);
    expect(await rowsFor(key)).toHaveLength(1);
    await time.advance(1);
    await waitUntil(async () => (await rowsFor(key)).length === 0, { what: "the key freed once the database is back" });
    const retry = await createThing("rest", { group: "g1", name }, { key });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBeNull();
    expect(callsOf(name)).toBe(2);
  });

  it("lets the next request take over a key whose 60-second lock ran out, and keeps the later answer", async () => {
    const clock = { now: new Date() };
    const app = appWithClock(clock);
    const { name, key } = fresh("takeover");
    const release = gate(name);
    const crashed = createThing("rest", { group: "g1", name }, { key, app });
    await waitUntil(() => callsOf(name) === 1, { what: "the first request runs", timeoutMs: 2500, intervalMs: 5 });

    clock.now = new Date(clock.now.getTime() + tg.config.idempotencyLockMs - 1_000);
    const stillLocked = await createThing("trpc", { group: "g1", name }, { key, app });
    expect(stillLocked.status).toBe(409);

    clock.now = new Date(clock.now.getTime() + 2_000);
    const releaseTakeover = gate(name);
    const takeover = createThing("trpc", { group: "g1", name }, { key, app });
    await waitUntil(() => callsOf(name) === 2, { what: "the request that took over runs", timeoutMs: 2500, intervalMs: 5 });
    expect((await createThing("rest", { group: "g1", name }, { key, app })).status).toBe(409);

    // The first request finishes late, while the second runs: its answer reaches its caller, but the key
    // is no longer its own, so that answer is not stored.
    release();
    const late = await crashed;
    expect(late.status).toBe(200);
    expect(late.body.call).toBe(1);
    expect((await createThing("rest", { group: "g1", name }, { key, app })).status).toBe(409);

    releaseTakeover();
    const taken = await takeover;
    expect(taken.status).toBe(200);
    expect(taken.replayed).toBeNull();
    expect(taken.body.call).toBe(2);
    const replay = await createThing("rest", { group: "g1", name }, { key, app });
    expect(replay.replayed).toBe("true");
    expect(replay.body).toEqual(taken.body);
    expect(callsOf(name)).toBe(2);
  });

  it("lets exactly one of 20 concurrent requests take over an expired lock", async () => {
    const clock = { now: new Date() };
    const app = appWithClock(clock);
    const { name, key } = fresh("takeover-race");
    const release = gate(name);
    const crashed = createThing("rest", { group: "g1", name }, { key, app });
    await waitUntil(() => callsOf(name) === 1, { what: "the first request runs", timeoutMs: 2500, intervalMs: 5 });
    clock.now = new Date(clock.now.getTime() + tg.config.idempotencyLockMs + 1_000);
    idempotencyProbe.gates.set(name, Bun.sleep(100));

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => createThing(SURFACES[i % 2]!, { group: "g1", name }, { key, app })));
    expect(callsOf(name)).toBe(2);
    expect(answers.filter((a) => a.status === 200 && a.replayed === null)).toHaveLength(1);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    release();
    await crashed;
  });

  it("forgets an answer after 24 hours: the key runs again", async () => {
    const clock = { now: new Date() };
    const app = appWithClock(clock);
    const { name, key } = fresh("expired");
    const first = await createThing("rest", { group: "g1", name }, { key, app });
    clock.now = new Date(clock.now.getTime() + IDEMPOTENCY_TTL_MS - 1_000);
    expect((await createThing("rest", { group: "g1", name }, { key, app })).replayed).toBe("true");

    clock.now = new Date(clock.now.getTime() + 2_000);
    // Even with another body: the old answer no longer counts.
    const later = await createThing("rest", { group: "g1", name, outcome: "created" }, { key, app });
    expect(later.status).toBe(200);
    expect(later.replayed).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
    expect(callsOf(name)).toBe(2);
    const [row] = await rowsFor(key);
    expect(row!.created_at.getTime()).toBe(clock.now.getTime());
  });

  it("prunes keys past their 24 hours (RETENTION_IDEMPOTENCY_KEYS at its default) and keeps the others", async () => {
    const old = fresh("purge-old");
    const recent = fresh("purge-recent");
    await createThing("rest", { group: "g1", name: old.name }, { key: old.key });
    const clock = { now: new Date(Date.now() + IDEMPOTENCY_TTL_MS / 2) };
    await createThing("rest", { group: "g1", name: recent.name }, { key: recent.key, app: appWithClock(clock) });

    const later = onTestClock(tg.gateway.deps, () => new Date(Date.now() + IDEMPOTENCY_TTL_MS + 1_000));
    const { idempotency_keys } = await pruneOldRows(later);
    expect(idempotency_keys.pruned).toBeGreaterThanOrEqual(1);
    expect(await rowsFor(old.key)).toHaveLength(0);
    expect(await rowsFor(recent.key)).toHaveLength(1);
  });
});

describe("20 concurrent identical requests", () => {
  for (const mode of ["rest", "trpc", "mixed"] as const) {
    it(`run once, on ${mode === "mixed" ? "both surfaces at once" : mode === "rest" ? "REST" : "/trpc"}: every other answer is 409 or the replay`, async () => {
      const { name, key } = fresh(`concurrent-${mode}`);
      // The one that runs takes a little while, so that the others overlap it.
      idempotencyProbe.gates.set(name, Bun.sleep(100));
      const surfaceOf = (i: number): Surface => (mode === "mixed" ? SURFACES[i % 2]! : mode);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => createThing(surfaceOf(i), { group: "g1", name }, { key })));

      expect(callsOf(name)).toBe(1);
      const ok = answers.filter((a) => a.status === 200);
      const conflicts = answers.filter((a) => a.status === 409);
      expect(ok.length + conflicts.length).toBe(20);
      expect(ok.filter((a) => a.replayed === null)).toHaveLength(1);
      expect(conflicts.length).toBeGreaterThan(0);
      for (const answer of conflicts) expect(answer.body.code).toBe("idempotency_in_flight");
      const result = ok.find((a) => a.replayed === null)!.body;
      for (const answer of ok) expect(answer.body).toEqual(result);

      // Once the first has finished, every later request replays it.
      const later = await Promise.all(Array.from({ length: 20 }, (_, i) => createThing(surfaceOf(i), { group: "g1", name }, { key })));
      for (const answer of later) {
        expect(answer.status).toBe(200);
        expect(answer.replayed).toBe("true");
        expect(answer.body).toEqual(result);
      }
      expect(callsOf(name)).toBe(1);
    });
  }

  it("answer 409 to all 19 others while the first is held, then replay it to all", async () => {
    const { name, key } = fresh("concurrent-held");
    const release = gate(name);
    const first = createThing("rest", { group: "g1", name }, { key });
    await waitUntil(() => callsOf(name) === 1, { what: "the first request runs", timeoutMs: 2500, intervalMs: 5 });
    const others = await Promise.all(Array.from({ length: 19 }, (_, i) => createThing(SURFACES[i % 2]!, { group: "g1", name }, { key })));
    for (const answer of others) {
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe("idempotency_in_flight");
    }
    release();
    const result = (await first).body;
    const later = await Promise.all(Array.from({ length: 19 }, (_, i) => createThing(SURFACES[i % 2]!, { group: "g1", name }, { key })));
    for (const answer of later)
      expect({ status: answer.status, replayed: answer.replayed, body: answer.body }).toEqual({ status: 200, replayed: "true", body: result });
    expect(callsOf(name)).toBe(1);
  });
});
