/**
 * Signing in to the dashboard (issue 30 points 2 and 3), over real HTTP: e-mail, password and two-factor code
 * for an `HttpOnly; Secure; SameSite=Strict` session cookie that works on REST and `/trpc` as the shop's token,
 * with the session's CSRF token on every change; sessions listed and ended, a removed person signed out at once;
 * TOTP enrolment with recovery codes, an owner requiring it for the shop; the account locked after failures.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { totpCode } from "../../../src/services/people/two-factor.ts";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { type Browser, cookieOf, linkTokenTo } from "../../support/people.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let admin: string;
let shopA: string;
let shopB: string;

const PASSWORD = "baobab sous la pluie";

const call = (method: string, path: string, auth: { token?: string; browser?: Browser; csrf?: boolean } = {}, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: {
      ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
      ...(auth.browser ? { cookie: auth.browser.cookie, ...(auth.csrf === false ? {} : { "x-csrf-token": auth.browser.csrfToken }) } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function join(tenantId: string, email: string, role: "owner" | "developer" | "finance" | "viewer"): Promise<void> {
  const count = sink.to(email).length + 1;
  expect((await call("POST", `/tenants/${tenantId}/invitations`, { token: admin }, { email, role })).status).toBe(200);
  const token = await linkTokenTo(sink, email, "invitation", count);
  expect((await call("POST", "/people/invitations/accept", {}, { token, password: PASSWORD })).status).toBe(200);
}

async function signIn(email: string, extra: { code?: string; tenantId?: string; password?: string } = {}): Promise<Browser> {
  const response = await call("POST", "/people/sign-in", {}, { email, password: extra.password ?? PASSWORD, ...extra });
  expect(response.status === 200 ? "signed in" : await response.json()).toBe("signed in");
  const me = (await response.json()) as Browser["me"] & { csrfToken: string };
  return { cookie: cookieOf(response), csrfToken: me.csrfToken, me };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" });
  base = (await tg.gateway.start()).url!;
  admin = await tg.adminToken();
  const create = async (name: string) => ((await (await call("POST", "/tenants", { token: admin }, { name })).json()) as { tenant: { id: string } }).tenant.id;
  shopA = await create("Boutique Awa");
  shopB = await create("Chez Kofi");
  await join(shopA, "owner@a.example", "owner");
  await join(shopA, "member@a.example", "viewer");
  await join(shopB, "owner@b.example", "owner");
}, 60_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

describe("POST /people/sign-in", () => {
  it("answers a wrong password and an unknown address alike, and sets an HttpOnly, Secure, SameSite=Strict cookie on success", async () => {
    const wrong = await expectError(await call("POST", "/people/sign-in", {}, { email: "owner@a.example", password: "not the password" }), 401, "unauthorized");
    const unknown = await expectError(await call("POST", "/people/sign-in", {}, { email: "nobody@a.example", password: PASSWORD }), 401, "unauthorized");
    expect(wrong.message).toBe(unknown.message);
    const response = await call("POST", "/people/sign-in", {}, { email: "OWNER@a.example", password: PASSWORD });
    expect(response.status).toBe(200);
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^passerelle_session=pss_[A-Za-z0-9_-]+; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Strict$/);
    const me = (await response.json()) as { tenantId: string; role: string; shops: unknown[]; csrfToken: string };
    expect(me).toMatchObject({
      tenantId: shopA,
      role: "owner",
      shops: [{ tenantId: shopA, storeName: "Boutique Awa", role: "owner", requireTwoFactor: false }],
    });
    // Only the HMAC of the cookie's secret is stored.
    const secret = cookie.split(";")[0]!.split("=")[1]!;
    const rows = await tg.database.db.selectFrom("sessions").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(secret);
    await expectError(await call("POST", "/people/sign-in", {}, { email: "owner@a.example", password: PASSWORD, tenantId: shopB }), 403, "forbidden");
  });

  it("the session acts as its shop's token on REST and /trpc, and reaches no other shop", async () => {
    const owner = await signIn("owner@a.example");
    const people = await call("GET", `/tenants/${shopA}/people`, { browser: owner });
    expect(people.status).toBe(200);
    expect(((await people.json()) as { data: { email: string }[] }).data.map((p) => p.email)).toEqual(["owner@a.example", "member@a.example"]);
    expect((await call("GET", "/payments", { browser: owner })).status).toBe(200);
    const whoami = (await (await fetch(`${base}/trpc/auth.whoami`, { headers: { cookie: owner.cookie } })).json()) as {
      result: { data: { sub: string; tenantId: string } };
    };
    expect(whoami.result.data).toMatchObject({ sub: owner.me.id, tenantId: shopA });
    for (const path of [`/tenants/${shopB}/people`, `/tenants/${shopB}/invitations`, `/tenants/${shopB}`])
      await expectError(await call("GET", path, { browser: owner }), 404, "not_found");
    await expectError(await call("POST", `/tenants/${shopB}/invitations`, { browser: owner }, { email: "x@b.example" }), 404, "not_found");
  });

  it("refuses a change made with the cookie but without the session's CSRF token, on REST and /trpc", async () => {
    const owner = await signIn("owner@a.example");
    await expectError(await call("POST", `/tenants/${shopA}/invitations`, { browser: owner, csrf: false }, { email: "new@a.example" }), 403, "forbidden");
    const viaTrpc = await fetch(`${base}/trpc/people.invite`, {
      method: "POST",
      headers: { cookie: owner.cookie, "content-type": "application/json", "x-csrf-token": "forged" },
      body: JSON.stringify({ tenant_id: shopA, email: "new@a.example" }),
    });
    expect(viaTrpc.status).toBe(403);
    expect((await call("POST", `/tenants/${shopA}/invitations`, { browser: owner }, { email: "new@a.example" })).status).toBe(200);
    // A member is not the owner: the shop's people are the owner's to manage.
    const member = await signIn("member@a.example");
    await expectError(await call("POST", `/tenants/${shopA}/invitations`, { browser: member }, { email: "other@a.example" }), 403, "forbidden");
  });
});

describe("sessions", () => {
  it("a person lists their sessions and ends one; sign-out ends the current one and clears the cookie", async () => {
    const first = await signIn("owner@b.example");
    const second = await signIn("owner@b.example");
    const list = (await (await call("GET", "/people/me/sessions", { browser: second })).json()) as {
      data: { id: string; current: boolean; address: string }[];
    };
    expect(list.data.length).toBe(2);
    expect(list.data.filter((s) => s.current).length).toBe(1);
    expect(list.data[0]!.address).toBe("127.0.0.1");
    const firstId = list.data.find((s) => !s.current)!.id;
    // Another person cannot end it.
    const other = await signIn("owner@a.example");
    await expectError(await call("DELETE", `/people/me/sessions/${firstId}`, { browser: other }), 404, "not_found");
    expect((await call("DELETE", `/people/me/sessions/${firstId}`, { browser: second })).status).toBe(200);
    await expectError(await call("GET", "/people/me", { browser: first }), 401, "unauthorized");
    const out = await call("POST", "/people/sign-out", { browser: second });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("passerelle_session=; Path=/; Max-Age=0");
    await expectError(await call("GET", `/tenants/${shopB}/people`, { browser: second }), 401, "unauthorized");
  });

  it("removing a person from the shop ends their session in it at once", async () => {
    await join(shopA, "leaving@a.example", "viewer");
    const leaving = await signIn("leaving@a.example");
    expect((await call("GET", "/payments", { browser: leaving })).status).toBe(200);
    const owner = await signIn("owner@a.example");
    expect((await call("DELETE", `/tenants/${shopA}/people/${leaving.me.id}`, { browser: owner })).status).toBe(200);
    await expectError(await call("GET", "/payments", { browser: leaving }), 401, "unauthorized");
    const ended = await tg.database.db.selectFrom("sessions").select("ended_at").where("person_id", "=", leaving.me.id).execute();
    expect(ended.every((s) => s.ended_at !== null)).toBe(true);
  });
});

describe("two-factor sign-in", () => {
  it("enrols with a QR code and a first code, then signs in with a code or a single-use recovery code", async () => {
    await join(shopB, "careful@b.example", "viewer");
    const browser = await signIn("careful@b.example");
    const enrolment = (await (await call("POST", "/people/me/two-factor", { browser })).json()) as { secret: string; otpauthUrl: string; qrSvg: string };
    expect(enrolment.otpauthUrl).toStartWith("otpauth://totp/Passerelle:careful%40b.example?");
    expect(enrolment.qrSvg).toStartWith("<svg");
    await expectError(await call("POST", "/people/me/two-factor/confirm", { browser }, { code: "000000" }), 401, "unauthorized");
    const confirmed = await call("POST", "/people/me/two-factor/confirm", { browser }, { code: totpCode(enrolment.secret, Date.now()) });
    const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
    expect(recoveryCodes.length).toBe(10);
    expect(new Set(recoveryCodes).size).toBe(10);

    const noCode = await expectError(await call("POST", "/people/sign-in", {}, { email: "careful@b.example", password: PASSWORD }), 401, "unauthorized");
    expect(String(noCode.message)).toContain("two-factor code");
    await expectError(await call("POST", "/people/sign-in", {}, { email: "careful@b.example", password: PASSWORD, code: "123456" }), 401, "unauthorized");
    // A code works once: the one that confirmed the enrolment is refused; the next step's (within the drift allowed) is not.
    await expectError(
      await call("POST", "/people/sign-in", {}, { email: "careful@b.example", password: PASSWORD, code: totpCode(enrolment.secret, Date.now() - 30_000) }),
      401,
      "unauthorized",
    );
    const next = totpCode(enrolment.secret, Date.now() + 30_000);
    await signIn("careful@b.example", { code: next });
    await expectError(await call("POST", "/people/sign-in", {}, { email: "careful@b.example", password: PASSWORD, code: next }), 401, "unauthorized");
    await signIn("careful@b.example", { code: recoveryCodes[0]! });
    await expectError(
      await call("POST", "/people/sign-in", {}, { email: "careful@b.example", password: PASSWORD, code: recoveryCodes[0]! }),
      401,
      "unauthorized",
    );
    const me = (await (await call("GET", "/people/me", { browser })).json()) as { twoFactorEnabled: boolean; recoveryCodesLeft: number };
    expect(me).toMatchObject({ twoFactorEnabled: true, recoveryCodesLeft: 9 });
    const log = (await (await call("GET", "/people/me/sign-ins", { browser })).json()) as { data: { outcome: string; address: string }[] };
    expect(log.data.slice(0, 7).map((s) => s.outcome)).toEqual([
      "wrong_code",
      "signed_in",
      "wrong_code",
      "signed_in",
      "wrong_code",
      "wrong_code",
      "code_needed",
    ]);
  });

  it("an owner requires it for the shop: a person without it can only set it up, and cannot turn it off", async () => {
    await join(shopB, "relaxed@b.example", "viewer");
    const member = await signIn("relaxed@b.example");
    await expectError(await call("PUT", `/tenants/${shopB}/two-factor-policy`, { browser: member }, { requireTwoFactor: true }), 403, "forbidden");
    const owner = await signIn("owner@b.example");
    expect(await (await call("PUT", `/tenants/${shopB}/two-factor-policy`, { browser: owner }, { requireTwoFactor: true })).json()).toEqual({
      requireTwoFactor: true,
    });
    // Shop A's owner does not set shop B's rule.
    const ownerA = await signIn("owner@a.example");
    await expectError(await call("PUT", `/tenants/${shopB}/two-factor-policy`, { browser: ownerA }, { requireTwoFactor: false }), 404, "not_found");

    const session = await signIn("relaxed@b.example");
    expect(session.me.mustEnrol).toBe(true);
    await expectError(await call("GET", "/payments", { browser: session }), 403, "forbidden");
    const enrolment = (await (await call("POST", "/people/me/two-factor", { browser: session })).json()) as { secret: string };
    expect((await call("POST", "/people/me/two-factor/confirm", { browser: session }, { code: totpCode(enrolment.secret, Date.now()) })).status).toBe(200);
    expect((await call("GET", "/payments", { browser: session })).status).toBe(200);
    await expectError(
      await call("POST", "/people/me/two-factor/disable", { browser: session }, { code: totpCode(enrolment.secret, Date.now() + 30_000) }),
      409,
      "conflict",
    );
  });
});

describe("failed sign-ins", () => {
  it("locks the account after five failures in a row, even for the right password, and records each attempt", async () => {
    await join(shopA, "target@a.example", "viewer");
    for (let i = 0; i < 5; i++)
      await expectError(await call("POST", "/people/sign-in", {}, { email: "target@a.example", password: `guess number ${i}` }), 401, "unauthorized");
    const locked = await call("POST", "/people/sign-in", {}, { email: "target@a.example", password: PASSWORD });
    await expectError(locked.clone(), 429, "rate_limited");
    const seconds = Number(locked.headers.get("retry-after"));
    expect(seconds).toBeGreaterThan(50);
    expect(seconds).toBeLessThanOrEqual(60);
    const rows = await tg.database.db.selectFrom("sign_ins").select("outcome").where("email", "=", "target@a.example").orderBy("id").execute();
    expect(rows.map((r) => r.outcome)).toEqual(["wrong_password", "wrong_password", "wrong_password", "wrong_password", "wrong_password", "locked"]);
    // Six argon2id verifications and a member's set-up: seconds on a loaded machine.
  }, 60_000);
});
