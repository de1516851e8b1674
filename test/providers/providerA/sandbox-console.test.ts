/**
 * The provider A sandbox console names a payment by the merchant's `payment_method` (the spec's neutral
 * names), the value the developer sent, not by the provider's internal mode name. A gateway on a real
 * port with the simulators mounted takes direct payments through its public API; the console page shows them.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";

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

async function directPayment(paymentMethod: string, amount: number, country: string, number: string): Promise<{ transactionId: number }> {
  const response = await fetch(`${base}/providerA/direct-payment`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      description: "Console order",
      amount,
      payment_method: paymentMethod,
      phone_number: { number, country },
      firstname: "Awa",
      lastname: "Diallo",
      email: "awa@example.com",
    }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { transactionId: number };
}

/** The `<tr>` of one transaction on the console page. */
function rowOf(html: string, transactionId: number): string {
  const row = html.match(new RegExp(`<tr id="trx-${transactionId}"[\\s\\S]*?</tr>`))?.[0];
  expect(row).toBeDefined();
  return row!;
}

describe("GET /sandbox/providerA/console", () => {
  it("shows a pending payment's and a settled payment's payment_method as the merchant sent it", async () => {
    const pending = await directPayment("mnoA_open", 2500, "bj", "+22997000001");
    const settled = await directPayment("mnoB_tg", 500, "tg", "+22890000002");
    const consoleUrl = `${base}/sandbox/providerA/console`;
    const settledMark = `data-transaction-id="${settled.transactionId}" data-status="approved"`;
    await waitUntil(async () => (await (await fetch(consoleUrl)).text()).includes(settledMark), {
      what: "the 500 payment settled on the console",
    });

    const html = await (await fetch(consoleUrl)).text();
    expect(html).toContain("<th>Payment method</th>");
    const pendingRow = rowOf(html, pending.transactionId);
    expect(pendingRow).toContain("<code>mnoA_open</code>");
    expect(pendingRow).not.toContain("mtn_open");
    const settledRow = rowOf(html, settled.transactionId);
    expect(settledRow).toContain("<code>mnoB_tg</code>");
    expect(settledRow).not.toContain("moov_tg");
  });
});
