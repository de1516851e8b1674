/**
 * Migration 0010: a payment's provider is any provider the gateway runs (issue 14, "a third provider is a
 * folder"). The registry (`src/providers/registry.ts`) is what knows the providers now, so the checks that
 * named `providerA` and `providerB`, and tied direct payments to provider A, are dropped; a provider's name
 * stays non-empty. Credential sets keep theirs: their routes and fields are per provider.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payments").dropConstraint("payments_kind_provider_check").execute();
  await db.schema.alterTable("payments").dropConstraint("payments_provider_check").execute();
  await db.schema.alterTable("payments").addCheckConstraint("payments_provider_check", sql`provider <> ''`).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payments").dropConstraint("payments_provider_check").execute();
  await db.schema.alterTable("payments").addCheckConstraint("payments_provider_check", sql`provider in ('providerA', 'providerB')`).execute();
  await db.schema
    .alterTable("payments")
    .addCheckConstraint("payments_kind_provider_check", sql`(kind = 'direct_payment') = (provider = 'providerA')`)
    .execute();
}

export const anyProviderMigration: Migration = { up, down };
