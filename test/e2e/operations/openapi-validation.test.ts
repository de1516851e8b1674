import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { signWebhook } from "../../../src/crypto/sign-webhook.ts";
import { checkedResponses, UndocumentedResponseError, validateGatewayResponse, webhookDeliveryProblems } from "../../support/openapi-validation.ts";

// The check every test's gateway responses go through (test/support/openapi-validation.ts): what it refuses.
let tg: TestGateway;
beforeAll(async () => {
  tg = await startTestGateway();
}, 60_000);
afterAll(() => tg.close(), 30_000);

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "x-request-id": "req-1", ...headers } });
const check = (method: string, path: string, response: Response) => validateGatewayResponse(method, `http://localhost${path}`, response);
const ERROR_BODY = { statusCode: 404, message: "Payment not found", error: "Not Found", code: "not_found", requestId: "req-1" };

describe("the OpenAPI check of the gateway's responses", () => {
  it("passes what the gateway really answers, through TestGateway.request", async () => {
    const live = await tg.request("/health/live");
    expect(live.status).toBe(200);
    const token = await tg.tenantToken(await tg.insertTenant());
    const missing = await tg.request("/payments/pay_01JD3XQ7Y8ZC5V4N2M1K0H9G8F", { headers: { authorization: `Bearer ${token}` } });
    expect(missing.status).toBe(404);
    // The body is still there for the test to read.
    expect(((await missing.json()) as { code: string }).code).toBe("not_found");
  });

  it("checks every fetch to a gateway the test started listening, and again once restarted", async () => {
    const { url } = await tg.gateway.start({ workers: false });
    const before = checkedResponses();
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    expect(checkedResponses()).toBe(before + 1);
    await tg.gateway.stop();
    await tg.gateway.start({ workers: false }).then(({ url: again }) => fetch(`${again}/health/live`));
    expect(checkedResponses()).toBe(before + 2);
  });

  it("finds the provider webhook routes' 404 (an unknown environment), 413 (a body over 64 KiB) and 400 (malformed IPN) documented", async () => {
    const post = (path: string, body: string, type = "application/json") => tg.request(path, { method: "POST", headers: { "content-type": type }, body });
    expect((await post("/providerA/webhook/staging", "{}")).status).toBe(404);
    expect((await post("/providerA/webhook/sandbox", "x".repeat(64 * 1024 + 1))).status).toBe(413);
    expect((await post("/providerB/webhook", "x".repeat(64 * 1024 + 1), "application/x-www-form-urlencoded")).status).toBe(413);
    expect((await post("/providerB/webhook", "{not json")).status).toBe(400);
  });

  it("passes a documented answer built by hand", async () => {
    await check("GET", "/payments/pay_1", json(404, ERROR_BODY));
  });

  it("refuses a status the operation does not list", async () => {
    await expect(check("GET", "/payments/pay_1", json(418, ERROR_BODY))).rejects.toThrow(/→ 418: status not documented/);
    await expect(check("GET", "/health/live", json(404, ERROR_BODY))).rejects.toThrow(UndocumentedResponseError);
  });

  it("refuses a content type the response does not list", async () => {
    const csv = new Response("a,b\n", { status: 404, headers: { "content-type": "text/csv", "x-request-id": "req-1" } });
    await expect(check("GET", "/payments/pay_1", csv)).rejects.toThrow(/content type text\/csv not documented/);
  });

  it("refuses a header the response does not declare, a declared one that does not match, and a missing required one", async () => {
    await expect(check("GET", "/payments/pay_1", json(404, ERROR_BODY, { "x-debug": "1" }))).rejects.toThrow(/header x-debug not declared/);
    await expect(check("GET", "/payments/pay_1", json(404, ERROR_BODY, { ratelimit: "100" }))).rejects.toThrow(/header ratelimit: "100"/);
    const withoutId = new Response(JSON.stringify(ERROR_BODY), { status: 404, headers: { "content-type": "application/json" } });
    await expect(check("GET", "/payments/pay_1", withoutId)).rejects.toThrow(/required header x-request-id missing/);
  });

  it("refuses a body that does not match its schema", async () => {
    await expect(check("GET", "/payments/pay_1", json(404, { ...ERROR_BODY, code: "no_such_code" }))).rejects.toThrow(/body does not match its schema/);
    await expect(check("GET", "/health/live", json(200, { status: "fine" }))).rejects.toThrow(/body does not match its schema/);
  });

  it("leaves alone what the document does not describe: /trpc, the dashboard", async () => {
    await check("GET", "/trpc/auth.whoami", json(418, {}));
    await check("GET", "/dashboard", new Response("<!doctype html>", { headers: { "content-type": "text/html" } }));
  });
});

describe("the OpenAPI check of webhook deliveries (what test/support/webhook-receiver.ts receives)", () => {
  const envelope = {
    id: "evt_01JD3Z6Q5W8B8Y4G1M7T2N9XKC",
    type: "webhook.test",
    createdAt: "2026-11-28T12:00:00.000Z",
    tenantId: "ten_01JD3XQ7Y8ZC5V4N2M1K0H9G8F",
    environment: "sandbox",
    data: { endpointId: "whe_01JD3Z6Q5W8B8Y4G1M7T2N9XKC", message: "A test event from Passerelle" },
  };
  const delivery = (body: object) => {
    const text = JSON.stringify(body);
    const headers = { ...signWebhook({ id: envelope.id, timestampSeconds: 1764331200, body: text, secrets: [`whsec_${btoa("k".repeat(32))}`] }) };
    return { headers: { ...headers, "content-type": "application/json", "user-agent": "Passerelle-Webhooks/0.1.0" } as Record<string, string>, text };
  };

  it("passes a delivery as the gateway sends it", async () => {
    const { headers, text } = delivery(envelope);
    expect(await webhookDeliveryProblems(headers, text)).toEqual([]);
  });

  it("refuses a payload off its event type's schema, an unknown type and a missing Standard Webhooks header", async () => {
    const extra = delivery({ ...envelope, data: { ...envelope.data, secret: "x" } });
    expect((await webhookDeliveryProblems(extra.headers, extra.text)).join()).toContain("must NOT have additional properties");
    const missing = delivery({ ...envelope, data: { message: "hi" } });
    expect((await webhookDeliveryProblems(missing.headers, missing.text)).join()).toContain("must have required property 'endpointId'");
    const unknown = delivery({ ...envelope, type: "payment.teleported" });
    expect(await webhookDeliveryProblems(unknown.headers, unknown.text)).toEqual(["event type payment.teleported is not in the document's webhooks section"]);
    const unsigned = delivery(envelope);
    delete unsigned.headers["webhook-signature"];
    expect(await webhookDeliveryProblems(unsigned.headers, unsigned.text)).toEqual(["webhook.test: header webhook-signature missing"]);
  });
});
