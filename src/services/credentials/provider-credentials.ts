/**
 * A tenant's provider credentials (spec 2.5, contract §3): one active set per provider and environment,
 * every value sealed, shown only masked. Sets are versioned: storing replaces the active set with a new
 * version, deleting deactivates it, and old versions stay (sealed) so payments created with them can
 * still be verified and confirmed with the version they were made with (`openCredentials(…, version)`).
 */
import type { Environment } from "../../config.ts";
import { credentialField } from "../../crypto/sealed-fields.ts";
import { maskSecret } from "../../crypto/secrets.ts";
import type { MaskedFields, Provider, SealedFields } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";

/** The fields of each provider's set, in display order; `optional` ones may be absent. */
export const CREDENTIAL_FIELDS: Record<Provider, { required: readonly string[]; optional: readonly string[] }> = {
  providerB: { required: ["masterKey", "privateKey", "token"], optional: ["publicKey"] },
  providerA: { required: ["secretKey", "webhookSecret"], optional: [] },
};

export interface CredentialSetView {
  environment: Environment;
  version: number;
  updatedAt: string;
  /** Each field masked (`…c3f9`), or null when unset. */
  [field: string]: string | number | null;
}

function view(row: { environment: Environment; version: number; masked: MaskedFields; created_at: Date }): CredentialSetView {
  return { environment: row.environment, ...row.masked, version: row.version, updatedAt: row.created_at.toISOString() };
}

/** Stores a new active set for (tenant, provider, environment), replacing the previous one. */
export async function putCredentials(
  deps: Deps,
  input: { tenantId: string; provider: Provider; environment: Environment; fields: Record<string, string | undefined> },
): Promise<CredentialSetView> {
  const { required, optional } = CREDENTIAL_FIELDS[input.provider];
  const sealed: SealedFields = {};
  const masked: MaskedFields = {};
  for (const name of [...required, ...optional]) {
    const value = input.fields[name];
    if (value === undefined) {
      masked[name] = null;
      continue;
    }
    sealed[name] = await deps.keyring.seal(value, { tenantId: input.tenantId, field: credentialField(input.provider, name) });
    masked[name] = maskSecret(value);
  }
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    // Lock the tenant row: two concurrent PUTs for one tenant take turns, so versions never collide.
    await tx.selectFrom("tenants").select("id").where("id", "=", input.tenantId).forUpdate().executeTakeFirstOrThrow();
    const latest = await tx
      .selectFrom("provider_credentials")
      .select((eb) => eb.fn.max("version").as("version"))
      .where("tenant_id", "=", input.tenantId)
      .where("provider", "=", input.provider)
      .where("environment", "=", input.environment)
      .executeTakeFirst();
    await tx
      .updateTable("provider_credentials")
      .set({ active: false, deactivated_at: now })
      .where("tenant_id", "=", input.tenantId)
      .where("provider", "=", input.provider)
      .where("environment", "=", input.environment)
      .where("active", "=", true)
      .execute();
    const row = await tx
      .insertInto("provider_credentials")
      .values({
        id: newId("pcr"),
        tenant_id: input.tenantId,
        provider: input.provider,
        environment: input.environment,
        version: Number(latest?.version ?? 0) + 1,
        active: true,
        sealed,
        masked,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return view(row);
  });
}

/** The active sets of a tenant for a provider, masked, one per environment. */
export async function listCredentials(deps: Pick<Deps, "db">, tenantId: string, provider: Provider): Promise<CredentialSetView[]> {
  const rows = await deps.db
    .selectFrom("provider_credentials")
    .select(["environment", "version", "masked", "created_at"])
    .where("tenant_id", "=", tenantId)
    .where("provider", "=", provider)
    .where("active", "=", true)
    .orderBy("environment")
    .execute();
  return rows.map(view);
}

/** Deactivates the active set of an environment (the sealed version stays for payments made with it). */
export async function deactivateCredentials(
  deps: Deps,
  input: { tenantId: string; provider: Provider; environment: Environment },
): Promise<{ environment: Environment; version: number; deactivatedAt: string }> {
  const row = await deps.db
    .updateTable("provider_credentials")
    .set({ active: false, deactivated_at: deps.now() })
    .where("tenant_id", "=", input.tenantId)
    .where("provider", "=", input.provider)
    .where("environment", "=", input.environment)
    .where("active", "=", true)
    .returning(["environment", "version", "deactivated_at"])
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`No active ${input.provider} credentials for ${input.environment}`);
  return { environment: row.environment, version: row.version, deactivatedAt: row.deactivated_at!.toISOString() };
}

export interface OpenedCredentials {
  /** The set's row id (a payment's `provider_account` when made on a tenant's own account). */
  id: string;
  version: number;
  fields: Record<string, string>;
}

/**
 * The plaintext of a set, for a provider call: the active set of the environment, or a given version
 * (a payment's own). Null when there is none.
 */
export async function openCredentials(
  deps: Pick<Deps, "db" | "keyring">,
  input: { tenantId: string; provider: Provider; environment: Environment; version?: number },
): Promise<OpenedCredentials | null> {
  let query = deps.db
    .selectFrom("provider_credentials")
    .select(["id", "version", "sealed"])
    .where("tenant_id", "=", input.tenantId)
    .where("provider", "=", input.provider)
    .where("environment", "=", input.environment);
  query = input.version === undefined ? query.where("active", "=", true) : query.where("version", "=", input.version);
  const row = await query.executeTakeFirst();
  if (!row) return null;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(row.sealed)) {
    fields[name] = await deps.keyring.open(value, { tenantId: input.tenantId, field: credentialField(input.provider, name) });
  }
  return { id: row.id, version: row.version, fields };
}
