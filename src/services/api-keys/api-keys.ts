/**
 * API keys (contract §2–§3): a tenant's long-lived credential for one environment, exchanged for short
 * bearer tokens at `POST /auth/token`. Only an HMAC of the secret is stored, with a display prefix.
 */
import type { Kysely, Transaction } from "kysely";
import type { Environment } from "../../config.ts";
import type { Database } from "../../db/schema.ts";
import { apiKeyDisplayPrefix, hashApiKeySecret, mintApiKeySecret } from "../../crypto/secrets.ts";
import { NotFoundError, UnauthorizedError } from "../../errors.ts";
import { mintToken } from "../auth/tokens.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";

export interface CreatedApiKey {
  id: string;
  /** Shown this once. */
  secret: string;
  environment: Environment;
  name: string | null;
  prefix: string;
  createdAt: string;
}

export interface ApiKeyView {
  id: string;
  environment: Environment;
  name: string | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** Lifetime of a token minted from an API key, in seconds. */
export const ACCESS_TOKEN_TTL_S = 3600;

/** Inserts a new key inside the caller's transaction (tenant creation makes the first one). */
export async function insertApiKey(
  deps: Pick<Deps, "config" | "now">,
  db: Kysely<Database> | Transaction<Database>,
  input: { tenantId: string; environment: Environment; name?: string | null },
): Promise<CreatedApiKey> {
  const secret = mintApiKeySecret(input.environment);
  const row = await db
    .insertInto("api_keys")
    .values({
      id: newId("key"),
      tenant_id: input.tenantId,
      environment: input.environment,
      name: input.name ?? null,
      prefix: apiKeyDisplayPrefix(secret),
      secret_hash: hashApiKeySecret(deps.config.apiKeyPepper, secret),
      created_at: deps.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    secret,
    environment: row.environment,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
  };
}

/** Creates a key for a tenant. */
export function createApiKey(deps: Deps, input: { tenantId: string; environment: Environment; name?: string | null }): Promise<CreatedApiKey> {
  return insertApiKey(deps, deps.db, input);
}

/** A tenant's keys, newest first, secrets never included. */
export async function listApiKeys(deps: Pick<Deps, "db">, tenantId: string): Promise<ApiKeyView[]> {
  const rows = await deps.db.selectFrom("api_keys").selectAll().where("tenant_id", "=", tenantId).orderBy("id", "desc").execute();
  return rows.map((row) => ({
    id: row.id,
    environment: row.environment,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  }));
}

/** The environment of one of a tenant's keys; 404 when it is not theirs. */
export async function apiKeyEnvironment(deps: Pick<Deps, "db">, tenantId: string, keyId: string): Promise<Environment> {
  const row = await deps.db.selectFrom("api_keys").select("environment").where("id", "=", keyId).where("tenant_id", "=", tenantId).executeTakeFirst();
  if (!row) throw new NotFoundError("API key not found");
  return row.environment;
}

/** Revokes a key; its tokens stop working within the key-status cache's lifetime. Revoking twice is fine. */
export async function revokeApiKey(deps: Deps, tenantId: string, keyId: string): Promise<{ id: string; revokedAt: string }> {
  const row = await deps.db
    .updateTable("api_keys")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.val(deps.now())) }))
    .where("id", "=", keyId)
    .where("tenant_id", "=", tenantId)
    .returning(["id", "revoked_at"])
    .executeTakeFirst();
  if (!row) throw new NotFoundError("API key not found");
  deps.apiKeyStatus.forget(keyId);
  return { id: row.id, revokedAt: row.revoked_at!.toISOString() };
}

const INVALID_CLIENT = "Invalid client credentials";
/** The answer to a right key of a disabled tenant (a merchant signing in to the dashboard reads it). */
const DISABLED_CLIENT = "This merchant account is disabled: the operator can enable it again";

/**
 * The OAuth2 client-credentials exchange: an API key's id and secret for a bearer token acting in the
 * key's environment. A wrong id and a wrong secret get the same answer.
 */
export async function exchangeApiKey(
  deps: Deps,
  input: { clientId: string; clientSecret: string },
): Promise<{ access_token: string; token_type: "Bearer"; expires_in: number }> {
  const hash = hashApiKeySecret(deps.config.apiKeyPepper, input.clientSecret);
  // Looked up by the secret's HMAC (unique), then matched on the id: no timing difference to learn from.
  const row = await deps.db
    .selectFrom("api_keys")
    .innerJoin("tenants", "tenants.id", "api_keys.tenant_id")
    .select(["api_keys.id", "api_keys.tenant_id", "api_keys.environment", "api_keys.revoked_at", "tenants.disabled"])
    .where("api_keys.secret_hash", "=", hash)
    .executeTakeFirst();
  if (!row || row.id !== input.clientId || row.revoked_at !== null) throw new UnauthorizedError(INVALID_CLIENT);
  // The id and secret are right: saying why they are refused reveals nothing their holder does not know.
  if (row.disabled) throw new UnauthorizedError(DISABLED_CLIENT);
  await deps.db.updateTable("api_keys").set({ last_used_at: deps.now() }).where("id", "=", row.id).execute();
  const accessToken = await mintToken(deps.config.jwt, {
    sub: `key:${row.id}`,
    tenantId: row.tenant_id,
    environment: row.environment,
    keyId: row.id,
    ttlSeconds: ACCESS_TOKEN_TTL_S,
    now: deps.now(),
  });
  return { access_token: accessToken, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_S };
}
