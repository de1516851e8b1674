/**
 * A tenant's routing counter (`routing_versions`, migration 0017): raised in the transaction of every change to
 * what a `POST /payments` decides its routes from, and checked by the payment's first statement against the
 * value the process's cached routing was read at (`route-cache.ts`, which explains the design). Kept apart so
 * that the modules that change routing inputs (route lists, provider credentials) import only this.
 *
 * @module
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { Database, Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";

/**
 * Raises the tenant's counter: call it in the transaction of any change to its route lists or provider
 * credentials, so that every process's cached routing of the tenant stops being used when it commits.
 */
export async function bumpRoutingVersion(db: Kysely<Database> | Transaction<Database>, tenantId: string): Promise<void> {
  await db
    .insertInto("routing_versions")
    .values({ tenant_id: tenantId, version: 1 })
    .onConflict((oc) => oc.column("tenant_id").doUpdateSet((eb) => ({ version: sql`${eb.ref("routing_versions.version")} + 1` })))
    .execute();
}

/** The tenant's counter now (0 when it never changed). */
export async function readRoutingVersion(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db.selectFrom("routing_versions").select("version").where("tenant_id", "=", tenantId).executeTakeFirst();
  return Number(row?.version ?? 0);
}

/** The SQL condition "the tenant's counter is still `version`" (no row: 0), for the payment's first statement. */
export function routingVersionIs(tenantId: string, version: number) {
  return sql<boolean>`coalesce((select version from routing_versions where tenant_id = ${tenantId}), 0) = ${version}`;
}

/** The key of a tenant's routing snapshot in `deps.caches.routing.snapshots`. */
export const routingSnapshotKey = (scope: { tenantId: string; environment: Environment }) => `${scope.tenantId}\u0000${scope.environment}`;

/**
 * Drops what this process holds of a tenant's routing, after it changed it itself (other processes find out by
 * the counter). Not needed for correctness — the counter would send the next payment back to read it — only
 * to spare that payment the wasted insert.
 */
export function forgetRouting(deps: Pick<Deps, "caches">, tenantId: string): void {
  for (const environment of ["sandbox", "live"] as const) deps.caches.routing.snapshots.delete(routingSnapshotKey({ tenantId, environment }));
}
