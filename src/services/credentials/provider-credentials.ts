/**
 * A tenant's provider credentials (spec 2.5, contract §3): one active set per provider and environment,
 * every value sealed, shown only masked. Sets are versioned: storing replaces the active set with a new
 * version, deleting deactivates it, and old versions stay (sealed) so payments created with them can
 * still be verified and confirmed with the version they were made with (`openCredentials(…, version)`).
 *
 * Opened sets are cached per process (see {@link openCredentials}): every payment, checkout, IPN and
 * confirm needs one, and reading and opening it (a query and one AES-GCM decrypt per field) was a
 * measurable share of those paths. A version's content never changes, so the cache is only bounded in
 * time by how soon a change made by another instance must be seen: the *active* set of an environment
 * is re-read at most {@link ACTIVE_CREDENTIALS_CACHE_MS} after it was last read (the same bound as the
 * tenant cache), and this process forgets it at once when it stores or deactivates a set itself.
 *
 * `POST /payments` obeys a change sooner, in every process: storing or deactivating a set raises the tenant's
 * routing counter in the same transaction (`routing/routing-version.ts`), which the payment's first statement
 * checks (`routing/route-cache.ts`).
 */
import type { Environment } from "../../config.ts";
import { credentialField } from "../../crypto/sealed-fields.ts";
import { maskSecret } from "../../crypto/secrets.ts";
import type { MaskedFields, Provider, SealedFields } from "../../db/schema.ts";
import { NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import type { OpenedCredentials } from "./credentials-cache.ts";
import { newId } from "../ids.ts";
import { bumpRoutingVersion, forgetRouting } from "../routing/routing-version.ts";

/**
 * The fields of a provider's set, in display order, as the provider declares them
 * (`PaymentProvider.credentials`); undefined for a provider that keeps no credentials here.
 */
export function credentialFieldsOf(deps: Pick<Deps, "providers">, provider: Provider): { required: string[]; optional: string[] } | undefined {
  const fields = deps.providers.find(provider)?.credentials?.fields;
  if (!fields) return undefined;
  return {
    required: fields.filter((field) => !field.optional).map((field) => field.name),
    optional: fields.filter((field) => field.optional).map((field) => field.name),
  };
}

/**
 * What a credential value may contain: visible ASCII only (`!` to `~`). The providers' keys are ASCII
 * tokens, and they travel in HTTP headers (`PAYDUNYA-*`, `Authorization: Bearer …`), where a line break or
 * a character beyond ASCII (the `…` of a copied example) makes every call fail before it leaves, and
 * surrounding spaces would be trimmed. Empty passes here: "should not be empty" is its own rule.
 */
export const CREDENTIAL_VALUE_PATTERN = /^[\x21-\x7e]*$/;
/** The violation of {@link CREDENTIAL_VALUE_PATTERN}, after the field's name. */
export const CREDENTIAL_VALUE_RULE = "must contain only visible ASCII characters: no spaces, line breaks, accents or typographic characters like …";

export interface CredentialSetView {
  environment: Environment;
  version: number;
  updatedAt: string;
  /** Each field masked (`…c3f9`; `…` alone under 12 characters), or null when unset. */
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
  const set = credentialFieldsOf(deps, input.provider);
  if (!set) throw new Error(`provider ${input.provider} keeps no credentials here`);
  const { required, optional } = set;
  // The HTTP schema says so already; this keeps any other caller from storing a set that cannot work.
  const invalid = [...required, ...optional].filter((name) => input.fields[name] !== undefined && !CREDENTIAL_VALUE_PATTERN.test(input.fields[name]!));
  if (invalid.length > 0) throw new ValidationError(invalid.map((name) => `${name} ${CREDENTIAL_VALUE_RULE}`));
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
  const stored = await deps.db.transaction().execute(async (tx) => {
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
    // POST /payments in every process picks its accounts with the new set from the next payment on.
    await bumpRoutingVersion(tx, input.tenantId);
    return view(row);
  });
  forgetCredentials(deps, input);
  forgetRouting(deps, input.tenantId);
  return stored;
}

/**
 * The environments whose credentials a caller may read: every one for an operator or a live token, sandbox
 * alone for a sandbox token — even masked, live keys are not a sandbox key's business (contract §3: a
 * sandbox token asking for live is refused).
 */
export function readableCredentialEnvironments(principal: { role: "admin" | "tenant"; environment: Environment }): Environment[] {
  return principal.role === "admin" || principal.environment === "live" ? ["sandbox", "live"] : ["sandbox"];
}

/** The active sets of a tenant for a provider, masked, one per environment among `environments`. */
export async function listCredentials(
  deps: Pick<Deps, "db">,
  tenantId: string,
  provider: Provider,
  environments: readonly Environment[],
): Promise<CredentialSetView[]> {
  if (environments.length === 0) return [];
  const rows = await deps.db
    .selectFrom("provider_credentials")
    .select(["environment", "version", "masked", "created_at"])
    .where("tenant_id", "=", tenantId)
    .where("provider", "=", provider)
    .where("environment", "in", environments)
    .where("active", "=", true)
    .orderBy("environment")
    .execute();
  return rows.map(view);
}

/** One stored version of a tenant's credentials at a provider: masked values, and when it was in use. */
export interface CredentialVersionView {
  environment: Environment;
  version: number;
  /** True for the set payments are made with now. */
  active: boolean;
  /** Each field masked as in {@link CredentialSetView}. */
  masked: Record<string, string | null>;
  createdAt: string;
  /** When it was replaced or deactivated; null while active. */
  deactivatedAt: string | null;
}

/**
 * Every version of a tenant's credentials at a provider among `environments`, newest first per environment:
 * what a payment's `credentialVersion` points to. Sealed values never leave; the masked ones tell the sets apart.
 */
export async function listCredentialVersions(
  deps: Pick<Deps, "db">,
  tenantId: string,
  provider: Provider,
  environments: readonly Environment[],
): Promise<CredentialVersionView[]> {
  if (environments.length === 0) return [];
  const rows = await deps.db
    .selectFrom("provider_credentials")
    .select(["environment", "version", "active", "masked", "created_at", "deactivated_at"])
    .where("tenant_id", "=", tenantId)
    .where("provider", "=", provider)
    .where("environment", "in", environments)
    .orderBy("environment")
    .orderBy("version", "desc")
    .execute();
  return rows.map((row) => ({
    environment: row.environment,
    version: row.version,
    active: row.active,
    masked: row.masked as Record<string, string | null>,
    createdAt: row.created_at.toISOString(),
    deactivatedAt: row.deactivated_at?.toISOString() ?? null,
  }));
}

/** Deactivates the active set of an environment (the sealed version stays for payments made with it). */
export async function deactivateCredentials(
  deps: Deps,
  input: { tenantId: string; provider: Provider; environment: Environment },
): Promise<{ environment: Environment; version: number; deactivatedAt: string }> {
  const row = await deps.db.transaction().execute(async (tx) => {
    const deactivated = await tx
      .updateTable("provider_credentials")
      .set({ active: false, deactivated_at: deps.now() })
      .where("tenant_id", "=", input.tenantId)
      .where("provider", "=", input.provider)
      .where("environment", "=", input.environment)
      .where("active", "=", true)
      .returning(["environment", "version", "deactivated_at"])
      .executeTakeFirst();
    // POST /payments in every process stops using the set from the next payment on.
    if (deactivated) await bumpRoutingVersion(tx, input.tenantId);
    return deactivated;
  });
  forgetCredentials(deps, input);
  forgetRouting(deps, input.tenantId);
  if (!row) throw new NotFoundError(`No active ${input.provider} credentials for ${input.environment}`);
  return { environment: row.environment, version: row.version, deactivatedAt: row.deactivated_at!.toISOString() };
}

/** How long this process may answer "the active set is X" (or "there is none") without reading it again. */
export const ACTIVE_CREDENTIALS_CACHE_MS = 1_000;
/** How long an opened *version* stays cached (its content never changes; this bounds memory and exposure). */
export const VERSION_CREDENTIALS_CACHE_MS = 60_000;

type CredentialLookup = { tenantId: string; provider: Provider; environment: Environment; version?: number };

export { type CredentialsCache, createCredentialsCache, type OpenedCredentials } from "./credentials-cache.ts";

function cacheKey(input: CredentialLookup): string {
  return `${input.tenantId}\u0000${input.provider}\u0000${input.environment}\u0000${input.version ?? "active"}`;
}

/**
 * Forgets what this process cached about a tenant's sets of one provider and environment (after it stored
 * or deactivated one). Other instances see the change within {@link ACTIVE_CREDENTIALS_CACHE_MS}.
 */
export function forgetCredentials(deps: Pick<Deps, "caches">, input: { tenantId: string; provider: Provider; environment: Environment }): void {
  deps.caches.credentials.delete(cacheKey(input));
}

/**
 * The plaintext of a set, for a provider call: the active set of the environment, or a given version
 * (a payment's own). Null when there is none.
 *
 * Cached by the gateway (`deps.caches.credentials`): a given version for {@link VERSION_CREDENTIALS_CACHE_MS}, the active set (and its
 * absence) for {@link ACTIVE_CREDENTIALS_CACHE_MS}; concurrent callers share one read. The plaintext stays
 * in memory only, like the keyring's keys; it is never logged.
 */
export function openCredentials(deps: Pick<Deps, "db" | "keyring" | "caches">, input: CredentialLookup): Promise<OpenedCredentials | null> {
  const cache = deps.caches.credentials;
  const key = cacheKey(input);
  const hit = cache.get(key);
  if (hit) return hit.opened;
  const entry = { opened: readAndOpen(deps, input) };
  cache.set(key, entry, { ttl: input.version === undefined ? ACTIVE_CREDENTIALS_CACHE_MS : VERSION_CREDENTIALS_CACHE_MS });
  // A failed read (database down, a value that cannot be opened) is not remembered.
  entry.opened.catch(() => {
    if (cache.peek(key) === entry) cache.delete(key);
  });
  return entry.opened;
}

async function readAndOpen(deps: Pick<Deps, "db" | "keyring">, input: CredentialLookup): Promise<OpenedCredentials | null> {
  let query = deps.db
    .selectFrom("provider_credentials")
    .select(["id", "version", "sealed"])
    .where("tenant_id", "=", input.tenantId)
    .where("provider", "=", input.provider)
    .where("environment", "=", input.environment);
  query = input.version === undefined ? query.where("active", "=", true) : query.where("version", "=", input.version);
  const row = await query.executeTakeFirst();
  if (!row) return null;
  const names = Object.keys(row.sealed);
  const values = await Promise.all(
    names.map((name) => deps.keyring.open(row.sealed[name]!, { tenantId: input.tenantId, field: credentialField(input.provider, name) })),
  );
  const fields: Record<string, string> = {};
  for (const [i, name] of names.entries()) fields[name] = values[i]!;
  return { id: row.id, version: row.version, fields: Object.freeze(fields) };
}
