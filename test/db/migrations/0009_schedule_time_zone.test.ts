/**
 * Migration 0009_schedule_time_zone on schedules made before it (issue 13 point 6): each gets the time zone
 * of its payer's country, from the permit customer's phone calling code, else `Africa/Abidjan` (UTC+0, the
 * calendar it followed so far). The column is then required. Run on the test's driver (PGlite or PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Kysely } from "kysely";
import { scheduleTimeZoneMigration } from "../../../src/db/migrations/0009_schedule_time_zone.ts";
import type { Database } from "../../../src/db/schema.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);

afterAll(() => database?.dispose());

/** A permit of `phone` with a monthly schedule, inserted as the tables stood before the migration. */
async function permitWithSchedule(db: Kysely<Database>, n: number, phone: string | undefined): Promise<string> {
  const permitId = `prm_mig${n}`;
  await db
    .insertInto("permits")
    .values({
      id: permitId,
      tenant_id: "ten_mig",
      environment: "sandbox",
      token: `tok_mig${n}`,
      provider_account: "pcr_mig",
      credential_version: 1,
      status: "active",
      customer: phone === undefined ? { name: "Sans téléphone" } : { name: "Client", phone },
      description: "Abonnement",
      max_amount: 10_000,
      currency: "XOF",
      return_url: "https://shop.example/r",
      cancel_url: "https://shop.example/c",
      authorization_url: "https://pay.example/a",
    })
    .execute();
  const start = new Date("2025-01-31T09:00:00Z");
  await db
    .insertInto("permit_schedules")
    .values({
      id: `sch_mig${n}`,
      permit_id: permitId,
      tenant_id: "ten_mig",
      environment: "sandbox",
      amount: 1000,
      interval: "month",
      interval_count: 1,
      description: "Mois",
      start_at: start,
      period_index: 0,
      period: "2025-01-31",
      due_at: start,
      next_attempt_at: start,
      status: "active",
    } as never)
    .execute();
  return `sch_mig${n}`;
}

describe("migration 0009_schedule_time_zone", () => {
  it("gives each existing schedule its payer's country's time zone, else Africa/Abidjan, and then requires one", async () => {
    const { db } = database;
    await scheduleTimeZoneMigration.down!(db);
    await db.insertInto("tenants").values({ id: "ten_mig", name: "Boutique", store_name: "Boutique" }).execute();
    const expected: Record<string, string> = {};
    for (const [n, [phone, zone]] of (
      [
        ["+22997000000", "Africa/Porto-Novo"],
        ["+22790000000", "Africa/Niamey"],
        ["+22890000000", "Africa/Lome"],
        ["+2250700000000", "Africa/Abidjan"],
        ["+221770000000", "Africa/Dakar"],
        ["+22370000000", "Africa/Bamako"],
        ["+224620000000", "Africa/Conakry"],
        ["+33612345678", "Africa/Abidjan"],
        [undefined, "Africa/Abidjan"],
      ] as const
    ).entries())
      expected[await permitWithSchedule(db, n, phone)] = zone;

    await scheduleTimeZoneMigration.up(db);

    const rows = await db.selectFrom("permit_schedules").select(["id", "time_zone", "period", "due_at"]).where("tenant_id", "=", "ten_mig").execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.time_zone]))).toEqual(expected);
    // The current position is left as it was.
    expect(rows.every((r) => r.period === "2025-01-31" && r.due_at.toISOString() === "2025-01-31T09:00:00.000Z")).toBe(true);
    await expect(
      db
        .updateTable("permit_schedules")
        .set({ time_zone: null as never })
        .where("id", "=", rows[0]!.id)
        .execute(),
    ).rejects.toThrow();
  });
});
