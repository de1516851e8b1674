/**
 * Upkeep of `idempotency_keys`: re-sealing sealed answers under the keyring's current key (so `passerelle keys
 * rotate` can retire an old key without breaking a replay that is still due). Keys past their 24 hours are
 * pruned with the other old rows (`services/retention`, `RETENTION_IDEMPOTENCY_KEYS`).
 */
import { sql } from "kysely";
import type { Keyring } from "../../crypto/seal.ts";
import type { Deps } from "../deps.ts";
import { SEALED_RESPONSE_FIELD, type StoredResponseBody } from "./idempotency-keys.ts";

/**
 * Re-seals every stored sealed answer that is not sealed under `keyring.currentVersion`, each row in its
 * own transaction with the row locked. Meant to run inside `passerelle keys rotate`.
 */
export async function resealIdempotencyResponses(deps: Pick<Deps, "db">, keyring: Keyring): Promise<{ resealed: number; current: number }> {
  const report = { resealed: 0, current: 0 };
  const rows = await deps.db
    .selectFrom("idempotency_keys")
    .select(["tenant_id", "environment", "method", "path", "key"])
    .where(sql<boolean>`response_body ->> 'sealed' is not null`)
    .execute();
  for (const id of rows) {
    await deps.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom("idempotency_keys")
        .select("response_body")
        .where((eb) => eb.and(id))
        .forUpdate()
        .executeTakeFirst();
      const stored = row?.response_body as StoredResponseBody | null | undefined;
      if (!stored || !("sealed" in stored)) return; // purged or overwritten meanwhile
      if (keyring.versionOf(stored.sealed) === keyring.currentVersion) {
        report.current++;
        return;
      }
      const context = { tenantId: id.tenant_id, field: SEALED_RESPONSE_FIELD };
      const sealed = await keyring.seal(await keyring.open(stored.sealed, context), context);
      await tx
        .updateTable("idempotency_keys")
        .set({ response_body: { sealed } })
        .where((eb) => eb.and(id))
        .execute();
      report.resealed++;
    });
  }
  return report;
}
