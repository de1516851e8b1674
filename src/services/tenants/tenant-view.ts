/**
 * How a tenant is shown by the API (contract §3).
 */
import type { Selectable } from "kysely";
import type { TenantsTable } from "../../db/schema.ts";
import type { RateLimit } from "../rate-limit/token-bucket.ts";

export interface TenantView {
  id: string;
  name: string;
  storeName: string;
  disabled: boolean;
  /** Why the operator disabled it (null while enabled, or when no reason was given). */
  disabledReason: string | null;
  liveEnabled: boolean;
  rateLimit: RateLimit | null;
  createdAt: string;
  updatedAt: string;
}

/** The API view of a tenant row. */
export function tenantView(row: Selectable<TenantsTable>): TenantView {
  return {
    id: row.id,
    name: row.name,
    storeName: row.store_name,
    disabled: row.disabled,
    disabledReason: row.disabled ? row.disabled_reason : null,
    liveEnabled: row.live_enabled,
    rateLimit: row.rate_limit ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
