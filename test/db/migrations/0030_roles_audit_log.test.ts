/**
 * Migration 0030_roles_audit_log on a shop's people made before it (issue 30 point 4): every member, and every
 * pending invitation as a member, becomes a viewer (no new role is what a member was; none may do more than
 * before); owners stay owners; `member` is refused from then on. Run on the test's driver (PGlite or PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { rolesAuditLogMigration } from "../../../src/db/migrations/0030_roles_audit_log.ts";
import { auditChainHeadsMigration } from "../../../src/db/migrations/0036_audit_chain_heads.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);

afterAll(() => database?.dispose());

describe("migration 0030_roles_audit_log", () => {
  it("makes members and invitations as a member viewers, keeps owners, and refuses member afterwards", async () => {
    const { db } = database;
    // Back to just before 0030: first 0036, whose chain heads' triggers use 0030's append-only function.
    await auditChainHeadsMigration.down!(db);
    await rolesAuditLogMigration.down!(db);
    await db.insertInto("tenants").values({ id: "ten_mig", name: "Boutique", store_name: "Boutique" }).execute();
    for (const [id, email] of [
      ["per_owner", "owner@mig.example"],
      ["per_member", "member@mig.example"],
    ])
      await db
        .insertInto("people")
        .values({ id, email } as never)
        .execute();
    await db
      .insertInto("memberships")
      .values([
        { tenant_id: "ten_mig", person_id: "per_owner", role: "owner" },
        { tenant_id: "ten_mig", person_id: "per_member", role: "member" as never },
      ])
      .execute();
    await db
      .insertInto("invitations")
      .values({
        id: "inv_mig",
        tenant_id: "ten_mig",
        email: "next@mig.example",
        role: "member" as never,
        token_hash: "h",
        invited_by: "operator",
        expires_at: new Date(Date.now() + 86_400_000),
      })
      .execute();

    await rolesAuditLogMigration.up(db);
    await auditChainHeadsMigration.up(db);

    const roles = await db.selectFrom("memberships").select(["person_id", "role"]).where("tenant_id", "=", "ten_mig").orderBy("person_id").execute();
    expect(roles).toEqual([
      { person_id: "per_member", role: "viewer" },
      { person_id: "per_owner", role: "owner" },
    ]);
    expect((await db.selectFrom("invitations").select("role").where("id", "=", "inv_mig").executeTakeFirstOrThrow()).role).toBe("viewer");
    await expect(
      db
        .updateTable("memberships")
        .set({ role: "member" as never })
        .where("person_id", "=", "per_member")
        .execute(),
    ).rejects.toThrow();
    // An operator's invitation names no shop; a shop's names one.
    await expect(
      db
        .insertInto("invitations")
        .values({ id: "inv_bad", tenant_id: null, email: "x@mig.example", role: "viewer", token_hash: "h2", invited_by: "operator", expires_at: new Date() })
        .execute(),
    ).rejects.toThrow();
  });
});
