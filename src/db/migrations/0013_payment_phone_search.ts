/**
 * Migration 0013: `GET /payments?phone=` by an index (issue 17).
 *
 * A customer's phone is kept as the payment was made (`+229 97…`, or a checkout's national `97000001`), so a
 * search matches on digits, when one number ends with the other. The index holds each payment's phone
 * digits reversed, compared byte by byte (`text_pattern_ops`, whatever the database's collation): "ends
 * with" becomes a prefix range (`~>=~ r and ~<~ r || ':'`, ':' being the byte after '9'), and "is a suffix
 * of the number searched" an equality with each of its prefixes, both read from the index within the
 * tenant and environment. `services/payments/list-payments.ts` writes the same expression ({@link PHONE_KEY_SQL}).
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** The indexed expression: a payment's phone digits, reversed. Queries must write it exactly so. */
export const PHONE_KEY_SQL = `reverse(regexp_replace(coalesce(customer->>'phone', ''), '[^0-9]', '', 'g'))`;

async function up(db: Kysely<any>): Promise<void> {
  await sql`create index payments_phone_key_idx on payments (tenant_id, environment, (${sql.raw(PHONE_KEY_SQL)}) text_pattern_ops)`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payments_phone_key_idx`.execute(db);
}

export const paymentPhoneSearchMigration: Migration = { up, down };
