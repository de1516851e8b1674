/**
 * Errors on `/trpc` carry tRPC's own code for their HTTP status (contract §1, issue 18 point 2): a typed
 * `@trpc/client` caller reads `error.data.code` (`UNAUTHORIZED`, …) and `error.shape.code` (tRPC's JSON-RPC
 * number), and still gets the contract's body in `error.data.httpBody`. Over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import type { AppRouter } from "../../src/mod.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { advanceThroughWaits, virtualTime } from "../support/virtual-time.ts";

const time = virtualTime();
let tg: TestGateway;
let url: string;

beforeAll(async () => {
  // Provider A is unreachable: a direct payment is a 502 (the connection was refused before anything was sent).
  // On virtual time: the client's waits before retrying the refused connection are stepped through.
  tg = await startTestGateway(
    {
      PROVIDER_A_SANDBOX_URL: "http://127.0.0.1:1",
      PROVIDER_A_SANDBOX_SECRET_KEY: "sk_sandbox_nowhere",
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: "wh_nowhere",
    },
    { time },
  );
  url = (await tg.gateway.start({ workers: false })).url!;
}, 60_000);
afterAll(() => tg.close(), 30_000);

function client(headers: Record<string, string> = {}) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers })] });
}

async function tenantClient(extra: Record<string, string> = {}) {
  const token = await tg.tenantToken(await tg.insertTenant());
  return client({ authorization: `Bearer ${token}`, ...extra });
}

interface SeenError {
  shapeCode: number | undefined;
  data: { code: string; httpStatus: number; httpBody: Record<string, unknown> };
}

async function errorOf(call: Promise<unknown>): Promise<SeenError> {
  const error = await call.then(
    () => {
      throw new Error("the call succeeded; expected an error");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  const clientError = error as TRPCClientError<AppRouter>;
  return { shapeCode: clientError.shape?.code, data: clientError.data as unknown as SeenError["data"] };
}

const directPayment = (overrides: Record<string, unknown> = {}) => ({
  description: "Order 1042",
  amount: 500,
  payment_method: "mnoA_open" as const,
  phone_number: { number: "+22997000000", country: "bj" },
  ...overrides,
});

describe("errors on /trpc", () => {
  it("a missing token is UNAUTHORIZED (-32001), with the contract's body in data.httpBody", async () => {
    const { shapeCode, data } = await errorOf(client().auth.whoami.query());
    expect(shapeCode).toBe(-32001);
    expect(data.code).toBe("UNAUTHORIZED");
    expect(data.httpStatus).toBe(401);
    expect(data.httpBody).toMatchObject({ statusCode: 401, code: "unauthorized", error: "Unauthorized", message: "Missing Authorization header" });
  });

  it("an unknown object is NOT_FOUND (-32004)", async () => {
    const tenant = await tenantClient();
    const { shapeCode, data } = await errorOf(tenant.webhooks.get.query({ webhook_id: "whe_01JD3M8Q4ZK2T9XG7B6V5N4C3A" }));
    expect([shapeCode, data.code, data.httpStatus]).toEqual([-32004, "NOT_FOUND", 404]);
    expect(data.httpBody).toMatchObject({ statusCode: 404, code: "not_found" });
  });

  it("invalid input is BAD_REQUEST (-32600), the violations in data.httpBody.message", async () => {
    const tenant = await tenantClient();
    const { shapeCode, data } = await errorOf(tenant.providerA.directPayment.mutate(directPayment({ amount: 0 })));
    expect([shapeCode, data.code, data.httpStatus]).toEqual([-32600, "BAD_REQUEST", 400]);
    expect(data.httpBody).toMatchObject({ statusCode: 400, code: "validation_failed", message: ["amount must not be less than 1"] });
  });

  it("an Idempotency-Key reused with another body is UNPROCESSABLE_CONTENT (-32022)", async () => {
    const token = await tg.tenantToken(await tg.insertTenant());
    const keyed = client({ authorization: `Bearer ${token}`, "idempotency-key": "same-key-1" });
    await keyed.webhooks.create.mutate({ url: "https://example.com/a" });
    const { shapeCode, data } = await errorOf(keyed.webhooks.create.mutate({ url: "https://example.com/b" }));
    expect([shapeCode, data.code, data.httpStatus]).toEqual([-32022, "UNPROCESSABLE_CONTENT", 422]);
    expect(data.httpBody).toMatchObject({ statusCode: 422, code: "idempotency_mismatch" });
  });

  it("a provider that cannot be reached is BAD_GATEWAY", async () => {
    const tenant = await tenantClient();
    const answer = errorOf(tenant.providerA.directPayment.mutate(directPayment()));
    await advanceThroughWaits(time, [100, 400], { what: "provider A's client" });
    const { shapeCode, data } = await answer;
    // tRPC gives its 5xx codes one JSON-RPC number, -32603; data.code tells them apart.
    expect([shapeCode, data.code, data.httpStatus]).toEqual([-32603, "BAD_GATEWAY", 502]);
    expect(data.httpBody).toMatchObject({ statusCode: 502, code: "provider_error" });
  });

  it("a tenant without provider B credentials (424) is PRECONDITION_FAILED (-32012), tRPC having no 424", async () => {
    const tenantId = await tg.insertTenant();
    const tenant = client({ authorization: `Bearer ${await tg.tenantToken(tenantId)}`, "x-tenant-id": tenantId });
    const checkout = {
      amount: 5000,
      description: "Commande 42",
      returnUrl: "https://shop.example/merci",
      cancelUrl: "https://shop.example/panier",
      customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
    };
    const { shapeCode, data } = await errorOf(tenant.providerB.checkout.mutate(checkout));
    expect([shapeCode, data.code, data.httpStatus]).toEqual([-32012, "PRECONDITION_FAILED", 424]);
    expect(data.httpBody).toMatchObject({ statusCode: 424, code: "not_configured" });
  });

  it("a body over 64 KiB is PAYLOAD_TOO_LARGE (-32013)", async () => {
    const response = await fetch(`${url}/trpc/providerA.directPayment`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ description: "x".repeat(70_000) })),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { code: number; data: SeenError["data"] } };
    expect([body.error.code, body.error.data.code, body.error.data.httpStatus]).toEqual([-32013, "PAYLOAD_TOO_LARGE", 413]);
    expect(body.error.data.httpBody).toMatchObject({ code: "payload_too_large", requestId: response.headers.get("x-request-id")! });
  });
});
