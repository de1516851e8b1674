/**
 * Creating, reading and changing tenants (contract §3). Creation hands out the first sandbox API key and
 * the callback signing secret — the only time either is shown.
 */
import { tenantSecretField } from "../../crypto/sealed-fields.ts";
import { mintSigningSecret } from "../../crypto/secrets.ts";
import { NotFoundError } from "../../errors.ts";
import { insertApiKey, type CreatedApiKey } from "../api-keys/api-keys.ts";
import type { Deps } from "../deps.ts";
import type { RateLimit } from "../rate-limit/token-bucket.ts";
import { newId } from "../ids.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { tenantView, type TenantView } from "./tenant-view.ts";

export interface CreatedTenant {
  tenant: TenantView;
  apiKey: CreatedApiKey;
  callbackSecret: string;
}

/** Creates a tenant with its first sandbox API key and its callback signing secret, in one transaction. */
export async function createTenant(deps: Deps, input: { name: string; storeName?: string }): Promise<CreatedTenant> {
  const callbackSecret = mintSigningSecret();
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const row = await tx
      .insertInto("tenants")
      .values({ id: newId("ten"), name: input.name, store_name: input.storeName ?? input.name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    const apiKey = await insertApiKey(deps, tx, { tenantId: row.id, environment: "sandbox", name: "default" });
    await tx
      .insertInto("tenant_secrets")
      .values({
        id: newId("tsc"),
        tenant_id: row.id,
        kind: "callback",
        sealed_secret: await deps.keyring.seal(callbackSecret, { tenantId: row.id, field: tenantSecretField("callback") }),
        created_at: now,
      })
      .execute();
    return { tenant: tenantView(row), apiKey, callbackSecret };
  });
}

/** One tenant; 404 when there is none. */
export async function getTenant(deps: Pick<Deps, "db">, tenantId: string): Promise<TenantView> {
  const row = await deps.db.selectFrom("tenants").selectAll().where("id", "=", tenantId).executeTakeFirst();
  if (!row) throw new NotFoundError("Tenant not found");
  return tenantView(row);
}

/** Tenants, newest first. */
export async function listTenants(
  deps: Pick<Deps, "db">,
  input: { limit: number; cursor?: string },
): Promise<{ data: TenantView[]; nextCursor: string | null }> {
  let query = deps.db
    .selectFrom("tenants")
    .selectAll()
    .orderBy("id", "desc")
    .limit(input.limit + 1);
  if (input.cursor) query = query.where("id", "<", decodeCursor("ten", input.cursor));
  const { rows, nextCursor } = toPage(await query.execute(), input.limit);
  return { data: rows.map(tenantView), nextCursor };
}

export interface TenantChanges {
  name?: string;
  storeName?: string;
  disabled?: boolean;
  /** Why it is disabled (with `disabled: true`); enabling it clears the reason. */
  reason?: string;
  liveEnabled?: boolean;
  rateLimit?: RateLimit | null;
}

/** Applies an operator's changes to a tenant; this process forgets its cached view at once. */
export async function updateTenant(deps: Deps, tenantId: string, changes: TenantChanges): Promise<TenantView> {
  const row = await deps.db
    .updateTable("tenants")
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.storeName !== undefined && { store_name: changes.storeName }),
      ...(changes.disabled !== undefined && { disabled: changes.disabled, disabled_reason: changes.disabled ? (changes.reason ?? null) : null }),
      ...(changes.liveEnabled !== undefined && { live_enabled: changes.liveEnabled }),
      ...(changes.rateLimit !== undefined && { rate_limit: changes.rateLimit }),
      updated_at: deps.now(),
    })
    .where("id", "=", tenantId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Tenant not found");
  deps.tenants.forget(tenantId);
  return tenantView(row);
}

/**
 * A new callback signing secret; the previous one keeps signing beside it for 24 hours (contract §3).
 * Returns the new secret — shown this once.
 */
export async function rotateCallbackSecret(deps: Deps, tenantId: string): Promise<{ callbackSecret: string; previousExpiresAt: string }> {
  const secret = mintSigningSecret();
  const now = deps.now();
  const previousExpiresAt = new Date(now.getTime() + 24 * 3600_000);
  await deps.db.transaction().execute(async (tx) => {
    await tx
      .updateTable("tenant_secrets")
      .set({ expires_at: previousExpiresAt })
      .where("tenant_id", "=", tenantId)
      .where("kind", "=", "callback")
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", previousExpiresAt)]))
      .execute();
    await tx
      .insertInto("tenant_secrets")
      .values({
        id: newId("tsc"),
        tenant_id: tenantId,
        kind: "callback",
        sealed_secret: await deps.keyring.seal(secret, { tenantId, field: tenantSecretField("callback") }),
        created_at: now,
      })
      .execute();
  });
  return { callbackSecret: secret, previousExpiresAt: previousExpiresAt.toISOString() };
}

/** The callback secrets that sign right now: the newest first, then any still inside its 24-hour overlap. */
export async function activeCallbackSecrets(deps: Pick<Deps, "db" | "keyring" | "now">, tenantId: string): Promise<string[]> {
  const rows = await deps.db
    .selectFrom("tenant_secrets")
    .select(["sealed_secret", "expires_at"])
    .where("tenant_id", "=", tenantId)
    .where("kind", "=", "callback")
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", deps.now())]))
    .orderBy("created_at", "desc")
    .execute();
  return Promise.all(rows.map((row) => deps.keyring.open(row.sealed_secret, { tenantId, field: tenantSecretField("callback") })));
}
