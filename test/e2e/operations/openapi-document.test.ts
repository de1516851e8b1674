import { afterAll, beforeAll, describe, expect, it } from "bun:test";
// What Scalar (the /docs reference) uses to build a request body from the document: the curl it shows.
import { getExampleFromSchema } from "@scalar/workspace-store/request-example";
import { loadConfig } from "../../../src/config.ts";
import { ERROR_CODES } from "../../../src/errors.ts";
import { EVENT_TYPES } from "../../../src/services/events/event-types.ts";
import { generateOpenApi } from "../../../src/mod.ts";
import { startTestGateway, TEST_ENV, type TestGateway } from "../../support/gateway.ts";

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: { name: string; in: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>;
}

const document = (await generateOpenApi()) as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);
const operation = (method: string, path: string): Operation => document.paths[path]![method.toLowerCase()]!;
const statuses = (op: Operation): number[] => Object.keys(op.responses).map(Number);

/** The schema with every `$ref` to a component replaced by the component (the document has no cycles). */
function dereference(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dereference);
  if (!node || typeof node !== "object") return node;
  const ref = (node as { $ref?: string }).$ref;
  if (ref) return dereference(document.components.schemas[ref.replace("#/components/schemas/", "")]);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, dereference(value)]));
}

/** The JSON body Scalar's generated request sends for an operation, built from the document alone. */
function scalarBody(op: Operation): unknown {
  const schema = dereference(op.requestBody!.content["application/json"]!.schema);
  return getExampleFromSchema(schema as never, { mode: "write" }, { schemaPath: ["requestBody"] });
}

describe("the OpenAPI document's error responses", () => {
  it("describes every error with the one Error schema, whose code is the enum of contract §1", () => {
    const error = document.components.schemas.Error as { properties: Record<string, { enum?: string[]; minimum?: number }> };
    expect(error.properties.code!.enum).toEqual([...ERROR_CODES]);
    expect(Object.keys(error.properties)).toEqual(
      expect.arrayContaining(["statusCode", "message", "error", "code", "requestId", "providerErrors", "providerResponseCode", "paymentId", "transactionId"]),
    );
    for (const { path, method, operation: op } of operations) {
      if (path.startsWith("/health") || path.includes("/webhook")) continue; // plain routes describe their own
      // The OAuth2 token endpoint answers RFC 6749 §5.2's body, which keeps the contract's members beside its own.
      const schema = path === "/auth/token" && document.components.schemas.OAuthError ? "OAuthError" : "Error";
      for (const status of statuses(op).filter((s) => s >= 400))
        expect({ path, method, status, schema: op.responses[status]!.content?.["application/json"]?.schema }).toEqual({
          path,
          method,
          status,
          schema: { $ref: `#/components/schemas/${schema}` },
        });
    }
  });

  it("lists the statuses each operation can answer: its base's, its input's, Idempotency-Key's and its own", () => {
    // A tenant route: bad headers, token, another tenant or a sandbox token on live, an unknown tenant, its budget.
    // Every operation: headers over the server's limit (431), a bug (500), the database or Redis down (503).
    expect(statuses(operation("GET", "/payments"))).toEqual([200, 400, 401, 403, 404, 429, 431, 500, 503]);
    expect(operation("GET", "/payments").responses["429"]!.headers).toHaveProperty("retry-after");
    // An operators' route: no tenant budget, no tenant to miss.
    expect(statuses(operation("GET", "/admin/payments/stuck"))).toEqual([200, 400, 401, 403, 431, 500, 503]);
    // Any token, no input: still 400 for a query string holding a NUL character (GET /auth/whoami?x=%00).
    expect(statuses(operation("GET", "/auth/whoami"))).toEqual([200, 400, 401, 431, 500, 503]);
    // A provider call with an Idempotency-Key and a JSON body.
    expect(statuses(operation("POST", "/providerA/direct-payment"))).toEqual([200, 400, 401, 403, 404, 409, 413, 415, 422, 424, 429, 431, 500, 502, 503, 504]);
    expect(statuses(operation("POST", "/providerB/checkout"))).toEqual(expect.arrayContaining([422, 424, 502, 504]));
    expect(statuses(operation("PATCH", "/tenants/{tenant_id}"))).toContain(404);
    expect(statuses(operation("PUT", "/providerB/permits/{permit_id}/schedule"))).toContain(409);
  });
});

describe("the OpenAPI document's operations", () => {
  it("gives every operation a unique operationId", () => {
    const ids = operations.map(({ operation: op }) => op.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operation("POST", "/tenants").operationId).toBe("tenants-create");
    expect(operation("POST", "/providerB/webhook").operationId).toBe("providerB-webhook");
  });

  it("marks the public operations as needing no credentials (`security: []`), a person's own the session cookie, operators' bearer, and every other one either", () => {
    // A person's calls from an e-mailed link (issue 30) carry its token in the body; signing in is how a session starts.
    const fromLink = ["/people/invitations/accept", "/people/password-reset", "/people/password-reset/confirm", "/people/sign-in", "/people/sign-in/options"];
    const personOnly = (path: string) => path === "/people/sign-out" || path.startsWith("/people/me");
    const isPublic = (path: string) =>
      path === "/" || path === "/auth/token" || path.startsWith("/health/") || /^\/provider[AB]\/webhook/.test(path) || fromLink.includes(path);
    for (const { path, method, operation: op } of operations) {
      // A public operation needs no credentials: `[]`, or alternatives one of which is none (`{}`).
      const needsNone = op.security !== undefined && (op.security.length === 0 || op.security.some((s) => Object.keys(s as object).length === 0));
      expect({ path, method, needsNone, security: needsNone ? "none needed" : op.security }).toEqual({
        path,
        method,
        needsNone: isPublic(path),
        security: isPublic(path)
          ? "none needed"
          : personOnly(path)
            ? [{ session: [] }]
            : op.tags?.includes("operator only")
              ? [{ bearer: [] }]
              : [{ bearer: [] }, { session: [] }],
      });
    }
  });

  it("documents the amounts MAX_AMOUNT bounds up to its default, and no integer's example is a safe-integer bound", () => {
    const maximum = (path: string, field: string) =>
      (dereference(operation("POST", path).requestBody!.content["application/json"]!.schema) as { properties: Record<string, { maximum?: number }> })
        .properties[field]!.maximum;
    const { maxAmount } = loadConfig(TEST_ENV);
    expect(maximum("/providerA/direct-payment", "amount")).toBe(maxAmount);
    expect(maximum("/providerB/checkout", "amount")).toBe(maxAmount);
    expect(maximum("/providerB/permits", "maxAmount")).toBe(maxAmount);
    expect(JSON.stringify(document)).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });
});

describe("what the OpenAPI document declares beyond bodies", () => {
  const full = document as unknown as {
    tags: { name: string; description?: string }[];
    components: { headers: Record<string, unknown>; schemas: Record<string, { properties?: Record<string, { format?: string }> }> };
  };
  type Described = Operation & { tags?: string[]; description?: string };

  it("tags every operator-only operation `operator only` and says so first in its description; no other operation", () => {
    const operatorOnly = operations
      .filter(({ operation: op }) => (op as Described).tags?.includes("operator only"))
      .map(({ method, path }) => `${method} ${path}`);
    expect(operatorOnly.sort()).toEqual(
      [
        "GET /admin/payments/stuck",
        "GET /admin/reports/reconciliation",
        "GET /admin/reports/reconciliation/differences",
        "GET /admin/audit-log",
        "GET /admin/staff",
        "POST /admin/staff/invitations",
        "DELETE /admin/staff/{person_id}",
        "GET /tenants",
        "PATCH /tenants/{tenant_id}",
        "POST /tenants",
      ].sort(),
    );
    for (const { operation: op } of operations.filter(({ operation: op }) => (op as Described).tags?.includes("operator only")))
      expect((op as Described).description).toStartWith("**Operator only**");
    expect(full.tags.every((tag) => (tag.description ?? "").length > 0)).toBe(true);
  });

  it("declares the response headers: x-request-id everywhere, the rate-limit budget on tenant calls, Idempotent-Replayed, WWW-Authenticate on every 401", () => {
    expect(Object.keys(full.components.headers).sort()).toEqual(
      ["idempotent-replayed", "ratelimit", "ratelimit-policy", "retry-after", "www-authenticate", "x-request-id"].sort(),
    );
    const payments = operation("GET", "/payments");
    expect(Object.keys(payments.responses["200"]!.headers!)).toEqual(expect.arrayContaining(["x-request-id", "ratelimit", "ratelimit-policy"]));
    expect(Object.keys(operation("POST", "/payments").responses["200"]!.headers!)).toContain("idempotent-replayed");
    for (const { path, method, operation: op } of operations) {
      if (op.responses["401"])
        expect({ path, method, headers: Object.keys(op.responses["401"].headers ?? {}) }).toEqual({
          path,
          method,
          headers: expect.arrayContaining(["www-authenticate"]),
        });
      for (const [status, response] of Object.entries(op.responses))
        if (status !== "431")
          expect({ path, method, status, headers: Object.keys(response.headers ?? {}) }).toEqual({
            path,
            method,
            status,
            headers: expect.arrayContaining(["x-request-id"]),
          });
    }
    // The request headers an operator's token uses on a tenant call.
    expect(payments.parameters!.map((parameter) => parameter.name)).toEqual(expect.arrayContaining(["x-tenant-id", "x-environment"]));
  });

  it("documents the reconciliation reports' CSV, URL fields as URIs and the direct payment's countries as an enum", () => {
    for (const path of ["/reports/reconciliation", "/admin/reports/reconciliation"])
      expect(Object.keys(operation("GET", path).responses["200"]!.content!)).toEqual(["application/json", "text/csv"]);
    expect(full.components.schemas.WebhookEndpoint!.properties!.url!.format).toBe("uri");
    expect(full.components.schemas.Payment!.properties!.callbackUrl!.format).toBe("uri");
  });
});

describe("the OpenAPI document's webhooks section", () => {
  type Delivery = Omit<Operation, "parameters"> & { parameters: { name: string; required: boolean }[] };
  const webhooks = (document as unknown as { webhooks: Record<string, { post: Delivery }> }).webhooks;

  it("describes every event type a delivery can carry, with the Standard Webhooks headers", () => {
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const [type, { post }] of Object.entries(webhooks)) {
      expect({ type, headers: post.parameters.filter((p) => p.required).map((p) => p.name) }).toEqual({
        type,
        headers: ["webhook-id", "webhook-timestamp", "webhook-signature", "user-agent"],
      });
      const envelope = post.requestBody!.content["application/json"]!.schema as { properties: { type: { const: string }; data: unknown } };
      expect(envelope.properties.type.const).toBe(type);
      expect(envelope.properties.data).toBeDefined();
    }
    const payout = webhooks["payout.sent"]!.post.requestBody!.content["application/json"]!.schema as { properties: { data: unknown } };
    expect(payout.properties.data).toEqual({ $ref: "#/components/schemas/Payout" });
  });
});

describe("the request bodies /docs generates from the document", () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  const withJsonBody = operations.filter(({ operation: op }) => op.requestBody?.content["application/json"]);

  it("builds the direct payment's body from its examples: a valid request, not MIN_SAFE_INTEGER and an empty email", () => {
    const body = scalarBody(operation("POST", "/providerA/direct-payment")) as Record<string, unknown>;
    expect(body.amount).toBe(500);
    expect(body.email).toMatch(/^[^@\s]+@[^@\s]+\.[a-z]+$/);
  });

  it.each(withJsonBody.map(({ method, path, operation: op }) => [`${method} ${path}`, path, method, op] as const))(
    "%s: the generated body is not refused as invalid (no 400)",
    async (_name, path, method, op) => {
      const admin = await tg.adminToken();
      const tenantId = await tg.insertTenant();
      // Path parameters get well-formed ids of nothing: a 404 is fine, the body must pass validation first.
      const url = path.replace("{tenant_id}", tenantId).replace(/\{[a-z_]+\}/g, (name) => (name === "{environment}" ? "sandbox" : "x_01"));
      const response = await tg.request(url, {
        method,
        headers: { authorization: `Bearer ${admin}`, "x-tenant-id": tenantId, "content-type": "application/json" },
        body: JSON.stringify(scalarBody(op)),
      });
      // On a 400, the failure shows the gateway's messages.
      expect(response.status === 400 ? await response.json() : "not a 400").toBe("not a 400");
    },
  );
});

describe("GET /docs", () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  it("configures the reference without Scalar's cloud: no AI agent, MCP, developer toolbar (deploy), client button or telemetry", async () => {
    const html = await (await tg.request("/docs")).text();
    const config = JSON.parse(/Scalar\.createApiReference\('#app', (.*)\);<\/script>/.exec(html)![1]!);
    expect(config).toMatchObject({
      url: "/openapi.json",
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: "never",
    });
  });
});
