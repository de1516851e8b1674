/**
 * A signed-in person changes their password (issue 30 point 6), over real HTTP: the current one required, the
 * rules of a new one, the person's other sessions ended and an earlier reset link dead, in one change; a wrong
 * current password counted toward the account's lock; the change and the refusals in the shop's audit log, both
 * passwords redacted; two changes racing leave one of their passwords.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { type Browser, cookieOf, linkTokenTo } from "../../support/people.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let admin: string;
let shop: string;
let owner: Browser;

const PASSWORD = "baobab sous la pluie";
const NEW_PASSWORD = "fromager au bord du lac";

const call = (method: string, path: string, auth: { token?: string; browser?: Browser } = {}, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: {
      ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
      ...(auth.browser ? { cookie: auth.browser.cookie, "x-csrf-token": auth.browser.csrfToken } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function join(email: string, role: "owner" | "finance"): Promise<void> {
  const count = sink.to(email).length + 1;
  expect((await call("POST", `/tenants/${shop}/invitations`, { token: admin }, { email, role })).status).toBe(200);
  const token = await linkTokenTo(sink, email, "invitation", count);
  expect((await call("POST", "/people/invitations/accept", {}, { token, password: PASSWORD })).status).toBe(200);
}

async function signIn(email: string, password = PASSWORD): Promise<Browser> {
  const response = await call("POST", "/people/sign-in", {}, { email, password });
  expect(response.status === 200 ? "signed in" : await response.json()).toBe("signed in");
  const me = (await response.json()) as Browser["me"] & { csrfToken: string };
  return { cookie: cookieOf(response), csrfToken: me.csrfToken, me };
}

/** The refusal's status, code and a part of its message. */
async function expectRefusal(response: Response, status: number, code: string, saying: string): Promise<void> {
  const body = await expectError(response, status, code);
  expect(JSON.stringify(body.message)).toContain(saying);
}

const change = (browser: Browser, currentPassword: string, newPassword: string) =>
  call("POST", "/people/me/password", { browser }, { currentPassword, newPassword });

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" });
  base = (await tg.gateway.start()).url!;
  admin = await tg.adminToken();
  shop = ((await (await call("POST", "/tenants", { token: admin }, { name: "Boutique Awa" })).json()) as { tenant: { id: string } }).tenant.id;
  await join("owner@awa.example", "owner");
  owner = await signIn("owner@awa.example");
}, 60_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

describe("POST /people/me/password", () => {
  it("needs the current password, keeps the asking session, ends the others and an earlier reset link; the old password stops working", async () => {
    await join("kofi@awa.example", "finance");
    const here = await signIn("kofi@awa.example");
    const elsewhere = await signIn("kofi@awa.example");
    expect((await call("POST", "/people/password-reset", {}, { email: "kofi@awa.example" })).status).toBe(200);
    const resetToken = await linkTokenTo(sink, "kofi@awa.example", "reset-password");

    await expectRefusal(await change(here, "not my password", NEW_PASSWORD), 401, "unauthorized", "current password is wrong");
    await expectRefusal(await change(here, PASSWORD, "short"), 400, "validation_failed", "at least 10 characters");
    await expectRefusal(await change(here, PASSWORD, "password1234"), 400, "validation_failed", "most common passwords");
    await expectRefusal(await change(here, PASSWORD, PASSWORD), 400, "validation_failed", "differ from the current password");
    // Without the session's CSRF token, as a page of another site would send it: refused before anything.
    const noCsrf = await fetch(`${base}/people/me/password`, {
      method: "POST",
      headers: { cookie: here.cookie, "content-type": "application/json" },
      body: JSON.stringify({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD }),
    });
    await expectError(noCsrf, 403, "forbidden");

    const changed = await change(here, PASSWORD, NEW_PASSWORD);
    expect(await changed.json()).toEqual({ sessionsEnded: 1 });
    expect((await call("GET", "/people/me", { browser: here })).status).toBe(200);
    await expectError(await call("GET", "/people/me", { browser: elsewhere }), 401, "unauthorized");
    await expectError(await call("POST", "/people/sign-in", {}, { email: "kofi@awa.example", password: PASSWORD }), 401, "unauthorized");
    await signIn("kofi@awa.example", NEW_PASSWORD);
    await expectError(await call("POST", "/people/password-reset/confirm", {}, { token: resetToken, password: "une autre encore" }), 404, "not_found");
  }, 60_000);

  it("counts a wrong current password toward the account's lock, as a failed sign-in", async () => {
    await join("ama@awa.example", "finance");
    const session = await signIn("ama@awa.example");
    for (let i = 0; i < 5; i++) await expectError(await change(session, `guess number ${i}`, NEW_PASSWORD), 401, "unauthorized");
    await expectError(await change(session, PASSWORD, NEW_PASSWORD), 429, "rate_limited");
    await expectError(await call("POST", "/people/sign-in", {}, { email: "ama@awa.example", password: PASSWORD }), 429, "rate_limited");
  }, 60_000);

  it("leaves the account with one of two new passwords when two changes race with the same current one", async () => {
    await join("yao@awa.example", "finance");
    const session = await signIn("yao@awa.example");
    const answers = await Promise.all([change(session, PASSWORD, "premier nouveau mot"), change(session, PASSWORD, "second nouveau mot")]);
    const statuses = answers.map((a) => a.status).sort();
    // Both may pass the check before either writes: the last write wins, and it is one of the two.
    const signedIn = await Promise.all(
      ["premier nouveau mot", "second nouveau mot"].map(
        async (password) => (await call("POST", "/people/sign-in", {}, { email: "yao@awa.example", password })).status,
      ),
    );
    expect(signedIn.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 401)).toBe(true);
  }, 60_000);

  it("is in the shop's audit log: the change and the refusal, the passwords redacted, never stored", async () => {
    const entries = (await (await call("GET", "/audit-log?action=me.changePassword&limit=100", { browser: owner })).json()) as {
      data: { outcome: string; input: Record<string, unknown>; actor: { id: string } }[];
    };
    const outcomes = entries.data.map((e) => e.outcome);
    expect(outcomes).toContain("success");
    expect(outcomes).toContain("unauthorized");
    expect(outcomes).toContain("validation_failed");
    for (const entry of entries.data) expect(entry.input).toMatchObject({ currentPassword: "[redacted]", newPassword: "[redacted]" });
    const stored = JSON.stringify(await tg.database.db.selectFrom("audit_log").selectAll().execute());
    for (const secret of [PASSWORD, NEW_PASSWORD, "not my password"]) expect(stored).not.toContain(secret);
  });

  it("is a person's own call: an API key is refused", async () => {
    const key = ((await (await call("POST", `/tenants/${shop}/api-keys`, { token: admin }, { name: "Caisse" })).json()) as { secret: string }).secret;
    const refused = await call("POST", "/people/me/password", { token: key }, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(refused.status).toBe(401);
  });
});
