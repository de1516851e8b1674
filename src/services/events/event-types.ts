/**
 * The event types of contract §5–§6, and the envelope every delivery carries.
 */
import type { Environment } from "../../config.ts";
import type { EventType, JsonValue } from "../../db/schema.ts";

export const EVENT_TYPES = [
  "payment.completed",
  "payment.failed",
  "payment.cancelled",
  "payment.refunded",
  "permit.activated",
  "permit.declined",
  "permit.revoked",
  "permit.charge.succeeded",
  "permit.charge.failed",
  "permit.schedule.past_due",
  "payout.sent",
  "payout.failed",
  "refund.succeeded",
  "refund.failed",
  "payment_link.paid",
  "payment.rescue_available",
  "webhook.test",
] as const satisfies readonly EventType[];

/** What a tenant's endpoint and a callback URL receive (contract §6). */
export interface EventEnvelope {
  id: string;
  type: EventType;
  createdAt: string;
  tenantId: string;
  environment: Environment;
  data: Record<string, JsonValue>;
}

/** The envelope of a stored event. */
export function eventEnvelope(row: {
  id: string;
  type: EventType;
  created_at: Date;
  tenant_id: string;
  environment: Environment;
  data: Record<string, JsonValue>;
}): EventEnvelope {
  return { id: row.id, type: row.type, createdAt: row.created_at.toISOString(), tenantId: row.tenant_id, environment: row.environment, data: row.data };
}
