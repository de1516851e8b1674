/**
 * `passerelle keys rotate`: re-seals every stored secret that is not sealed under the keyring's current
 * key, so that an old key can then be removed from `ENCRYPTION_KEYS`. Each row is re-sealed in its own
 * transaction with the row locked, so rotation can run beside a serving gateway and be run again after an
 * interruption.
 */
import type { Kysely } from "kysely";
import { credentialField, tenantSecretField } from "../../crypto/sealed-fields.ts";
import type { Keyring, SealContext } from "../../crypto/seal.ts";
import type { Database, SealedFields } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { resealIdempotencyResponses } from "../idempotency/mod.ts";
import { ENDPOINT_SECRET_FIELD } from "../webhooks/endpoints.ts";

export interface RotationReport {
  /** Values re-sealed under the current key. */
  resealed: number;
  /** Values that were already sealed under it. */
  current: number;
}

/** Re-seals every sealed value under `keyring.currentVersion`. */
export async function rotateSealedSecrets(deps: Pick<Deps, "db">, keyring: Keyring): Promise<RotationReport> {
  const report: RotationReport = { resealed: 0, current: 0 };

  /** The value sealed under the current key, or undefined when it already is. */
  const reseal = async (value: string, context: SealContext): Promise<string | undefined> => {
    if (keyring.versionOf(value) === keyring.currentVersion) {
      report.current++;
      return undefined;
    }
    report.resealed++;
    return keyring.seal(await keyring.open(value, context), context);
  };
  /** Runs `work` for each id, each in its own transaction. */
  const eachRow = async (ids: { id: string }[], work: (tx: Kysely<Database>, id: string) => Promise<void>) => {
    for (const { id } of ids) await deps.db.transaction().execute((tx) => work(tx, id));
  };

  await eachRow(await deps.db.selectFrom("provider_credentials").select("id").execute(), async (tx, id) => {
    const row = await tx.selectFrom("provider_credentials").select(["tenant_id", "provider", "sealed"]).where("id", "=", id).forUpdate().executeTakeFirstOrThrow();
    const sealed: SealedFields = { ...row.sealed };
    let changed = false;
    for (const [name, value] of Object.entries(row.sealed)) {
      const next = await reseal(value, { tenantId: row.tenant_id, field: credentialField(row.provider, name) });
      if (next) [sealed[name], changed] = [next, true];
    }
    if (changed) await tx.updateTable("provider_credentials").set({ sealed }).where("id", "=", id).execute();
  });

  await eachRow(await deps.db.selectFrom("tenant_secrets").select("id").execute(), async (tx, id) => {
    const row = await tx.selectFrom("tenant_secrets").select(["tenant_id", "kind", "sealed_secret"]).where("id", "=", id).forUpdate().executeTakeFirstOrThrow();
    const next = await reseal(row.sealed_secret, { tenantId: row.tenant_id, field: tenantSecretField(row.kind) });
    if (next) await tx.updateTable("tenant_secrets").set({ sealed_secret: next }).where("id", "=", id).execute();
  });

  await eachRow(await deps.db.selectFrom("webhook_endpoint_secrets").select("id").execute(), async (tx, id) => {
    const row = await tx.selectFrom("webhook_endpoint_secrets").select(["tenant_id", "sealed_secret"]).where("id", "=", id).forUpdate().executeTakeFirstOrThrow();
    const next = await reseal(row.sealed_secret, { tenantId: row.tenant_id, field: ENDPOINT_SECRET_FIELD });
    if (next) await tx.updateTable("webhook_endpoint_secrets").set({ sealed_secret: next }).where("id", "=", id).execute();
  });

  // Stored idempotent answers that held a secret shown once (contract §9) are sealed too.
  const idempotency = await resealIdempotencyResponses(deps, keyring);
  report.resealed += idempotency.resealed;
  report.current += idempotency.current;
  return report;
}
