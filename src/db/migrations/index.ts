/**
 * Every migration, in order, as code: no `FileMigrationProvider`, so it works when bundled.
 * Names sort in the order they run; never rename or edit one that has shipped, add a new one.
 *
 * @module
 */
import type { Migration } from "kysely/migration";
import { initialMigration } from "./0001_initial.ts";
import { paymentsMigration } from "./0002_payments.ts";
import { eventsWebhooksMigration } from "./0003_events_webhooks.ts";
import { providerAMigration } from "./0005_provider_a.ts";
import { providerBMigration } from "./0006_provider_b.ts";
import { receiptsStuckMigration } from "./0007_receipts_stuck.ts";
import { permitsMigration } from "./0008_permits.ts";
import { permitSchedulesMigration } from "./0009_permit_schedules.ts";
import { scheduleTimeZoneMigration } from "./0009_schedule_time_zone.ts";
import { anyProviderMigration } from "./0010_any_provider.ts";
import { moneyOutMigration } from "./0011_money_out.ts";
import { routingMigration } from "./0012_routing.ts";
import { paymentPhoneSearchMigration } from "./0013_payment_phone_search.ts";
import { ledgerHoldingsMigration } from "./0014_ledger_holdings.ts";
import { refundedByProviderMigration } from "./0015_refunded_by_provider.ts";
import { ledgerGivenBackMigration } from "./0016_ledger_given_back.ts";
import { routingVersionsMigration } from "./0017_routing_versions.ts";
import { overviewIndexesMigration } from "./0018_overview_indexes.ts";
import { retentionMigration } from "./0019_retention.ts";
import { merchantReferenceMigration } from "./0021_merchant_reference.ts";
import { overviewCoveringMigration } from "./0023_overview_covering.ts";
import { paymentLinksMigration } from "./0024_payment_links.ts";
import { peopleMigration } from "./0025_people.ts";
import { signInMigration } from "./0026_sign_in.ts";
import { anyProviderCredentialsMigration } from "./0027_any_provider_credentials.ts";
import { settledRereadsMigration } from "./0028_settled_rereads.ts";
import { tenantDisabledReasonMigration } from "./0029_tenant_disabled_reason.ts";
import { rolesAuditLogMigration } from "./0030_roles_audit_log.ts";
import { paymentRescuesMigration } from "./0031_payment_rescues.ts";
import { permitChargeIdempotencyMigration } from "./0032_permit_charge_idempotency.ts";
import { moneyOutIdempotencyMigration } from "./0033_money_out_idempotency.ts";
import { paymentIdempotencyMigration } from "./0034_payment_idempotency.ts";
import { routeOutcomeSlotsMigration } from "./0035_route_outcome_slots.ts";
import { auditChainHeadsMigration } from "./0036_audit_chain_heads.ts";

/** The gateway's migrations by name, for `Migrator`'s provider. */
export const migrations: Record<string, Migration> = {
  "0001_initial": initialMigration,
  "0002_payments": paymentsMigration,
  "0003_events_webhooks": eventsWebhooksMigration,
  "0005_provider_a": providerAMigration,
  "0006_provider_b": providerBMigration,
  "0007_receipts_stuck": receiptsStuckMigration,
  "0008_permits": permitsMigration,
  "0009_permit_schedules": permitSchedulesMigration,
  "0009_schedule_time_zone": scheduleTimeZoneMigration,
  "0010_any_provider": anyProviderMigration,
  "0011_money_out": moneyOutMigration,
  "0012_routing": routingMigration,
  "0013_payment_phone_search": paymentPhoneSearchMigration,
  "0014_ledger_holdings": ledgerHoldingsMigration,
  "0015_refunded_by_provider": refundedByProviderMigration,
  "0016_ledger_given_back": ledgerGivenBackMigration,
  "0017_routing_versions": routingVersionsMigration,
  "0018_overview_indexes": overviewIndexesMigration,
  "0019_retention": retentionMigration,
  "0021_merchant_reference": merchantReferenceMigration,
  "0023_overview_covering": overviewCoveringMigration,
  "0024_payment_links": paymentLinksMigration,
  "0025_people": peopleMigration,
  "0026_sign_in": signInMigration,
  "0027_any_provider_credentials": anyProviderCredentialsMigration,
  "0028_settled_rereads": settledRereadsMigration,
  "0029_tenant_disabled_reason": tenantDisabledReasonMigration,
  "0030_roles_audit_log": rolesAuditLogMigration,
  "0031_payment_rescues": paymentRescuesMigration,
  "0032_permit_charge_idempotency": permitChargeIdempotencyMigration,
  "0033_money_out_idempotency": moneyOutIdempotencyMigration,
  "0034_payment_idempotency": paymentIdempotencyMigration,
  "0035_route_outcome_slots": routeOutcomeSlotsMigration,
  "0036_audit_chain_heads": auditChainHeadsMigration,
};
