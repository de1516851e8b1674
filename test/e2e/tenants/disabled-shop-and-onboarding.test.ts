/**
 * Issue 29 points 3 and 4, the API under the dashboard: an operator disables a tenant with a reason (kept on the
 * tenant, cleared when enabled again); a person of that shop is refused at sign-in with `tenant_disabled` and the
 * reason, after the password is checked (a wrong password still reads as one); and a tenant's way to live
 * (`GET /reports/onboarding`, `reports.onboarding`) read from its own data, another tenant's steps not counted (the
 * browser test `lists-and-flows.test.ts` ticks the keys and a collected sandbox payment, and sees the list done).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { startSmtpSink, type SmtpSink } from "../../support/smtp-sink.ts";
import { linkTokenTo } from "../../support/people.ts";

let sink: SmtpSink;
let tg: TestGateway;
let admin: string;
let base: string;
const PASSWORD = "baobab sous la pluie";

const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function newTenant(name: string): Promise<string> {
  const created = await call("POST", "/tenants", admin, { name });
  expect(created.status).toBe(200);
  return ((await created.json()) as { tenant: { id: string } }).tenant.id;
}

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" });
  base = (await tg.gateway.start()).url!;
  admin = await tg.adminToken();
}, 60_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
});

describe("a disabled shop at sign-in", () => {
  it("keeps the operator's reason, refuses its people with tenant_disabled and the reason, and lets them in once enabled", async () => {
    const shop = await newTenant("Quincaillerie Akpakpa");
    expect((await call("POST", `/tenants/${shop}/invitations`, admin, { email: "awa@akpakpa.example", role: "owner" })).status).toBe(200);
    const token = await linkTokenTo(sink, "awa@akpakpa.example", "invitation", 1);
    expect((await call("POST", "/people/invitations/accept", undefined, { token, password: PASSWORD })).status).toBe(200);

    const disabled = await call("PATCH", `/tenants/${shop}`, admin, { disabled: true, reason: "Unpaid invoice of March" });
    expect(await disabled.json()).toMatchObject({ disabled: true, disabledReason: "Unpaid invoice of March" });
    // A wrong password is a wrong password: nothing about the shop is said to who does not know it.
    await expectError(await call("POST", "/people/sign-in", undefined, { email: "awa@akpakpa.example", password: "not the password" }), 401, "unauthorized");
    await expectError(
      await call("POST", "/people/sign-in", undefined, { email: "awa@akpakpa.example", password: PASSWORD }),
      403,
      "tenant_disabled",
      "This shop is disabled by the operator: Unpaid invoice of March",
    );

    const enabled = await call("PATCH", `/tenants/${shop}`, admin, { disabled: false });
    expect(await enabled.json()).toMatchObject({ disabled: false, disabledReason: null });
    expect((await call("POST", "/people/sign-in", undefined, { email: "awa@akpakpa.example", password: PASSWORD })).status).toBe(200);
  });
});

describe("GET /reports/onboarding", () => {
  const stepsOf = async (tenantId: string) => {
    const response = await call("GET", "/reports/onboarding", await tg.tenantToken(tenantId));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { steps: { step: string; done: boolean }[]; done: boolean };
    return { done: body.done, steps: Object.fromEntries(body.steps.map((step) => [step.step, step.done])) };
  };

  it("ticks each step from the tenant's own data, in order, and another tenant's do not count", async () => {
    const shop = await newTenant("Boutique Ganhi");
    const other = await newTenant("Boutique Voisine");
    expect(await stepsOf(shop)).toEqual({ done: false, steps: { credentials: false, testPayment: false, webhook: false, live: false } });

    // The other tenant does everything: nothing changes for this one.
    const otherToken = await tg.tenantToken(other);
    expect((await call("POST", "/webhooks", otherToken, { url: "https://example.com/hook" })).status).toBe(200);
    expect((await call("PATCH", `/tenants/${other}`, admin, { liveEnabled: true })).status).toBe(200);
    expect(await stepsOf(shop)).toEqual({ done: false, steps: { credentials: false, testPayment: false, webhook: false, live: false } });

    const token = await tg.tenantToken(shop);
    expect((await call("POST", "/webhooks", token, { url: "https://example.com/ganhi" })).status).toBe(200);
    expect((await call("PATCH", `/tenants/${shop}`, admin, { liveEnabled: true })).status).toBe(200);
    expect(await stepsOf(shop)).toEqual({ done: false, steps: { credentials: false, testPayment: false, webhook: true, live: true } });
  });
});
