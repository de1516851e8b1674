/**
 * `passerelle keys rotate`: re-seals every stored secret that is not sealed under the keyring's current
 * key, so that an old key can then be removed from `ENCRYPTION_KEYS`. Each row is re-sealed in its own
 * transaction with the row locked, so rotation can run beside a serving gateway and be run again after an
 * interruption.
 */
import { credentialField, tenantSecretField } from "../../crypto/sealed-fields.ts";
import type { Keyring } from "../../crypto/seal.ts";
import type { SealedFields } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { resealIdempotencyResponses } from "../idempotency/mod.ts";

export interface RotationReport {
  /** Values re-sealed under the current key. */
  resealed: number;
  /** Values that were already sealed under it. */
  current: number;
}

/** Re-seals every sealed value under `keyring.currentVersion`. */
export async function rotateSealedSecrets(deps: Pick<Deps, "db">, keyring: Keyring): Promise<RotationReport> {
  const report: RotationReport = { resealed: 0, current: 0 };
  const outdated = (sealed: string) => keyring.versionOf(sealed) !== keyring.currentVersion;

  const credentialIds = await deps.db.selectFrom("provider_credentials").select("id").execute();
  for (const { id } of credentialIds) {
    await deps.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom("provider_credentials")
        .select(["tenant_id", "provider", "sealed"])
        .where("id", "=", id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const sealed: SealedFields = { ...row.sealed };
      let changed = false;
      for (const [name, value] of Object.entries(row.sealed)) {
        if (!outdated(value)) {
          report.current++;
          continue;
        }
        const context = { tenantId: row.tenant_id, field: credentialField(row.provider, name) };
        sealed[name] = await keyring.seal(await keyring.open(value, context), context);
        report.resealed++;
        changed = true;
      }
      if (changed) await tx.updateTable("provider_credentials").set({ sealed }).where("id", "=", id).execute();
    });
  }

  const secretIds = await deps.db.selectFrom("tenant_secrets").select("id").execute();
  for (const { id } of secretIds) {
    await deps.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom("tenant_secrets")
        .select(["tenant_id", "kind", "sealed_secret"])
        .where("id", "=", id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (!outdated(row.sealed_secret)) {
        report.current++;
        return;
      }
      const context = { tenantId: row.tenant_id, field: tenantSecretField(row.kind) };
      const resealed = await keyring.seal(await keyring.open(row.sealed_secret, context), context);
      await tx.updateTable("tenant_secrets").set({ sealed_secret: resealed }).where("id", "=", id).execute();
      report.resealed++;
    });
  }
  // Stored idempotent answers that held a secret shown once (contract §9) are sealed too.
  const idempotency = await resealIdempotencyResponses(deps, keyring);
  report.resealed += idempotency.resealed;
  report.current += idempotency.current;
  return report;
}
