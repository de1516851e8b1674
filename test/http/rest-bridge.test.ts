import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHttpApp, type HttpApp } from "../../src/http/app.ts";
import { createMetrics } from "../../src/http/metrics.ts";
import { expectError } from "../support/errors.ts";
import { fixtureRouter, PAYMENT_METHODS, routerWithFixtures } from "../support/fixture-router.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let tg: TestGateway;
let http: HttpApp;
let admin: string;
let tenantId: string;
let tenant: string;

const call = (path: string, init: RequestInit = {}) => http.fetch(new Request(`http://localhost${path}`, init));
const json = (token: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
const validPayment = {
  description: "Order 42",
  amount: 500,
  payment_method: "mnoA_open",
  phone_number: { number: "+22997000000", country: "bj" },
};

beforeAll(async () => {
  tg = await startTestGateway();
  http = createHttpApp({ deps: tg.gateway.deps, router: routerWithFixtures, openapi: {} as never, metrics: createMetrics(), readiness: {} });
  admin = await tg.adminToken();
  tenantId = await tg.insertTenant();
  tenant = await tg.tenantToken(tenantId);
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("REST routes generated from the router", () => {
  it("mounts one route per procedure with meta.openapi", () => {
    const paths = http.routes.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain("GET /auth/whoami");
    expect(paths).toContain("POST /fixture/payments");
    expect(paths).toContain("GET /fixture/items/{item_id}");
    const withOpenApi = Object.values(routerWithFixtures._def.procedures as unknown as Record<string, { _def: { meta?: { openapi?: unknown } } }>).filter(
      (p) => p._def.meta?.openapi,
    );
    expect(paths.length).toBe(withOpenApi.length);
    expect(Object.keys(fixtureRouter._def.procedures).every((name) => `fixture.${name}` in routerWithFixtures._def.procedures)).toBe(true);
  });

  it("passes a valid JSON body through the procedure's validation and answers its output", async () => {
    const response = await call("/fixture/payments", json(admin, { ...validPayment, unknownField: 1 }));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    const body = await response.json();
    expect(body).toEqual({ ...validPayment, ok: true });
  });

  it("rejects a payment_method outside the enum with the spec's message", async () => {
    const body = await expectError(await call("/fixture/payments", json(admin, { ...validPayment, payment_method: "visa" })), 400, "validation_failed");
    expect(body.error).toBe("Bad Request");
    expect(body.message).toEqual([`payment_method must be one of the following values: ${PAYMENT_METHODS.join(", ")}`]);
  });

  it("lists one message per violation with dotted paths", async () => {
    const body = await expectError(
      await call("/fixture/payments", json(admin, { amount: 0, payment_method: "mnoB", phone_number: { number: "97000000" }, email: "nope" })),
      400,
      "validation_failed",
    );
    expect(body.message).toEqual([
      "description should not be empty",
      "amount must not be less than 1",
      "phone_number.number must be in international format, like +22997000000",
      "phone_number.country should not be empty",
      "email must be an email",
    ]);
  });

  it("answers 400 for malformed JSON and for a body that is not an object", async () => {
    const malformed = await expectError(await call("/fixture/payments", json(admin, "{not json")), 400, "validation_failed");
    expect(malformed.message).toBe("Malformed JSON in request body");
    const array = await expectError(await call("/fixture/payments", json(admin, "[1,2]")), 400, "validation_failed");
    expect(array.message).toBe("Request body must be a JSON object");
  });

  it("answers 415 for a content type the route does not take", async () => {
    const init = json(admin, "description=x");
    (init.headers as Record<string, string>)["content-type"] = "text/plain";
    const body = await expectError(await call("/fixture/payments", init), 415, "unsupported_media_type");
    expect(body.message).toBe("Content-Type must be application/json");
  });

  it("accepts a form body where the route declares it", async () => {
    const response = await call("/fixture/form", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=key_1",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ grant_type: "client_credentials", client_id: "key_1" });
  });

  it("answers 413 for a body over 64 KiB, declared or not", async () => {
    const big = JSON.stringify({ ...validPayment, description: "x".repeat(70 * 1024) });
    await expectError(await call("/fixture/payments", json(admin, big)), 413, "payload_too_large");
    const stream = new Blob([big]).stream();
    const chunked = await call("/fixture/payments", {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: stream,
      // @ts-expect-error Bun accepts duplex for streamed request bodies
      duplex: "half",
    });
    await expectError(chunked, 413, "payload_too_large");
    const overTrpc = await call("/trpc/fixture.createPayment", json(admin, big));
    expect(overTrpc.status).toBe(413);
    const trpcBody = (await overTrpc.json()) as { error: { data: { httpBody: { code: string; statusCode: number } } } };
    expect(trpcBody.error.data.httpBody).toMatchObject({ code: "payload_too_large", statusCode: 413 });
  });

  it("coerces path and query parameters from the schema without loosening it", async () => {
    const response = await call("/fixture/items/12?flag=false&tags=a&tags=b", { headers: { authorization: `Bearer ${tenant}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ item_id: 12, flag: false, tags: ["a", "b"], tenantId, environment: "sandbox" });

    const notNumber = await expectError(await call("/fixture/items/abc", { headers: { authorization: `Bearer ${tenant}` } }), 400, "validation_failed");
    expect(notNumber.message).toEqual(["item_id must be a number"]);
    const negative = await expectError(await call("/fixture/items/-3", { headers: { authorization: `Bearer ${tenant}` } }), 400, "validation_failed");
    expect(negative.message).toEqual(["item_id must be greater than 0"]);
    const badFlag = await expectError(await call("/fixture/items/1?flag=maybe", { headers: { authorization: `Bearer ${tenant}` } }), 400, "validation_failed");
    expect(badFlag.message).toEqual(["flag must be a boolean value"]);
  });

  it("leaves /trpc strict after REST calls: the string 'false' is not a boolean there", async () => {
    await call("/fixture/items/1?flag=false", { headers: { authorization: `Bearer ${tenant}` } });
    const input = encodeURIComponent(JSON.stringify({ item_id: 1, flag: "false" }));
    const response = await call(`/trpc/fixture.readItem?input=${input}`, { headers: { authorization: `Bearer ${tenant}` } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { httpBody: { message: string[]; code: string } } } };
    expect(body.error.data.httpBody.code).toBe("validation_failed");
    expect(body.error.data.httpBody.message).toEqual(["flag must be a boolean value"]);
  });

  it("carries the same error body inside tRPC's envelope on /trpc", async () => {
    const response = await call("/trpc/fixture.createPayment", json(admin, { ...validPayment, payment_method: "visa" }));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { httpStatus: number; httpBody: Record<string, unknown> } } };
    expect(body.error.data.httpStatus).toBe(400);
    expect(body.error.data.httpBody.message).toEqual([`payment_method must be one of the following values: ${PAYMENT_METHODS.join(", ")}`]);
    expect(body.error.data.httpBody.requestId).toBe(response.headers.get("x-request-id")!);
    expect(JSON.stringify(body)).not.toContain("stack");
  });

  it("maps a provider refusal to 422 with providerErrors and providerResponseCode", async () => {
    const body = await expectError(await call("/fixture/refuse", json(admin, {})), 422, "provider_refused");
    expect(body.providerErrors).toEqual(["amount is too large"]);
    expect(body.providerResponseCode).toBe("1001");
    expect(body.error).toBe("Unprocessable Entity");
  });

  it("answers a thrown error with 500 and says nothing about it, but logs it", async () => {
    const response = await call("/fixture/crash");
    const body = await expectError(response, 500, "internal");
    expect(body.message).toBe("Internal server error");
    const text = JSON.stringify(body);
    expect(text).not.toContain("SELECT");
    expect(text).not.toContain("secret_table");
    const logged = tg.logs.find((line) => line.requestId === body.requestId && line.msg === "unexpected error");
    expect(logged).toBeDefined();
  });

  it("answers an unknown route with 404 in the error shape", async () => {
    const body = await expectError(await call("/no/such/route"), 404, "not_found");
    expect(body.message).toBe("Route not found");
    await expectError(await call("/Auth/WhoAmI"), 404, "not_found");
  });

  it("keeps a sane x-request-id from the caller and replaces an unsafe one", async () => {
    const kept = await call("/no/such/route", { headers: { "x-request-id": "abc-123" } });
    expect(kept.headers.get("x-request-id")).toBe("abc-123");
    expect(((await kept.json()) as { requestId: string }).requestId).toBe("abc-123");
    const replaced = await call("/no/such/route", { headers: { "x-request-id": "<script>" } });
    expect(replaced.headers.get("x-request-id")).not.toBe("<script>");
  });
});
