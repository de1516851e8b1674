/**
 * A provider that hands out an id twice (issue 25: the provider A simulator of a restarted gateway started
 * its ids at 1 again). The second payment's id collides with the first's in our database: never a 500, but
 * the contract's 502 naming our payment, which fails before the phone is prompted, an error line in the log,
 * and a reconciliation difference for the accountant. The fault is the simulator's own control
 * (`POST /_sim/faults/repeat-transaction-id`), on a gateway with the simulators mounted on a real port.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

let tg: TestGateway;
let base: string;
let token: string;

beforeAll(async () => {
  const port = await freePort();
  tg = await startTestGateway({
    SIMULATORS: "on",
    SIMULATOR_APPROVE_DELAY_MS: "50",
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  });
  base = (await tg.gateway.start()).url!;
  token = await tg.tenantToken(await tg.insertTenant());
}, 60_000);

afterAll(async () => {
  await tg?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

const mtnPayment = (description: string) => ({
  amount: 600,
  description,
  operator: "mtn",
  customer: { phone: { number: "+22997000000", country: "bj" } },
});

/** Makes the provider A simulator hand out `id` again for its next transaction. */
async function repeatNextId(id: number): Promise<void> {
  const response = await fetch(`${base}/sandbox/providerA/_sim/faults/repeat-transaction-id`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  expect(response.status).toBe(200);
}

describe("a provider id that already names another payment", () => {
  it("POST /payments: 502 naming our payment, which fails; logged; a reconciliation difference", async () => {
    const first = await call("POST", "/payments", mtnPayment("First"));
    expect(first.status).toBe(200);
    const repeated = Number(first.body.providerTransactionId);
    expect(repeated).toBeGreaterThan(0);
    await waitUntil(async () => (await call("GET", `/payments/${first.body.id}`)).body.state === "succeeded", { what: "the first payment succeeded" });

    await repeatNextId(repeated);
    const second = await call("POST", "/payments", mtnPayment("Second"));
    expect(second.status).toBe(502);
    expect(second.body.code).toBe("provider_error");
    expect(second.body.message).toContain(`(${repeated}) that already names another payment`);
    const paymentId = second.body.paymentId as string;
    expect(paymentId).toMatch(/^pay_/);
    expect(paymentId).not.toBe(first.body.id);

    const read = await call("GET", `/payments/${paymentId}`);
    expect(read.body.state).toBe("failed");
    expect(read.body.providerTransactionId).toBeNull();
    // The first payment keeps its id and its state.
    const firstAfter = await call("GET", `/payments/${first.body.id}`);
    expect(firstAfter.body).toMatchObject({ state: "succeeded", providerTransactionId: String(repeated) });

    const logged = tg.logs.find((line) => line.alert === "provider_id_reused" && line.paymentId === paymentId);
    expect(logged).toMatchObject({ level: 50, providerTransactionId: String(repeated), holder: first.body.id });

    const report = await call("GET", "/reports/reconciliation");
    const difference = (report.body.differences as Body[]).find((d) => d.id === paymentId);
    expect(difference).toMatchObject({ kind: "payment", provider: "providerA", ourState: "failed", providerState: "pending", amount: 600 });
    expect(difference!.providerStatus).toContain(`id ${repeated}, which already names ${first.body.id}`);
  });

  it("POST /providerA/direct-payment: the same 502 naming the payment, never a 500", async () => {
    const body = { description: "Spec endpoint", amount: 500, payment_method: "mnoA_open", phone_number: { number: "+22997000001", country: "bj" } };
    const first = await call("POST", "/providerA/direct-payment", body);
    expect(first.status).toBe(200);
    await repeatNextId(first.body.transactionId);
    const second = await call("POST", "/providerA/direct-payment", body);
    expect(second.status).toBe(502);
    expect(second.body.code).toBe("provider_error");
    const paymentId = second.body.paymentId as string;
    expect(paymentId).toMatch(/^pay_/);
    expect((await call("GET", `/payments/${paymentId}`)).body.state).toBe("failed");
    // The next payment gets a new id again.
    const third = await call("POST", "/providerA/direct-payment", body);
    expect(third.status).toBe(200);
    expect(third.body.transactionId).not.toBe(first.body.transactionId);
  });
});
