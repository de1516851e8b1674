/**
 * A tenant's webhook endpoints (contract §6): each belongs to the environment of the token that made it,
 * subscribes to every event type or a list of them, and has a signing secret shown once — at creation
 * and at each rotation, after which the old secret keeps signing beside the new one for 24 hours.
 */
import type { Environment } from "../../config.ts";
import type { Kysely } from "kysely";
import type { Database, EventType, WebhookEndpoint } from "../../db/schema.ts";
import { mintSigningSecret } from "../../crypto/secrets.ts";
import { ConflictError, NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { type EndpointHealth, endpointHealth } from "./endpoint-health.ts";

/** At most this many endpoints per tenant, all environments together. */
export const MAX_ENDPOINTS_PER_TENANT = 20;
/** How long an old secret keeps signing after a rotation. */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
/** The field name bound into sealed endpoint secrets. */
export const ENDPOINT_SECRET_FIELD = "webhookEndpoint.secret";

export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  /** null: every event type. */
  events: EventType[] | null;
  enabled: boolean;
  disabledReason: string | null;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
  health: EndpointHealth;
}

/** A new endpoint's health: nothing delivered yet. */
const NEW_ENDPOINT_HEALTH: EndpointHealth = {
  status: "idle",
  successRate: null,
  recent: { succeeded: 0, failed: 0, pending: 0 },
  lastDeliveredAt: null,
  lastError: null,
  lastErrorAt: null,
  failingSince: null,
};

/** The endpoints as the API shows them, each with its health (one statement for all). */
export async function endpointViews(deps: Pick<Deps, "db">, rows: readonly WebhookEndpoint[]): Promise<EndpointView[]> {
  const health = await endpointHealth(deps, rows);
  return rows.map((row) => endpointView(row, health.get(row.id) ?? NEW_ENDPOINT_HEALTH));
}

function endpointView(row: WebhookEndpoint, health: EndpointHealth): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.event_types,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    health,
  };
}

interface Scope {
  tenantId: string;
  environment: Environment;
}

async function insertSecret(deps: Pick<Deps, "keyring">, db: Kysely<Database>, endpointId: string, tenantId: string, now: Date): Promise<string> {
  const secret = mintSigningSecret();
  await db
    .insertInto("webhook_endpoint_secrets")
    .values({
      id: newId("whs"),
      endpoint_id: endpointId,
      tenant_id: tenantId,
      sealed_secret: await deps.keyring.seal(secret, { tenantId, field: ENDPOINT_SECRET_FIELD }),
      created_at: now,
    })
    .execute();
  return secret;
}

/** Creates an endpoint; the URL has been checked by the caller (`validateTargetUrl`). */
export async function createEndpoint(
  deps: Deps,
  input: Scope & { url: string; events?: EventType[] | null; description?: string | null },
): Promise<EndpointView & { secret: string }> {
  return deps.db.transaction().execute(async (tx) => {
    // Lock the tenant row so that two concurrent creations cannot both pass the limit.
    await tx.selectFrom("tenants").select("id").where("id", "=", input.tenantId).forUpdate().executeTakeFirstOrThrow();
    const count = await tx
      .selectFrom("webhook_endpoints")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("tenant_id", "=", input.tenantId)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_ENDPOINTS_PER_TENANT)
      throw new ConflictError(`A tenant has at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one first`);
    const now = deps.now();
    const row = await tx
      .insertInto("webhook_endpoints")
      .values({
        id: newId("whe"),
        tenant_id: input.tenantId,
        environment: input.environment,
        url: input.url,
        description: input.description ?? null,
        event_types: input.events && input.events.length > 0 ? [...new Set(input.events)] : null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const secret = await insertSecret(deps, tx, row.id, input.tenantId, now);
    return { ...endpointView(row, NEW_ENDPOINT_HEALTH), secret };
  });
}

/** One endpoint of the tenant in that environment; 404 otherwise. */
export async function findEndpoint(deps: Pick<Deps, "db">, scope: Scope, endpointId: string): Promise<WebhookEndpoint> {
  const row = await deps.db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("id", "=", endpointId)
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Webhook endpoint not found");
  return row;
}

/** The tenant's endpoints in that environment, newest first. */
export async function listEndpoints(deps: Pick<Deps, "db">, scope: Scope): Promise<EndpointView[]> {
  const rows = await deps.db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .orderBy("id", "desc")
    .execute();
  return endpointViews(deps, rows);
}

/** Changes url, events, description or enabled; re-enabling clears the reason it was disabled. */
export async function updateEndpoint(
  deps: Deps,
  scope: Scope,
  endpointId: string,
  changes: { url?: string; events?: EventType[] | null; description?: string | null; enabled?: boolean },
): Promise<EndpointView> {
  await findEndpoint(deps, scope, endpointId);
  const row = await deps.db
    .updateTable("webhook_endpoints")
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.events !== undefined && { event_types: changes.events && changes.events.length > 0 ? [...new Set(changes.events)] : null }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.enabled !== undefined && { enabled: changes.enabled }),
      ...(changes.enabled === true && { disabled_reason: null, failing_since: null }),
      updated_at: deps.now(),
    })
    .where("id", "=", endpointId)
    .returningAll()
    .executeTakeFirstOrThrow();
  const [view] = await endpointViews(deps, [row]);
  return view!;
}

/** Deletes an endpoint; its pending deliveries will fail (their target is gone), its log stays. */
export async function deleteEndpoint(deps: Deps, scope: Scope, endpointId: string): Promise<{ id: string; deleted: true }> {
  await findEndpoint(deps, scope, endpointId);
  await deps.db.deleteFrom("webhook_endpoints").where("id", "=", endpointId).execute();
  return { id: endpointId, deleted: true };
}

/** A new secret; the old one keeps signing for 24 hours. Returns the new secret, shown this once. */
export async function rotateEndpointSecret(deps: Deps, scope: Scope, endpointId: string): Promise<{ secret: string; previousExpiresAt: string }> {
  await findEndpoint(deps, scope, endpointId);
  const now = deps.now();
  const previousExpiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS);
  const secret = await deps.db.transaction().execute(async (tx) => {
    await tx
      .updateTable("webhook_endpoint_secrets")
      .set({ expires_at: previousExpiresAt })
      .where("endpoint_id", "=", endpointId)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", previousExpiresAt)]))
      .execute();
    return insertSecret(deps, tx, endpointId, scope.tenantId, now);
  });
  return { secret, previousExpiresAt: previousExpiresAt.toISOString() };
}
