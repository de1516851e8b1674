/**
 * An endpoint's health, as a merchant reads it in a webhook portal (Svix's, Stripe's): is it receiving,
 * how often its recent deliveries succeeded, the last error and since when it has been failing.
 *
 * It is read from the endpoint's last {@link HEALTH_WINDOW} deliveries (the index
 * `deliveries_endpoint_idx`, newest first), so a list of 20 endpoints reads at most 2,000 rows, whatever
 * the log's length. The status follows the endpoint's own record, which delivery workers keep:
 *
 * | status     | when                                                                        |
 * |------------|-----------------------------------------------------------------------------|
 * | `disabled` | switched off, by the merchant or by the gateway (`disabledReason` says why) |
 * | `failing`  | its attempts have failed without a success since `failingSince`             |
 * | `healthy`  | its latest attempt succeeded                                                |
 * | `idle`     | nothing was delivered to it yet                                             |
 *
 * @module
 */
import { sql } from "kysely";
import type { WebhookEndpoint } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";

/** How many of an endpoint's latest deliveries its health is read from. */
export const HEALTH_WINDOW = 100;

export type EndpointHealthStatus = "healthy" | "failing" | "disabled" | "idle";

export interface EndpointHealth {
  status: EndpointHealthStatus;
  /** Succeeded over finished (succeeded + failed) among the last {@link HEALTH_WINDOW} deliveries; null when none finished. */
  successRate: number | null;
  /** The last {@link HEALTH_WINDOW} deliveries by state. */
  recent: { succeeded: number; failed: number; pending: number };
  /** When a delivery last succeeded. */
  lastDeliveredAt: string | null;
  /** The latest delivery's error among those that have one, and when that delivery last changed. */
  lastError: string | null;
  lastErrorAt: string | null;
  /** When the running streak of failures began; null when the last attempt succeeded. */
  failingSince: string | null;
}

interface HealthRow {
  endpoint_id: string;
  succeeded: number;
  failed: number;
  pending: number;
  last_delivered_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
}

/** The health of each of these endpoints (all of one tenant), in one statement. */
export async function endpointHealth(deps: Pick<Deps, "db">, endpoints: readonly WebhookEndpoint[]): Promise<Map<string, EndpointHealth>> {
  const health = new Map<string, EndpointHealth>();
  if (endpoints.length === 0) return health;
  const ids = endpoints.map((endpoint) => endpoint.id);
  const { rows } = await sql<HealthRow>`
    select e.id as endpoint_id,
      count(*) filter (where d.state = 'succeeded')::int as succeeded,
      count(*) filter (where d.state = 'failed')::int as failed,
      count(*) filter (where d.state = 'pending')::int as pending,
      max(d.delivered_at) as last_delivered_at,
      (array_agg(d.last_error order by d.id desc) filter (where d.last_error is not null))[1] as last_error,
      (array_agg(d.updated_at order by d.id desc) filter (where d.last_error is not null))[1] as last_error_at
    from unnest(${sql.val(ids)}::text[]) as e(id)
    left join lateral (
      select state, delivered_at, last_error, updated_at, id from deliveries
      where deliveries.endpoint_id = e.id
      order by deliveries.id desc
      limit ${sql.lit(HEALTH_WINDOW)}
    ) as d on true
    group by e.id`.execute(deps.db);
  const byId = new Map(rows.map((row) => [row.endpoint_id, row]));
  for (const endpoint of endpoints) {
    const row = byId.get(endpoint.id);
    const recent = { succeeded: row?.succeeded ?? 0, failed: row?.failed ?? 0, pending: row?.pending ?? 0 };
    const finished = recent.succeeded + recent.failed;
    const lastErrorAt = row?.last_error_at ? new Date(row.last_error_at) : null;
    const lastDeliveredAt = row?.last_delivered_at ? new Date(row.last_delivered_at) : null;
    health.set(endpoint.id, {
      status: statusOf(endpoint, recent),
      successRate: finished === 0 ? null : recent.succeeded / finished,
      recent,
      lastDeliveredAt: lastDeliveredAt?.toISOString() ?? null,
      lastError: row?.last_error ?? null,
      lastErrorAt: lastErrorAt?.toISOString() ?? null,
      failingSince: endpoint.failing_since?.toISOString() ?? null,
    });
  }
  return health;
}

function statusOf(endpoint: WebhookEndpoint, recent: EndpointHealth["recent"]): EndpointHealthStatus {
  if (!endpoint.enabled) return "disabled";
  if (endpoint.failing_since) return "failing";
  if (recent.succeeded + recent.failed + recent.pending === 0) return "idle";
  return "healthy";
}
