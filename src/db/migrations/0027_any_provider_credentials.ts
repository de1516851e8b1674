/**
 * Migration 0027: a credential set belongs to any provider the gateway runs (issue 26 point 4, "a provider
 * declares itself"). Each provider declares its credential fields, and the registry is what knows the
 * providers, so the check naming `providerA` and `providerB` on `provider_credentials` goes, as 0010 did for
 * payments; a provider's name stays non-empty.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("provider_credentials").dropConstraint("provider_credentials_provider_check").execute();
  await db.schema.alterTable("provider_credentials").addCheckConstraint("provider_credentials_provider_check", sql`provider <> ''`).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("provider_credentials").dropConstraint("provider_credentials_provider_check").execute();
  await db.schema
    .alterTable("provider_credentials")
    .addCheckConstraint("provider_credentials_provider_check", sql`provider in ('providerA', 'providerB')`)
    .execute();
}

export const anyProviderCredentialsMigration: Migration = { up, down };
