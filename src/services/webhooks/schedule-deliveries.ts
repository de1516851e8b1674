/**
 * Handing freshly recorded deliveries to the `webhooks` queue, once the transaction that wrote them has
 * committed (see `recordEvent`).
 */
import type { Deps } from "../deps.ts";
import { enqueueDelivery } from "../../jobs/queues.ts";

/**
 * Enqueues the first attempt of each delivery under its own id (a second call with the same ids is a
 * no-op while the jobs are live). Never throws: an id that cannot be enqueued is logged, and the sweeper
 * sends it within a minute, since the row is already due in the database.
 *
 * @example
 * ```ts
 * const recorded = await deps.db.transaction().execute((tx) => recordEvent(tx, deps.now(), input));
 * await scheduleDeliveries(deps, recorded.deliveryIds);
 * ```
 */
export async function scheduleDeliveries(deps: Pick<Deps, "queue" | "logger">, deliveryIds: readonly string[]): Promise<void> {
  await Promise.all(deliveryIds.map((deliveryId) => enqueueDelivery(deps, { deliveryId, attempt: 1 })));
}
