/**
 * The audit log (issue 30 point 5), over real HTTP: who (a person and their role, an API key), what (the
 * procedure, its targets, its input with secrets redacted, a role's before and after), from where, and the outcome
 * — a finance member's change and a viewer's refusal alike; a shop reads its own entries only, the operator every
 * shop's; paging and filters; the chain under concurrent calls, checked by the invariants; the trigger refusing
 * UPDATE, DELETE and TRUNCATE; retention cutting a chain at its start, which then goes on; a changed entry found.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { audit } from "../../../src/services/audit/audit.ts";
import { auditLogChainBreaks } from "../../../src/services/audit-log/mod.ts";
import { pruneOldRows } from "../../../src/services/retention/mod.ts";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { Browser } from "../../support/people.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";
import { caller, join, type ShopRole, type StaffRole, signInAs, signInTeam } from "../../support/team.ts";

interface Entry {
  id: string;
  at: string;
  tenantId: string | null;
  actorType: string;
  actorId: string;
  actorRole: string | null;
  action: string;
  targets: string[];
  input: Record<string, unknown> | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  outcome: string;
  address: string;
  userAgent: string | null;
  chain: string;
  seq: number;
  prevHash: string;
  hash: string;
}
interface Page {
  data: Entry[];
  nextCursor: string | null;
}

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let admin: string;
let call: ReturnType<typeof caller>;
let shopA: { id: string; key: string; keyId: string };
let shopB: { id: string; key: string; keyId: string };
let team: Record<ShopRole | StaffRole, Browser>;
let ownerB: Browser;
let clockOffsetMs = 0;

async function createShop(name: string): Promise<{ id: string; key: string; keyId: string }> {
  const created = (await (await call("POST", "/tenants", { token: admin }, { name })).json()) as {
    tenant: { id: string };
    apiKey: { id: string; secret: string };
  };
  return { id: created.tenant.id, key: created.apiKey.secret, keyId: created.apiKey.id };
}

const page = async (path: string, auth: Parameters<typeof call>[2]) => {
  const response = await call("GET", path, auth);
  expect(response.status === 200 ? "read" : await response.json()).toBe("read");
  return (await response.json()) as Page;
};

beforeAll(async () => {
  sink = await startSmtpSink();
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" }, { now: () => new Date(Date.now() + clockOffsetMs) });
  base = (await tg.gateway.start()).url!;
  call = caller(base);
  admin = await tg.adminToken();
  shopA = await createShop("Boutique Awa");
  shopB = await createShop("Chez Kofi");
  team = await signInTeam(base, sink, admin, shopA.id, "awa.example");
  await join(base, sink, admin, "owner@kofi.example", "owner", shopB.id);
  ownerB = await signInAs(base, "owner@kofi.example");
}, 120_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

describe("GET /audit-log", () => {
  it("shows a finance member's change and a viewer's refusal: who, what, from where, and the outcome", async () => {
    const link = await call(
      "POST",
      "/payment-links",
      { browser: team.finance },
      { amount: 1500, description: "Commande 44", returnUrl: "https://boutique.example/merci" },
    );
    expect(link.status).toBe(200);
    const linkId = ((await link.json()) as { id: string }).id;
    await expectError(
      await call("POST", "/payment-links", { browser: team.viewer }, { amount: 900, description: "Commande 45", returnUrl: "https://boutique.example/merci" }),
      403,
      "forbidden",
    );

    const log = await page("/audit-log?action=paymentLinks.create", { browser: team.owner });
    expect(log.data.map((e) => [e.actorId, e.actorRole, e.outcome])).toEqual([
      [team.viewer.me.id, "viewer", "forbidden"],
      [team.finance.me.id, "finance", "success"],
    ]);
    const [refusal, change] = log.data as [Entry, Entry];
    expect(change).toMatchObject({
      tenantId: shopA.id,
      actorType: "person",
      action: "paymentLinks.create",
      targets: [linkId],
      input: { amount: 1500, description: "Commande 44", returnUrl: "https://boutique.example/merci" },
      changes: null,
      address: "127.0.0.1",
      chain: `${shopA.id}:sandbox`,
    });
    expect(refusal.input).toMatchObject({ amount: 900, description: "Commande 45" });
    expect(refusal.seq).toBe(change.seq + 1);
    expect(refusal.prevHash).toBe(change.hash);
    // Reads are not written.
    expect((await page("/audit-log?action=paymentLinks.list", { browser: team.owner })).data).toEqual([]);
  });

  it("records an API key's calls by the key's id, and never a secret", async () => {
    const created = await call("POST", "/webhooks", { token: shopA.key }, { url: "http://127.0.0.1:9/hooks" });
    expect(created.status).toBe(200);
    const secrets = { masterKey: "mk-very-secret-1234", privateKey: "pk-very-secret-5678", token: "tk-very-secret-9012", publicKey: "pub-abcdef" };
    await call("PUT", `/tenants/${shopA.id}/credentials/providerB`, { browser: team.owner }, { environment: "sandbox", ...secrets });
    // Nothing to confirm (409): written all the same, its code redacted.
    await call("POST", "/people/me/two-factor/confirm", { browser: team.viewer }, { code: "123456" });

    const byKey = await page(`/audit-log?actor=${shopA.keyId}`, { browser: team.owner });
    expect(byKey.data.map((e) => [e.actorType, e.action, e.outcome])).toEqual([["key", "webhooks.create", "success"]]);
    const credentials = (await page("/audit-log?action=credentials.providerB.put", { browser: team.owner })).data[0]!;
    expect(credentials.input).toEqual({
      tenant_id: shopA.id,
      environment: "sandbox",
      masterKey: "[redacted]",
      privateKey: "[redacted]",
      token: "[redacted]",
      publicKey: "[redacted]",
    });
    const code = (await page(`/audit-log?action=me.confirmTwoFactor&actor=${team.viewer.me.id}`, { browser: team.owner })).data[0]!;
    expect(code).toMatchObject({ input: { code: "[redacted]" }, outcome: "conflict" });
    const stored = JSON.stringify(await tg.database.db.selectFrom("audit_log").selectAll().execute());
    for (const secret of [...Object.values(secrets), "123456"]) expect(stored).not.toContain(secret);
  });

  it("records a role changed by the owner with its value before and after", async () => {
    const changed = await call("PATCH", `/tenants/${shopA.id}/people/${team.viewer.me.id}`, { browser: team.owner }, { role: "developer" });
    expect(await changed.json()).toEqual({ id: team.viewer.me.id, role: "developer", previousRole: "viewer" });
    await call("PATCH", `/tenants/${shopA.id}/people/${team.viewer.me.id}`, { browser: team.owner }, { role: "viewer" });
    const entries = (await page(`/audit-log?action=people.changeRole&target=${team.viewer.me.id}`, { browser: team.owner })).data;
    expect(entries.map((e) => e.changes)).toEqual([{ role: { before: "developer", after: "viewer" } }, { role: { before: "viewer", after: "developer" } }]);
  });

  it("shows a shop its own entries only; the operator every shop's", async () => {
    expect((await call("POST", "/webhooks", { browser: ownerB }, { url: "http://127.0.0.1:9/kofi" })).status).toBe(200);
    const seenByB = await page("/audit-log?limit=100", { browser: ownerB });
    expect(seenByB.data.length).toBeGreaterThan(0);
    expect(new Set(seenByB.data.map((e) => e.tenantId))).toEqual(new Set([shopB.id]));
    const seenByKeyB = await page("/audit-log?limit=100", { token: shopB.key });
    expect(seenByKeyB.data.map((e) => e.id)).toEqual(seenByB.data.map((e) => e.id));
    // Another shop's id as a filter finds nothing; a viewer may not read the log at all.
    expect((await page(`/audit-log?target=${team.viewer.me.id}`, { browser: ownerB })).data).toEqual([]);
    await expectError(await call("GET", "/audit-log", { browser: team.viewer }), 403, "forbidden");

    const all = await page("/admin/audit-log?limit=100", { browser: team.support });
    const tenants = new Set(all.data.map((e) => e.tenantId));
    expect(tenants.has(shopA.id) && tenants.has(shopB.id)).toBe(true);
    const onlyB = await page(`/admin/audit-log?limit=100&tenantId=${shopB.id}`, { token: admin });
    expect(onlyB.data.map((e) => e.id)).toEqual(seenByB.data.map((e) => e.id));
    // The staff's own calls on no shop: the operator's chain.
    expect(all.data.some((e) => e.chain === "operator:sandbox" && e.action === "me.confirmTwoFactor" && e.actorRole === "support")).toBe(true);
    await expectError(await call("GET", "/admin/audit-log", { browser: team.owner }), 403, "forbidden");
  });

  it("pages newest first with a cursor, and filters by outcome and dates", async () => {
    const everything = await page("/audit-log?limit=100", { browser: team.owner });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const next: Page = await page(`/audit-log?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { browser: team.owner });
      expect(next.data.length).toBeLessThanOrEqual(2);
      seen.push(...next.data.map((e) => e.id));
      cursor = next.nextCursor;
    } while (cursor);
    expect(seen).toEqual(everything.data.map((e) => e.id));
    expect([...seen].sort().reverse()).toEqual(seen);

    const refusals = await page("/audit-log?outcome=forbidden&limit=100", { browser: team.owner });
    expect(refusals.data.length).toBeGreaterThan(0);
    expect(refusals.data.every((e) => e.outcome === "forbidden")).toBe(true);
    const middle = everything.data[Math.floor(everything.data.length / 2)]!;
    const since = await page(`/audit-log?limit=100&since=${encodeURIComponent(middle.at)}`, { browser: team.owner });
    expect(since.data.every((e) => e.at >= middle.at)).toBe(true);
    const until = await page(`/audit-log?limit=100&until=${encodeURIComponent(middle.at)}`, { browser: team.owner });
    expect(until.data.every((e) => e.at < middle.at)).toBe(true);
    expect(since.data.length + until.data.length).toBe(everything.data.length);
  });
});

describe("the chain", () => {
  it("stays whole under concurrent calls on one shop", async () => {
    const made = await Promise.all(
      Array.from({ length: 16 }, (_, i) => call("POST", "/webhooks", { token: shopB.key }, { url: `http://127.0.0.1:9/concurrent-${i}` })),
    );
    // At most 20 endpoints per shop: the last ones are refused, and written all the same.
    expect(made.every((r) => r.status === 200 || r.status === 409 || r.status === 422)).toBe(true);
    const chain = await tg.database.db.selectFrom("audit_log").select(["seq"]).where("chain", "=", `${shopB.id}:sandbox`).orderBy("seq").execute();
    expect(chain.map((row) => Number(row.seq))).toEqual(chain.map((_, i) => i + 1));
    expect(await auditLogChainBreaks({ db: tg.database.db }, "sandbox")).toEqual([]);
    expect((await audit({ db: tg.database.db })).filter((v) => v.invariant === "audit_log_chain_broken")).toEqual([]);
  });

  it("cannot be changed, deleted or truncated by the application", async () => {
    const db = tg.database.db;
    await expect(db.updateTable("audit_log").set({ outcome: "success" }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom("audit_log").execute()).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_log`.execute(db)).rejects.toThrow(/append-only/);
  });

  it("is cut at its start by retention, recorded, and goes on from there", async () => {
    const before = await tg.database.db.selectFrom("audit_log").select(["chain"]).execute();
    clockOffsetMs = 1826 * 86_400_000;
    const report = await pruneOldRows(tg.gateway.deps);
    expect(report.audit_log.pruned).toBe(before.length);
    expect(await tg.database.db.selectFrom("audit_log").select("id").execute()).toEqual([]);
    const cuts = await tg.database.db.selectFrom("audit_log_purges").selectAll().where("chain", "=", `${shopA.id}:sandbox`).execute();
    expect(cuts.length).toBe(1);
    await expect(tg.database.db.deleteFrom("audit_log_purges").execute()).rejects.toThrow(/append-only/);

    // The team's sessions ended with the clock; the shop's key goes on writing its chain from where it was cut.
    expect((await call("POST", "/webhooks", { token: shopA.key }, { url: "http://127.0.0.1:9/after" })).status).toBe(200);
    const after = (await page("/audit-log", { token: shopA.key })).data[0]!;
    expect(after.seq).toBe(Number(cuts[0]!.through_seq) + 1);
    expect(after.prevHash).toBe(cuts[0]!.through_hash);
    expect(await auditLogChainBreaks({ db: tg.database.db }, "sandbox")).toEqual([]);
  });

  it("is found broken by the audit when an entry is changed behind the trigger's back", async () => {
    const db = tg.database.db;
    const entry = await db.selectFrom("audit_log").select(["id", "seq", "chain"]).orderBy("id", "desc").limit(1).executeTakeFirstOrThrow();
    // A superuser can still turn the trigger off: the chain is what tells.
    await sql`alter table audit_log disable trigger audit_log_append_only`.execute(db);
    await db.updateTable("audit_log").set({ outcome: "forbidden" }).where("id", "=", entry.id).execute();
    await sql`alter table audit_log enable trigger audit_log_append_only`.execute(db);
    tg.database.audited = false;
    const violations = (await audit({ db })).filter((v) => v.invariant === "audit_log_chain_broken");
    expect(violations.map((v) => v.subject)).toEqual([`${entry.chain} ${entry.seq}`]);
    expect(violations[0]!.message).toContain("was changed");
  });
});
