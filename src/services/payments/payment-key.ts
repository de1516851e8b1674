/**
 * A payment's own `Idempotency-Key` (migration 0034; issue 28, the idempotency window for money in).
 *
 * The idempotency layer (`services/idempotency`) runs a request with a key again whenever the key's answer was
 * not stored after the work committed: the key's lock ran out while the first request was still at work (a
 * PostgreSQL restart behind PgBouncer, a node whose clock ran ahead), the API process was killed after the
 * provider acted, a 5xx after the commit freed the key. Each run made a new payment, and the provider pushed a
 * second prompt (or made a second checkout). Now the payment row carries the key, with the path it was sent to
 * (the layer's scope) and the request's hash, unique per (tenant, environment, path, key), written by the very
 * statement that inserts the payment (`… on conflict do nothing`: no statement more on the normal path). A run
 * whose insert found the key taken answers the key's payment as it stands — never pushes, never creates at the
 * provider — or 422 `idempotency_mismatch` when its body is another.
 *
 * The key is the payment's, whatever its attempts (failover, rescue tries: one row). A payment that failed in
 * the very request that made it, before anything reached the phone (refused, unreachable, its circuits open: the
 * answers with no `paymentId`), gives its key back ({@link releaseFailedPaymentKey}), so that a retry after such a
 * 5xx runs again as contract §9 says, rather than being answered a failure forever.
 *
 * @module
 */
import type { Environment, Payment } from "../../db/schema.ts";
import { AppError, ProviderError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { requestHash } from "../idempotency/request-hash.ts";

/** The `Idempotency-Key` a request came with, and the concrete path it was sent to (the layer's scope, contract §9). */
export interface RequestKey {
  key: string;
  path: string;
}

/** A request's key as the payment row keeps it: with the request's hash. */
export interface PaymentKey extends RequestKey {
  hash: string;
}

/** The key of `request` (its validated input), or undefined without one. */
export async function paymentKeyOf(key: RequestKey | undefined, request: unknown): Promise<PaymentKey | undefined> {
  return key && { ...key, hash: await requestHash(request) };
}

/** The payment columns that hold the key (all null without one). */
export function paymentKeyColumns(key: PaymentKey | undefined): {
  idempotency_key: string | null;
  idempotency_path: string | null;
  idempotency_hash: string | null;
} {
  return { idempotency_key: key?.key ?? null, idempotency_path: key?.path ?? null, idempotency_hash: key?.hash ?? null };
}

/** The key's payment exists already: the run that found it answers it (thrown from where the insert found the key taken). */
export class KeyedPaymentExists extends Error {
  override name = "KeyedPaymentExists";
  constructor(readonly payment: Payment) {
    super(`the Idempotency-Key's payment ${payment.id} exists already`);
  }
}

/**
 * The payment made with this key, if any.
 *
 * @throws {AppError} 422 `idempotency_mismatch` when that payment was asked with another body.
 */
export async function paymentByKey(
  deps: Pick<Deps, "db">,
  scope: { tenantId: string; environment: Environment },
  key: PaymentKey,
): Promise<Payment | undefined> {
  const row = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("idempotency_path", "=", key.path)
    .where("idempotency_key", "=", key.key)
    .executeTakeFirst();
  if (row) assertSameRequest(row, key);
  return row;
}

/** 422 `idempotency_mismatch` unless the payment was made by a request with this body. */
export function assertSameRequest(row: Pick<Payment, "idempotency_hash">, key: PaymentKey): void {
  if (row.idempotency_hash !== key.hash) throw new AppError(422, "idempotency_mismatch", "This Idempotency-Key was already used with another request body");
}

/**
 * After the request that made the key's payment failed with `error`: when that answer names no payment (nothing
 * reached the phone, the payment is `failed`), the payment gives its key back, so that a retry runs again, as
 * the idempotency layer lets it (it stores no such 5xx; a 422 it stores and replays). Only a failed payment
 * does: one left pending (an unknown outcome, named in its 502/504) keeps its key. Never throws.
 */
export async function releaseFailedPaymentKey(
  deps: Pick<Deps, "db" | "logger">,
  scope: { tenantId: string; environment: Environment },
  key: PaymentKey | undefined,
  error: unknown,
): Promise<void> {
  if (!key || !(error instanceof ProviderError) || error.extras.paymentId !== undefined) return;
  await deps.db
    .updateTable("payments")
    .set({ idempotency_key: null, idempotency_path: null, idempotency_hash: null })
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("idempotency_path", "=", key.path)
    .where("idempotency_key", "=", key.key)
    .where("state", "=", "failed")
    .execute()
    .catch((err: unknown) => deps.logger.warn({ err }, "could not give a failed payment's Idempotency-Key back; a retry with it answers that payment"));
}
