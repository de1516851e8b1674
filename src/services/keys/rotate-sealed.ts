/**
 * `passerelle keys rotate`: re-seals every stored secret that is not sealed under the keyring's current
 * key, so that an old key can then be removed from `ENCRYPTION_KEYS`. Each row is re-sealed in its own
 * transaction with the row locked, so rotation can run beside a serving gateway, and an interrupted run
 * (killed half-way) keeps what it committed: the next run finds those rows under the current key, leaves
 * them alone and re-seals the rest.
 */
import { sql, type Kysely } from "kysely";
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

/** How far a rotation is: `done` of the `total` values found under older keys when it started. */
export interface RotationProgress {
  done: number;
  total: number;
}

export interface RotationOptions {
  /** Called after each committed row (and once after the stored idempotent answers); awaited, so it may pace the rotation. */
  afterRow?: (progress: RotationProgress) => void | Promise<void>;
}

/**
 * Re-seals every sealed value under `keyring.currentVersion`.
 *
 * @example
 * ```ts
 * const report = await rotateSealedSecrets(gateway.deps, gateway.deps.keyring, {
 *   afterRow: ({ done, total }) => console.error(`re-sealed ${done}/${total}`),
 * });
 * ```
 */
export async function rotateSealedSecrets(deps: Pick<Deps, "db">, keyring: Keyring, options: RotationOptions = {}): Promise<RotationReport> {
  const report: RotationReport = { resealed: 0, current: 0 };
  const isCurrent = (value: string) => keyring.versionOf(value) === keyring.currentVersion;
  /** Of a row's values, how many are under an older key; the others count as current now. */
  const olderIn = (values: string[]) => {
    const older = values.filter((value) => !isCurrent(value)).length;
    return { older, current: values.length - older };
  };

  // One read of every sealed value first: the total for the progress, and the rows that need work. Rows
  // already under the current key (all of them after a finished run, the first part after an interrupted one)
  // are counted and never locked or rewritten.
  const credentials = await deps.db.selectFrom("provider_credentials").select(["id", "sealed"]).execute();
  const tenantSecrets = await deps.db.selectFrom("tenant_secrets").select(["id", "sealed_secret"]).execute();
  const endpointSecrets = await deps.db.selectFrom("webhook_endpoint_secrets").select(["id", "sealed_secret"]).execute();
  // Stored idempotent answers that held a secret shown once (contract §9); re-sealed by the idempotency module.
  const sealedAnswers = await deps.db
    .selectFrom("idempotency_keys")
    .select(sql<string>`response_body ->> 'sealed'`.as("sealed"))
    .where(sql<boolean>`response_body ->> 'sealed' is not null`)
    .execute();

  const pending = <T extends { id: string }>(rows: T[], values: (row: T) => string[]) =>
    rows.flatMap((row) => {
      const { older, current } = olderIn(values(row));
      if (older === 0) report.current += current;
      return older === 0 ? [] : [{ id: row.id, older }];
    });
  const credentialRows = pending(credentials, (row) => Object.values(row.sealed));
  const tenantSecretRows = pending(tenantSecrets, (row) => [row.sealed_secret]);
  const endpointSecretRows = pending(endpointSecrets, (row) => [row.sealed_secret]);
  const olderAnswers = olderIn(sealedAnswers.map((row) => row.sealed)).older;
  const progress: RotationProgress = {
    done: 0,
    total: [...credentialRows, ...tenantSecretRows, ...endpointSecretRows].reduce((sum, row) => sum + row.older, olderAnswers),
  };

  /** The value sealed under the current key, or undefined when it already is (re-sealed meanwhile by someone else). */
  const reseal = async (value: string, context: SealContext): Promise<string | undefined> => {
    if (isCurrent(value)) {
      report.current++;
      return undefined;
    }
    report.resealed++;
    return keyring.seal(await keyring.open(value, context), context);
  };
  /** Runs `work` for each row, each in its own transaction, and reports the progress once it is committed. */
  const eachRow = async (rows: { id: string; older: number }[], work: (tx: Kysely<Database>, id: string) => Promise<void>) => {
    for (const { id, older } of rows) {
      await deps.db.transaction().execute((tx) => work(tx, id));
      progress.done += older;
      await options.afterRow?.({ ...progress });
    }
  };

  await eachRow(credentialRows, async (tx, id) => {
    const row = await tx.selectFrom("provider_credentials").select(["tenant_id", "provider", "sealed"]).where("id", "=", id).forUpdate().executeTakeFirst();
    if (!row) return; // deleted meanwhile
    const sealed: SealedFields = { ...row.sealed };
    let changed = false;
    for (const [name, value] of Object.entries(row.sealed)) {
      const next = await reseal(value, { tenantId: row.tenant_id, field: credentialField(row.provider, name) });
      if (next) [sealed[name], changed] = [next, true];
    }
    if (changed) await tx.updateTable("provider_credentials").set({ sealed }).where("id", "=", id).execute();
  });

  await eachRow(tenantSecretRows, async (tx, id) => {
    const row = await tx.selectFrom("tenant_secrets").select(["tenant_id", "kind", "sealed_secret"]).where("id", "=", id).forUpdate().executeTakeFirst();
    if (!row) return;
    const next = await reseal(row.sealed_secret, { tenantId: row.tenant_id, field: tenantSecretField(row.kind) });
    if (next) await tx.updateTable("tenant_secrets").set({ sealed_secret: next }).where("id", "=", id).execute();
  });

  await eachRow(endpointSecretRows, async (tx, id) => {
    const row = await tx.selectFrom("webhook_endpoint_secrets").select(["tenant_id", "sealed_secret"]).where("id", "=", id).forUpdate().executeTakeFirst();
    if (!row) return;
    const next = await reseal(row.sealed_secret, { tenantId: row.tenant_id, field: ENDPOINT_SECRET_FIELD });
    if (next) await tx.updateTable("webhook_endpoint_secrets").set({ sealed_secret: next }).where("id", "=", id).execute();
  });

  const idempotency = await resealIdempotencyResponses(deps, keyring);
  report.resealed += idempotency.resealed;
  report.current += idempotency.current;
  if (olderAnswers > 0) {
    progress.done += olderAnswers;
    await options.afterRow?.({ ...progress });
  }
  return report;
}
