/**
 * People (issue 30 point 1), over real HTTP with the workers running and e-mail leaving by SMTP to a local sink:
 * an operator invites a shop's owner, the shop invites members, the e-mailed single-use link sets a password
 * (refused when short or common), a person of shop A joins shop B with the password they have, passwords are
 * reset by e-mailed link, and no shop reaches another's invitations or people.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { verifyPassword } from "../../../src/services/people/passwords.ts";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { linkTokenTo } from "../../support/people.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";
import { waitUntil } from "../../support/wait.ts";

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let admin: string;
let shopA: { id: string; token: string };
let shopB: { id: string; token: string };
let clockOffsetMs = 0;

const call = (method: string, path: string, token: string | null, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** The link token of the newest e-mail to `address` with a link to `page`, once `count` such e-mails arrived. */
const linkTo = (address: string, page: "invitation" | "reset-password", count = 1) => linkTokenTo(sink, address, page, count);

async function createShop(name: string): Promise<{ id: string; token: string }> {
  const created = (await (await call("POST", "/tenants", admin, { name })).json()) as { tenant: { id: string } };
  return { id: created.tenant.id, token: await tg.tenantToken(created.tenant.id) };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, MAIL_FROM: "Passerelle <team@passerelle.test>" }, { now: () => new Date(Date.now() + clockOffsetMs) });
  base = (await tg.gateway.start()).url!;
  admin = await tg.adminToken();
  shopA = await createShop("Boutique Awa");
  shopB = await createShop("Chez Kofi");
}, 60_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

describe("invitations", () => {
  it("an operator invites the owner: a single-use link by e-mail sets a password (short and common ones refused)", async () => {
    const invited = await call("POST", `/tenants/${shopA.id}/invitations`, admin, { email: "Awa@Boutique.Example", role: "owner" });
    expect(invited.status).toBe(200);
    const invitation = (await invited.json()) as { id: string; email: string; role: string; invitedBy: string; expiresAt: string };
    expect(invitation).toMatchObject({ email: "awa@boutique.example", role: "owner", invitedBy: "operator" });
    expect(new Date(invitation.expiresAt).getTime() - Date.now()).toBeGreaterThan(6 * 24 * 3_600_000);

    const token = await linkTo("awa@boutique.example", "invitation");
    const mail = sink.to("awa@boutique.example")[0]!;
    expect(mail.subject).toBe("You are invited to Boutique Awa on Passerelle");
    expect(mail.raw).toContain("From: Passerelle <team@passerelle.test>");
    // Only the token's HMAC is stored, and the sent message's body is gone from the outbox.
    const stored = await tg.database.db.selectFrom("invitations").selectAll().where("id", "=", invitation.id).executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toContain(token);
    const outbox = await waitUntil(
      async () => {
        const rows = await tg.database.db.selectFrom("outbox_emails").selectAll().where("recipient", "=", "awa@boutique.example").execute();
        return rows.every((r) => r.status === "sent") ? rows : undefined;
      },
      { what: "the outbox row marked sent" },
    );
    expect(outbox.map((r) => r.sealed_body)).toEqual([null]);

    const pending = (await (await call("GET", `/tenants/${shopA.id}/invitations`, admin)).json()) as { data: { id: string }[] };
    expect(pending.data.map((i) => i.id)).toEqual([invitation.id]);

    const short = await expectError(await call("POST", "/people/invitations/accept", null, { token, password: "short" }), 400, "validation_failed");
    expect(short.message).toEqual(["password must have at least 10 characters"]);
    const common = await expectError(await call("POST", "/people/invitations/accept", null, { token, password: "Password123" }), 400, "validation_failed");
    expect(common.message).toEqual(["password is one of the most common passwords: choose another"]);
    const accepted = await call("POST", "/people/invitations/accept", null, { token, password: "baobab sous la pluie", name: "Awa Diop" });
    expect(accepted.status).toBe(200);
    const person = (await accepted.json()) as { personId: string; tenantId: string; role: string };
    expect(person).toMatchObject({ email: "awa@boutique.example", tenantId: shopA.id, role: "owner" });
    expect(person.personId).toStartWith("per_");

    // Single use.
    await expectError(await call("POST", "/people/invitations/accept", null, { token, password: "baobab sous la pluie" }), 404, "not_found");
    const people = (await (await call("GET", `/tenants/${shopA.id}/people`, shopA.token)).json()) as { data: unknown[] };
    expect(people.data).toEqual([{ id: person.personId, email: "awa@boutique.example", name: "Awa Diop", role: "owner", joinedAt: expect.any(String) }]);
    expect(((await (await call("GET", `/tenants/${shopA.id}/invitations`, admin)).json()) as { data: unknown[] }).data).toEqual([]);
    const row = await tg.database.db.selectFrom("people").select("password_hash").where("id", "=", person.personId).executeTakeFirstOrThrow();
    expect(row.password_hash).toStartWith("$argon2id$");
  });

  it("the shop invites members but not owners; a new invitation of the same address replaces the pending one", async () => {
    await expectError(await call("POST", `/tenants/${shopA.id}/invitations`, shopA.token, { email: "kwame@example.com", role: "owner" }), 403, "forbidden");
    expect((await call("POST", `/tenants/${shopA.id}/invitations`, shopA.token, { email: "kwame@example.com" })).status).toBe(200);
    const first = await linkTo("kwame@example.com", "invitation");
    const again = (await (await call("POST", `/tenants/${shopA.id}/invitations`, shopA.token, { email: "kwame@example.com" })).json()) as { invitedBy: string };
    expect(again.invitedBy).toBe(`tenant:${shopA.id}`);
    const second = await linkTo("kwame@example.com", "invitation", 2);
    expect(second).not.toBe(first);
    await expectError(await call("POST", "/people/invitations/accept", null, { token: first, password: "kente bleu et or 7" }), 404, "not_found");
    expect((await call("POST", "/people/invitations/accept", null, { token: second, password: "kente bleu et or 7" })).status).toBe(200);
    await expectError(await call("POST", `/tenants/${shopA.id}/invitations`, shopA.token, { email: "KWAME@example.com" }), 409, "conflict");
  });

  it("a person of one shop joins another with the password they have (a wrong one is 401)", async () => {
    expect((await call("POST", `/tenants/${shopB.id}/invitations`, admin, { email: "awa@boutique.example", role: "finance" })).status).toBe(200);
    const token = await linkTo("awa@boutique.example", "invitation", 2);
    await expectError(await call("POST", "/people/invitations/accept", null, { token, password: "another long password" }), 401, "unauthorized");
    const joined = await call("POST", "/people/invitations/accept", null, { token, password: "baobab sous la pluie" });
    expect(joined.status).toBe(200);
    expect(await joined.json()).toMatchObject({ tenantId: shopB.id, role: "finance" });
  });

  it("an expired or revoked link is refused", async () => {
    await call("POST", `/tenants/${shopB.id}/invitations`, shopB.token, { email: "late@example.com" });
    const late = await linkTo("late@example.com", "invitation");
    const revoked = (await (await call("POST", `/tenants/${shopB.id}/invitations`, shopB.token, { email: "gone@example.com" })).json()) as { id: string };
    const gone = await linkTo("gone@example.com", "invitation");
    expect((await call("DELETE", `/tenants/${shopB.id}/invitations/${revoked.id}`, shopB.token)).status).toBe(200);
    await expectError(await call("POST", "/people/invitations/accept", null, { token: gone, password: "a fine long password" }), 404, "not_found");
    clockOffsetMs = 7 * 24 * 3_600_000 + 1_000;
    try {
      await expectError(await call("POST", "/people/invitations/accept", null, { token: late, password: "a fine long password" }), 404, "not_found");
    } finally {
      clockOffsetMs = 0;
    }
  });

  it("a shop reaches neither another shop's invitations nor its people", async () => {
    const invitation = (await (await call("POST", `/tenants/${shopA.id}/invitations`, shopA.token, { email: "ines@example.com" })).json()) as { id: string };
    const people = (await (await call("GET", `/tenants/${shopA.id}/people`, admin)).json()) as { data: { id: string; email: string }[] };
    for (const [method, path] of [
      ["GET", `/tenants/${shopA.id}/invitations`],
      ["GET", `/tenants/${shopA.id}/people`],
      ["POST", `/tenants/${shopA.id}/invitations`],
      ["DELETE", `/tenants/${shopA.id}/invitations/${invitation.id}`],
      ["DELETE", `/tenants/${shopA.id}/people/${people.data[0]!.id}`],
    ] as const)
      await expectError(await call(method, path, shopB.token, method === "POST" ? { email: "x@example.com" } : undefined), 404, "not_found");
    // Shop B's own paths with shop A's ids: as if they did not exist.
    await expectError(await call("DELETE", `/tenants/${shopB.id}/invitations/${invitation.id}`, shopB.token), 404, "not_found");
    const kwame = people.data.find((p) => p.email === "kwame@example.com")!;
    await expectError(await call("DELETE", `/tenants/${shopB.id}/people/${kwame.id}`, shopB.token), 404, "not_found");
    const stillA = (await (await call("GET", `/tenants/${shopA.id}/invitations`, admin)).json()) as { data: { id: string }[] };
    expect(stillA.data.map((i) => i.id)).toContain(invitation.id);
  });
});

describe("password reset", () => {
  it("an e-mailed single-use link sets a new password; an unknown address gets the same answer and no e-mail", async () => {
    const unknown = await call("POST", "/people/password-reset", null, { email: "nobody@example.com" });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({ accepted: true });
    const asked = await call("POST", "/people/password-reset", null, { email: "AWA@boutique.example" });
    expect(await asked.json()).toEqual({ accepted: true });
    const token = await linkTo("awa@boutique.example", "reset-password");
    expect(sink.to("awa@boutique.example").at(-1)!.subject).toBe("Your Passerelle password");
    expect(sink.to("nobody@example.com")).toEqual([]);

    await expectError(await call("POST", "/people/password-reset/confirm", null, { token, password: "qwertyuiop" }), 400, "validation_failed");
    expect((await call("POST", "/people/password-reset/confirm", null, { token, password: "le fleuve Niger coule" })).status).toBe(200);
    await expectError(await call("POST", "/people/password-reset/confirm", null, { token, password: "le fleuve Niger coule" }), 404, "not_found");
    const row = await tg.database.db.selectFrom("people").select("password_hash").where("email", "=", "awa@boutique.example").executeTakeFirstOrThrow();
    expect(await verifyPassword("le fleuve Niger coule", row.password_hash!)).toBe(true);
    expect(await verifyPassword("baobab sous la pluie", row.password_hash!)).toBe(false);
  });

  it("sends at most three links an hour to one person", async () => {
    const before = sink.to("kwame@example.com").filter((m) => m.subject === "Your Passerelle password").length;
    for (let i = 0; i < 5; i++) expect((await call("POST", "/people/password-reset", null, { email: "kwame@example.com" })).status).toBe(200);
    await linkTo("kwame@example.com", "reset-password", 3);
    const rows = await tg.database.db
      .selectFrom("outbox_emails")
      .select("id")
      .where("recipient", "=", "kwame@example.com")
      .where("subject", "=", "Your Passerelle password")
      .execute();
    expect(before).toBe(0);
    expect(rows.length).toBe(3);
  });
});

describe("removing a person", () => {
  it("the shop removes a member, who keeps their other shops", async () => {
    const people = (await (await call("GET", `/tenants/${shopB.id}/people`, shopB.token)).json()) as { data: { id: string; email: string }[] };
    const awa = people.data.find((p) => p.email === "awa@boutique.example")!;
    const removed = await call("DELETE", `/tenants/${shopB.id}/people/${awa.id}`, shopB.token);
    expect(removed.status).toBe(200);
    expect(((await (await call("GET", `/tenants/${shopB.id}/people`, shopB.token)).json()) as { data: unknown[] }).data).toEqual([]);
    const inA = (await (await call("GET", `/tenants/${shopA.id}/people`, shopA.token)).json()) as { data: { id: string }[] };
    expect(inA.data.map((p) => p.id)).toContain(awa.id);
    await expectError(await call("DELETE", `/tenants/${shopB.id}/people/${awa.id}`, shopB.token), 404, "not_found");
  });
});
