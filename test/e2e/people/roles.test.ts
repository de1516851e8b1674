/**
 * Roles (issue 30 point 4), over real HTTP: the owner gives and changes roles but the owner's (the operator's),
 * a new role applies to a live session at its next call; the operator's staff sign in to the operator's side,
 * with two-factor sign-in required, `support` reading every shop and changing nothing, `admin` doing what an
 * admin token does; taking a person off the staff ends their session at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { totpCode } from "../../../src/services/people/two-factor.ts";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { Browser } from "../../support/people.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";
import { caller, enrolTwoFactor, join, type ShopRole, type StaffRole, signInAs, signInTeam } from "../../support/team.ts";

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let admin: string;
let call: ReturnType<typeof caller>;
let shop: string;
let team: Record<ShopRole | StaffRole, Browser>;

const LINK = { amount: 1500, description: "Commande 44", returnUrl: "https://boutique.example/merci" };

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" });
  base = (await tg.gateway.start()).url!;
  call = caller(base);
  admin = await tg.adminToken();
  shop = ((await (await call("POST", "/tenants", { token: admin }, { name: "Boutique Awa" })).json()) as { tenant: { id: string } }).tenant.id;
  team = await signInTeam(base, sink, admin, shop, "awa.example");
}, 120_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

describe("a shop's roles", () => {
  it("the owner changes a role, which a live session takes at its next call", async () => {
    await expectError(await call("POST", "/payment-links", { browser: team.viewer }, LINK), 403, "forbidden");
    const changed = await call("PATCH", `/tenants/${shop}/people/${team.viewer.me.id}`, { browser: team.owner }, { role: "finance" });
    expect(await changed.json()).toEqual({ id: team.viewer.me.id, role: "finance", previousRole: "viewer" });
    expect((await call("POST", "/payment-links", { browser: team.viewer }, LINK)).status).toBe(200);
    const people = (await (await call("GET", `/tenants/${shop}/people`, { browser: team.owner })).json()) as { data: { id: string; role: string }[] };
    expect(people.data.find((p) => p.id === team.viewer.me.id)?.role).toBe("finance");
    expect((await call("PATCH", `/tenants/${shop}/people/${team.viewer.me.id}`, { browser: team.owner }, { role: "viewer" })).status).toBe(200);
    await expectError(await call("POST", "/payment-links", { browser: team.viewer }, LINK), 403, "forbidden");
  });

  it("only an operator makes an owner, changes an owner's role or removes an owner", async () => {
    const owner = team.owner;
    await expectError(await call("PATCH", `/tenants/${shop}/people/${team.developer.me.id}`, { browser: owner }, { role: "owner" }), 403, "forbidden");
    await expectError(await call("PATCH", `/tenants/${shop}/people/${owner.me.id}`, { browser: owner }, { role: "viewer" }), 403, "forbidden");
    await expectError(await call("DELETE", `/tenants/${shop}/people/${owner.me.id}`, { browser: owner }), 403, "forbidden");
    await expectError(await call("POST", `/tenants/${shop}/invitations`, { browser: owner }, { email: "co@awa.example", role: "owner" }), 403, "forbidden");
    // Nothing changed by the refused removal.
    expect((await call("GET", "/people/me", { browser: owner })).status).toBe(200);
    await expectError(await call("PATCH", `/tenants/${shop}/people/per_nobody`, { browser: owner }, { role: "viewer" }), 404, "not_found");
    // A developer is not the owner: the team is not theirs.
    await expectError(await call("PATCH", `/tenants/${shop}/people/${team.finance.me.id}`, { browser: team.developer }, { role: "viewer" }), 403, "forbidden");

    const promoted = await call("PATCH", `/tenants/${shop}/people/${team.developer.me.id}`, { token: admin }, { role: "owner" });
    expect(await promoted.json()).toMatchObject({ role: "owner", previousRole: "developer" });
    expect((await call("PATCH", `/tenants/${shop}/people/${team.developer.me.id}`, { token: admin }, { role: "developer" })).status).toBe(200);
  });

  it("a shop's person reaches none of the operator's calls", async () => {
    for (const path of ["/tenants", "/admin/staff", "/admin/audit-log", "/admin/payments/stuck"])
      await expectError(await call("GET", path, { browser: team.owner }), 403, "forbidden");
  });
});

describe("the operator's staff", () => {
  it("sign in to the operator's side, which requires two-factor sign-in before anything else", async () => {
    await join(base, sink, admin, "new@staff.example", "support", null);
    const fresh = await signInAs(base, "new@staff.example");
    const me = (await (await call("GET", "/people/me", { browser: fresh })).json()) as Record<string, unknown>;
    expect(me).toMatchObject({ tenantId: null, role: "support", operatorRole: "support", mustEnrol: true, shops: [] });
    await expectError(await call("GET", "/tenants", { browser: fresh }), 403, "forbidden");
    const secret = await enrolTwoFactor(base, fresh);
    expect((await call("GET", "/tenants", { browser: fresh })).status).toBe(200);
    // Their side always requires it: it cannot be turned off, even with a right code.
    await expectError(
      await call("POST", "/people/me/two-factor/disable", { browser: fresh }, { code: totpCode(secret, Date.now() + 30_000) }),
      409,
      "conflict",
    );
    expect(((await (await call("GET", "/people/me", { browser: fresh })).json()) as { twoFactorEnabled: boolean }).twoFactorEnabled).toBe(true);
  });

  it("support reads every shop and changes nothing; admin acts as an admin token", async () => {
    const support = team.support;
    expect((await call("GET", "/payments", { browser: support, tenantId: shop })).status).toBe(200);
    expect((await call("GET", `/tenants/${shop}/people`, { browser: support })).status).toBe(200);
    expect((await call("GET", "/admin/payments/stuck", { browser: support })).status).toBe(200);
    await expectError(await call("POST", "/payment-links", { browser: support, tenantId: shop }, LINK), 403, "forbidden");
    await expectError(await call("POST", "/tenants", { browser: support }, { name: "Nope" }), 403, "forbidden");
    await expectError(await call("PATCH", `/tenants/${shop}`, { browser: support }, { name: "Nope" }), 403, "forbidden");
    // A shop's call on the operator's side names the shop, as with an admin token.
    await expectError(await call("GET", "/payments", { browser: support }), 400, "validation_failed");

    const created = await call("POST", "/tenants", { browser: team.admin }, { name: "Chez Kofi" });
    expect(created.status).toBe(200);
    expect((await call("POST", "/payment-links", { browser: team.admin, tenantId: shop }, LINK)).status).toBe(200);
    // The admin token stays for programs.
    expect((await call("GET", "/tenants", { token: admin })).status).toBe(200);
  });

  it("are listed, and taken off the staff with their sessions ended at once", async () => {
    const staff = (await (await call("GET", "/admin/staff", { browser: team.admin })).json()) as { data: { id: string; email: string; role: string }[] };
    expect(staff.data.map((p) => [p.email, p.role])).toEqual([
      ["admin@staff.awa.example", "admin"],
      ["new@staff.example", "support"],
      ["support@staff.awa.example", "support"],
    ]);
    await expectError(await call("DELETE", `/admin/staff/${team.admin.me.id}`, { browser: team.support }), 403, "forbidden");
    expect((await call("DELETE", `/admin/staff/${team.support.me.id}`, { browser: team.admin })).status).toBe(200);
    await expectError(await call("GET", "/tenants", { browser: team.support }), 401, "unauthorized");
    await expectError(
      await call("POST", "/admin/staff/invitations", { browser: team.admin }, { email: "admin@staff.awa.example", role: "support" }),
      409,
      "conflict",
    );
  });
});
