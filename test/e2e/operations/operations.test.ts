import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { readFileSync } from "node:fs";
import { createJobQueue } from "../../../src/jobs/mod.ts";
import { createLogger } from "../../../src/logger.ts";
import { createGateway, generateOpenApi, type AppRouter } from "../../../src/mod.ts";
import { loadConfig } from "../../../src/config.ts";
import { createTestDatabase } from "../../support/db.ts";
import { startTestGateway, TEST_ENV, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let url: string;
let metricsUrl: string;

beforeAll(async () => {
  tg = await startTestGateway();
  const addresses = await tg.gateway.start({ workers: false });
  url = addresses.url!;
  metricsUrl = addresses.metricsUrl!;
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("one procedure, two surfaces, over real HTTP", () => {
  it("answers a typed @trpc/client call and a plain HTTP GET of the same procedure alike", async () => {
    const tenantId = await tg.insertTenant();
    const token = await tg.tenantToken(tenantId);
    const client = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${token}` } })],
    });
    const typed = await client.auth.whoami.query();
    expect(typed.tenantId).toBe(tenantId);

    const plain = await fetch(`${url}/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual(typed);
  });

  it("gives a typed client the contract's error body in error.data.httpBody", async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc` })] });
    const error = await client.auth.whoami.query().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    const data = (error as TRPCClientError<AppRouter>).data as unknown as { httpStatus: number; httpBody: Record<string, unknown> };
    expect(data.httpStatus).toBe(401);
    expect(data.httpBody).toMatchObject({ statusCode: 401, code: "unauthorized", error: "Unauthorized", message: "Missing Authorization header" });
  });

  it("does not batch on /trpc", async () => {
    const token = await tg.adminToken();
    const response = await fetch(`${url}/trpc/auth.whoami,auth.whoami?batch=1&input={}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { httpBody: Record<string, unknown> } } };
    expect(body.error.data.httpBody).toMatchObject({ code: "validation_failed", message: "Batching is not enabled on the server" });
    expect(body.error.data.httpBody.requestId).toBe(response.headers.get("x-request-id")!);
  });
});

describe("operations endpoints", () => {
  it("GET /health/live answers while the process is up", async () => {
    const response = await fetch(`${url}/health/live`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  it("GET /health/ready checks the database and the queue", async () => {
    const response = await fetch(`${url}/health/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", checks: { database: "ok", queue: "ok" } });
  });

  it("GET /health/ready is 503 when a dependency is unreachable", async () => {
    const config = loadConfig({ ...TEST_ENV, LOG_LEVEL: "silent" });
    const database = await createTestDatabase();
    const logger = createLogger(config);
    const queue = createJobQueue({ redisUrl: "redis://127.0.0.1:1", prefix: "ptest-down", logger });
    const gateway = await createGateway(config, { database, queue, logger });
    try {
      const response = await gateway.fetch(new Request("http://localhost/health/ready"));
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: "unavailable", checks: { database: "ok", queue: "down" } });
    } finally {
      await gateway.stop();
      await queue.close();
      await database.dispose();
    }
  }, 30_000);

  it("GET /health/ready is 503 when the database is unreachable", async () => {
    const config = loadConfig({ ...TEST_ENV, LOG_LEVEL: "silent" });
    const database = await createTestDatabase();
    const logger = createLogger(config);
    const queue = createJobQueue({ redisUrl: undefined, prefix: "ptest-db-down", logger });
    const gateway = await createGateway(config, { database, queue, logger });
    try {
      await database.dispose();
      const response = await gateway.fetch(new Request("http://localhost/health/ready"));
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: "unavailable", checks: { database: "down", queue: "ok" } });
    } finally {
      await gateway.stop();
      await queue.close();
    }
  }, 30_000);

  it("serves Prometheus metrics on their own listener, not on the public port", async () => {
    await fetch(`${url}/health/live`);
    const metrics = await fetch(`${metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain("passerelle_http_requests_total");
    expect(text).toMatch(/passerelle_http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
  });

  it("GET /openapi.json is the committed document with the gateway's PUBLIC_BASE_URL as its server, and errors are described by the contract's shape", async () => {
    const served = await (await fetch(`${url}/openapi.json`)).json();
    expect(served).toEqual((await generateOpenApi(tg.config.publicBaseUrl)) as unknown as Record<string, unknown>);
    const publicUrl = new URL(tg.config.publicBaseUrl);
    expect(served.servers).toHaveLength(1);
    expect(served.servers[0].url).toBe("{scheme}://{host}");
    expect(served.servers[0].variables.scheme.default).toBe(publicUrl.protocol.slice(0, -1));
    expect(served.servers[0].variables.host.default).toBe(publicUrl.host);
    const committed = JSON.parse(readFileSync(new URL("../../../openapi/openapi.json", import.meta.url), "utf8"));
    // The committed document's server is PUBLIC_BASE_URL's documented default, http://localhost:3000.
    expect(committed.servers[0].variables.host.default).toBe("localhost:3000");
    expect({ ...served, servers: committed.servers, info: committed.info }).toEqual(committed);
    const whoami = served.paths["/auth/whoami"].get;
    expect(whoami.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    expect(Object.keys(served.components.schemas.Error.properties)).toEqual(expect.arrayContaining(["statusCode", "message", "error", "code", "requestId"]));
    expect(served.paths["/health/ready"]).toBeDefined();
  });

  it("GET /docs serves an API reference that loads nothing from outside", async () => {
    const page = await fetch(`${url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("/docs/scalar.js");
    expect(html).toContain("/openapi.json");
    expect(html).not.toMatch(/src="https?:/);
    const bundle = await fetch(`${url}/docs/scalar.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});

describe("request logs", () => {
  it("write one JSON line per request with request id, tenant, route, status and duration", async () => {
    const tenantId = await tg.insertTenant();
    const response = await fetch(`${url}/auth/whoami`, {
      headers: { authorization: `Bearer ${await tg.tenantToken(tenantId)}`, "x-request-id": "log-line-1" },
    });
    expect(response.status).toBe(200);
    const lines = tg.logs.filter((line) => line.requestId === "log-line-1");
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ msg: "request", tenantId, method: "GET", route: "/auth/whoami", status: 200 });
    expect(typeof lines[0]!.durationMs).toBe("number");
  });

  it("redact authorization headers and secrets wherever they appear", () => {
    const captured: string[] = [];
    const logger = createLogger({ logLevel: "info" }, { write: (line: string) => void captured.push(line) });
    logger.info(
      { headers: { authorization: "Bearer eyJ.secret.token" }, credentials: { masterKey: "mk_live_123", token: "tok_9" }, secret: "whsec_abc", email: "a@b.c" },
      "something happened",
    );
    const text = captured.join("");
    for (const secret of ["eyJ.secret.token", "mk_live_123", "tok_9", "whsec_abc", "a@b.c"]) expect(text).not.toContain(secret);
    expect(text).toContain("[redacted]");
  });

  it("redact secrets that appear in a request's path", async () => {
    await fetch(`${url}/sandbox/providerA/_sim/accounts/sk_sandbox_AbC123xyz/webhook`, { headers: { "x-request-id": "secret-path" } });
    await fetch(`${url}/no/psk_sandbox_abc-DEF_123/here`, { headers: { "x-request-id": "secret-path-2" } });
    const lines = tg.logs.filter((line) => line.requestId === "secret-path" || line.requestId === "secret-path-2");
    expect(lines.map((line) => line.route)).toEqual(["/sandbox/providerA/_sim/accounts/[redacted]/webhook", "/no/[redacted]/here"]);
    expect(JSON.stringify(tg.logs)).not.toContain("AbC123xyz");
  });

  it("never log the bearer token of a request", () => {
    const all = JSON.stringify(tg.logs);
    expect(all).not.toContain("eyJ");
  });
});

describe("provider simulators", () => {
  it("are mounted under /sandbox/<provider> when SIMULATORS is on, and absent when off", async () => {
    const on = await startTestGateway({ SIMULATORS: "on" });
    try {
      for (const name of ["providerA", "providerB"]) {
        const response = await on.request(`/sandbox/${name}/_sim/health`);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ status: "ok", simulator: name });
      }
    } finally {
      await on.close();
    }
    expect((await tg.request("/sandbox/providerA/_sim/health")).status).toBe(404);
  }, 60_000);

  it("run standalone with passerelle sandbox, each from / on its own port", async () => {
    const free = () => {
      const s = Bun.serve({ port: 0, fetch: () => new Response() });
      const port = s.port!;
      s.stop(true);
      return port;
    };
    const [portA, portB] = [free(), free()];
    const child = Bun.spawn(["bun", "src/main.ts", "sandbox", "--port-a", String(portA), "--port-b", String(portB)], {
      cwd: `${import.meta.dir}/../../..`,
      env: { PATH: process.env.PATH ?? "" },
      stdout: "pipe",
    });
    try {
      let body: unknown;
      for (let i = 0; i < 100 && !body; i++) {
        await Bun.sleep(50);
        body = await fetch(`http://127.0.0.1:${portB}/_sim/health`).then(
          (r) => r.json(),
          () => undefined,
        );
      }
      expect(body).toEqual({ status: "ok", simulator: "providerB" });
      expect(await (await fetch(`http://127.0.0.1:${portA}/_sim/health`)).json()).toEqual({ status: "ok", simulator: "providerA" });
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
