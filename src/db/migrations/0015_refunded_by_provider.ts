/**
 * Migration 0015: what a provider gave back by itself (issue 24, point 4).
 *
 * `payments.refunded_by_provider`: how much of the payment its provider says it refunded on its own (its
 * dashboard), whole units, 0 when it reports none. A provider that says "refunded" or "partly refunded"
 * without saying how much counts as all of it: what cannot be counted is not spent again. Refunds of ours
 * are checked against it (`services/payouts/refund-guard.ts`): it plus our refunds that have not failed
 * never exceed what the payment collected.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("payments")
    .addColumn("refunded_by_provider", "int8", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("payments").addCheckConstraint("payments_refunded_by_provider_check", sql`refunded_by_provider between 0 and amount`).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payments").dropConstraint("payments_refunded_by_provider_check").execute();
  await db.schema.alterTable("payments").dropColumn("refunded_by_provider").execute();
}

export const refundedByProviderMigration: Migration = { up, down };
