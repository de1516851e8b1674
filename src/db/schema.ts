/**
 * Table types for Kysely: the shape of every table as migration 0001 creates it.
 *
 * Conventions: snake_case columns; text ids minted by the app (`ten_…`, `key_…`);
 * `timestamptz` columns read back as `Date` on both drivers; `int8`/`count(*)` read
 * back as `number` (see `connect.ts`); jsonb columns take and return plain values —
 * never pass `JSON.stringify(...)` output, postgres.js would store a JSON string.
 *
 * @module
 */
import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from "kysely";
import type { Environment } from "../environment.ts";

/** Declared once in `environment.ts`; re-exported for the importers of the table types. */
export type { Environment };

/**
 * A payment provider's name: its folder, the registry's key, the `provider` column of what it carries (the
 * port's `ProviderName`). Which providers exist is the registry's to say, not a type's.
 */
/** A rate limit: `burst` requests at once, `rps` per second sustained (a tenant's `rate_limit`, `RATE_LIMIT_*`). */
export interface RateLimit {
  rps: number;
  burst: number;
}

export type Provider = string;

/** Any value that survives a JSON round trip. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A jsonb column holding `T`: written and read as a plain value, never as a string.
 * (Kysely's own `JSONColumnType` expects strings on insert, which double-encodes on postgres.js.)
 */
export type Jsonb<T> = ColumnType<T, T, T>;

/** A nullable column of `T` that may be left out on insert (stored as null). */
export type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** A nullable jsonb column holding `T`, written and read as a plain value. */
export type NullableJsonb<T> = Nullable<T>;

/** A timestamptz column with a database default of `now()`. */
export type CreatedAt = ColumnType<Date, Date | undefined, Date>;

/** A nullable timestamptz column. */
export type NullableTimestamp = Nullable<Date>;

/** A merchant using the gateway. */
export interface TenantsTable {
  id: string;
  name: string;
  store_name: string;
  disabled: Generated<boolean>;
  /** The operator's reason for disabling it; null while enabled (migration 0029). */
  disabled_reason: Nullable<string>;
  live_enabled: Generated<boolean>;
  /** The shop's people must sign in with a two-factor code (issue 30, migration 0026). */
  require_two_factor: Generated<boolean>;
  rate_limit: NullableJsonb<RateLimit>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** API keys: only an HMAC of the secret is stored, plus a short prefix for display. */
export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  environment: Environment;
  name: Nullable<string>;
  prefix: string;
  /** HMAC-SHA256 (hex) of the secret with the API key pepper; unique. */
  secret_hash: string;
  created_at: CreatedAt;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

/** What a tenant secret is used for. */
export type TenantSecretKind = "callback";

/** Sealed signing secrets; after a rotation the old row gets `expires_at` = now + 24 h. */
export interface TenantSecretsTable {
  id: string;
  tenant_id: string;
  kind: TenantSecretKind;
  /** `v<N>:<base64(iv|ciphertext|tag)>`, see `crypto/`. */
  sealed_secret: string;
  created_at: CreatedAt;
  expires_at: NullableTimestamp;
}

/** Sealed values of one credential set, by field name (`masterKey`, `secretKey`, …). */
export type SealedFields = Record<string, string>;

/** Display form of one credential set, by field name: the last 4 characters, or null when unset. */
export type MaskedFields = Record<string, string | null>;

/**
 * Versioned, sealed provider credential sets. At most one active set per
 * (tenant, provider, environment); old versions stay for in-flight payments.
 */
export interface ProviderCredentialsTable {
  id: string;
  tenant_id: string;
  provider: Provider;
  environment: Environment;
  version: number;
  active: Generated<boolean>;
  sealed: Jsonb<SealedFields>;
  masked: Jsonb<MaskedFields>;
  created_at: CreatedAt;
  deactivated_at: NullableTimestamp;
}

/** Where an idempotent request stands. */
export type IdempotencyState = "in_flight" | "done";

/**
 * One row per Idempotency-Key, scoped by tenant, environment, method and concrete path.
 * `tenant_id` is deliberately not a foreign key: operator calls (POST /tenants) have no tenant
 * and use a sentinel chosen by the idempotency service.
 */
export interface IdempotencyKeysTable {
  tenant_id: string;
  environment: Environment;
  method: string;
  path: string;
  key: string;
  /** Hash of the canonical JSON body. */
  request_hash: string;
  state: IdempotencyState;
  /** While `in_flight`, others get 409 until this passes (a crashed request frees the key). */
  locked_until: Date;
  response_status: Nullable<number>;
  response_body: NullableJsonb<JsonValue>;
  response_headers: NullableJsonb<Record<string, string>>;
  created_at: CreatedAt;
  expires_at: Date;
}

/** Every table Kysely knows about. */
export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  tenant_secrets: TenantSecretsTable;
  provider_credentials: ProviderCredentialsTable;
  idempotency_keys: IdempotencyKeysTable;
  payments: PaymentsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_endpoint_secrets: WebhookEndpointSecretsTable;
  events: EventsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  ipn_messages: IpnMessagesTable;
  permits: PermitsTable;
  permit_charges: PermitChargesTable;
  permit_schedules: PermitSchedulesTable;
  payouts: PayoutsTable;
  ledger_entries: LedgerEntriesTable;
  reconciliation_differences: ReconciliationDifferencesTable;
  routing_rules: RoutingRulesTable;
  payment_attempts: PaymentAttemptsTable;
  route_outcomes: RouteOutcomesTable;
  routing_versions: RoutingVersionsTable;
  people: PeopleTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  password_resets: PasswordResetsTable;
  outbox_emails: OutboxEmailsTable;
  recovery_codes: RecoveryCodesTable;
  sign_ins: SignInsTable;
  sessions: SessionsTable;
  payment_links: PaymentLinksTable;
  audit_log: AuditLogTable;
  audit_log_purges: AuditLogPurgesTable;
  audit_chain_heads: AuditChainHeadsTable;
  payment_rescues: PaymentRescuesTable;
}

export type Tenant = Selectable<TenantsTable>;
export type NewTenant = Insertable<TenantsTable>;
export type TenantUpdate = Updateable<TenantsTable>;

export type ApiKey = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;

export type TenantSecret = Selectable<TenantSecretsTable>;
export type NewTenantSecret = Insertable<TenantSecretsTable>;
export type TenantSecretUpdate = Updateable<TenantSecretsTable>;

export type ProviderCredentials = Selectable<ProviderCredentialsTable>;
export type NewProviderCredentials = Insertable<ProviderCredentialsTable>;
export type ProviderCredentialsUpdate = Updateable<ProviderCredentialsTable>;

export type IdempotencyKey = Selectable<IdempotencyKeysTable>;
export type NewIdempotencyKey = Insertable<IdempotencyKeysTable>;
export type IdempotencyKeyUpdate = Updateable<IdempotencyKeysTable>;

/** What a payment is: a provider A direct payment, a provider B checkout, or a charge on a permit. */
export type PaymentKind = "direct_payment" | "checkout" | "permit_charge";

/** Our normalised payment state (contract §6); the provider's own word is kept in `provider_status`. */
export type PaymentState = "pending" | "succeeded" | "failed" | "cancelled" | "refunded";

/** Currencies, in whole units (no minor unit): XOF for bj, tg, ci, ne, sn, ml; GNF for gn. */
export type Currency = "XOF" | "GNF";

/** A checkout's `customData`: a flat object of strings, numbers and booleans, types kept as sent. */
export type CustomData = Record<string, string | number | boolean>;

/**
 * The customer as the payment was made: provider A's `firstname`, `lastname`, `email` and phone
 * (`phone` with `country`), or provider B's `name`, `email`, `phone`. Only the fields sent are present.
 */
export interface PaymentCustomer {
  name?: string;
  firstname?: string;
  lastname?: string;
  email?: string;
  /** International format with a leading `+`. */
  phone?: string;
  /** Lower-case two-letter country code (provider A). */
  country?: string;
}

/**
 * One payment of any kind, in one tenant and environment. `provider_account` says which account at the
 * provider it was made on: `service` for the gateway's own account of that provider and environment,
 * otherwise the `provider_credentials.id` of the tenant's set it was made with. Provider transaction ids
 * are unique per (environment, provider, provider_account) once known (a partial unique index).
 */
export interface PaymentsTable {
  /** `pay_` + ULID. */
  id: string;
  tenant_id: string;
  environment: Environment;
  /** Any provider the gateway runs (its registry name; migration 0010): `providerA`, `providerB`, or another. */
  provider: string;
  kind: PaymentKind;
  provider_account: string;
  /** Provider A's integer id as text, or provider B's invoice token; null until the provider answered. */
  provider_transaction_id: Nullable<string>;
  /** Provider A's reference (`trx_…`), when it gave one. */
  reference: Nullable<string>;
  /** The merchant's own reference (its order number), as given at creation (migration 0021). */
  merchant_reference: Nullable<string>;
  /** The customer's country for the reports, or `phone:` and the first four characters of its phone: generated (migration 0023). */
  report_country: GeneratedAlways<string | null>;
  /** The provider's raw status word (`approved`, `completed`, `canceled`…). */
  provider_status: Nullable<string>;
  state: Generated<PaymentState>;
  /** int8, read back as a number on both drivers. */
  amount: number;
  currency: Currency;
  description: string;
  customer: NullableJsonb<PaymentCustomer>;
  custom_data: NullableJsonb<CustomData>;
  /** The spec's `payment_method` (provider A), or the channel provider B reports. */
  payment_method: Nullable<string>;
  /** The tenant credential set version the payment was made with (IPNs are verified with it). */
  credential_version: Nullable<number>;
  /** A direct payment's `callback_url`: ours to call (contract §6), never sent to the provider. */
  callback_url: Nullable<string>;
  /** The provider may have acted on a request whose answer we never got (contract §4). */
  outcome_unknown: Generated<boolean>;
  failure_code: Nullable<string>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  completed_at: NullableTimestamp;
  /** Provider A: when the provider approved it (migration 0005). */
  approved_at: NullableTimestamp;
  /** Provider A: the last read from the provider (refresh-on-read's one-second floor). */
  provider_synced_at: NullableTimestamp;
  /** Unused since the sync chain (`payments/sync-chain.ts`) keys its steps on `created_at`; was the `providerA-sync` run count. */
  sync_attempt: Generated<number>;
  /** Unused since the sync chain (`payments/sync-chain.ts`); was when the next `providerA-sync` run was due. */
  next_sync_at: NullableTimestamp;
  /** Provider B: the receipt's URL as confirmed (migration 0007). */
  receipt_url: Nullable<string>;
  /** Provider B: the receipt's identifier as confirmed. */
  receipt_identifier: Nullable<string>;
  /** Provider B: its own reference of the payment, as confirmed. */
  provider_reference: Nullable<string>;
  /** The sum of its sent refunds (migration 0011). */
  amount_refunded: Generated<number>;
  /** What its provider says it refunded by itself, 0 when none; all of it when the provider does not say how much (migration 0015). */
  refunded_by_provider: Generated<number>;
  /** The operator, in the routing vocabulary, of a payment made by `POST /payments` (migration 0012). */
  operator: Nullable<string>;
  /** What the customer must do next (migration 0012). */
  next_action: NullableJsonb<NextAction>;
  /** The payment link it was paid through (`pl_…`), when it was (migration 0024). */
  payment_link_id: Generated<string | null>;
  /** When a settled payment is next read again from its provider (`direct-payments/settled-rereads.ts`); null: never (migration 0028). */
  reread_at: Generated<Date | null>;
  /**
   * The merchant's `Idempotency-Key` of the request that made it, with the concrete path it was sent to and the
   * request's hash (migration 0034): unique per (tenant, environment, path, key), so a retry with the key finds
   * this payment and never makes another. Null without the header, and once a payment that failed in the request
   * that made it, before anything reached the phone, gave its key back (the retry runs again, contract §9).
   */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  idempotency_path: ColumnType<string | null, string | null | undefined, string | null>;
  idempotency_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A payment link of one tenant and environment (migration 0024): paid by any customer on `/pay/{id}`. */
export interface PaymentLinksTable {
  /** `pl_` + 16 characters. */
  id: string;
  tenant_id: string;
  environment: Environment;
  /** The fixed amount, or null when the customer chooses between `amount_min` and `amount_max`. */
  amount: Nullable<number>;
  amount_min: Nullable<number>;
  amount_max: Nullable<number>;
  currency: Currency;
  description: string;
  reusable: boolean;
  expires_at: NullableTimestamp;
  /** The operators it takes (mtn, orange, wave…); null: every one the tenant can take. */
  wallets: NullableJsonb<string[]>;
  /** The countries it takes; null: every one. */
  countries: NullableJsonb<string[]>;
  metadata: NullableJsonb<CustomData>;
  merchant_reference: Nullable<string>;
  return_url: Nullable<string>;
  active: Generated<boolean>;
  deactivated_at: NullableTimestamp;
  /** Its payments that succeeded, raised in the transaction that records each (with `payment_link.paid`). */
  paid_count: Generated<number>;
  last_paid_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export type PaymentLink = Selectable<PaymentLinksTable>;

/** What the customer must do to complete a payment. */
export type NextAction =
  | { type: "none"; instructions: string }
  | { type: "enter_code"; instructions: string }
  | { type: "open_url"; url: string; instructions: string };

export type Payment = Selectable<PaymentsTable>;
export type NewPayment = Insertable<PaymentsTable>;
export type PaymentUpdate = Updateable<PaymentsTable>;

/** Every event type (contract §5–§6). */
export type EventType =
  | "payment.completed"
  | "payment.failed"
  | "payment.cancelled"
  | "payment.refunded"
  | "permit.activated"
  | "permit.declined"
  | "permit.revoked"
  | "permit.charge.succeeded"
  | "permit.charge.failed"
  | "permit.schedule.past_due"
  | "payout.sent"
  | "payout.failed"
  | "refund.succeeded"
  | "refund.failed"
  | "payment_link.paid"
  | "payment.rescue_available"
  | "webhook.test";

/** A tenant's webhook endpoint, in the environment of the token that made it. */
export interface WebhookEndpointsTable {
  /** `whe_` + ULID. */
  id: string;
  tenant_id: string;
  environment: Environment;
  url: string;
  description: Nullable<string>;
  /** null: every event type. */
  event_types: NullableJsonb<EventType[]>;
  enabled: Generated<boolean>;
  disabled_reason: Nullable<string>;
  failing_since: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** An endpoint's signing secrets; after a rotation the old one signs until `expires_at`. */
export interface WebhookEndpointSecretsTable {
  id: string;
  endpoint_id: string;
  tenant_id: string;
  /** `v<N>:…`, sealed with the tenant id and `webhookEndpoint.secret`. */
  sealed_secret: string;
  created_at: CreatedAt;
  expires_at: NullableTimestamp;
}

/** Something that happened to a tenant's objects, as delivered to its webhooks. */
export interface EventsTable {
  /** `evt_` + ULID; also the `webhook-id` of every delivery of it. */
  id: string;
  tenant_id: string;
  environment: Environment;
  type: EventType;
  /** The event's `data` (contract §6). */
  data: Jsonb<Record<string, JsonValue>>;
  payment_id: Nullable<string>;
  created_at: CreatedAt;
}

/** Where a delivery stands. */
export type DeliveryState = "pending" | "succeeded" | "failed";

/** One event to one target: a tenant endpoint, or a direct URL (a direct payment's `callback_url`). */
export interface DeliveriesTable {
  /** `dlv_` + ULID. */
  id: string;
  event_id: string;
  tenant_id: string;
  environment: Environment;
  endpoint_id: Nullable<string>;
  target_url: Nullable<string>;
  state: Generated<DeliveryState>;
  attempts: Generated<number>;
  next_attempt_at: CreatedAt;
  locked_until: NullableTimestamp;
  last_status: Nullable<number>;
  last_error: Nullable<string>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  delivered_at: NullableTimestamp;
}

/** One HTTP attempt of a delivery, for the delivery log. */
export interface DeliveryAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  url: string;
  status: Nullable<number>;
  duration_ms: number;
  error: Nullable<string>;
  /** The first 2 KiB of the answer. */
  response_body: Nullable<string>;
}

export type WebhookEndpoint = Selectable<WebhookEndpointsTable>;
export type Event = Selectable<EventsTable>;
export type Delivery = Selectable<DeliveriesTable>;
export type DeliveryAttempt = Selectable<DeliveryAttemptsTable>;

/** Where a stored provider B IPN stands. */
export type IpnState = "orphan" | "received" | "processed" | "rejected";

/** A verified provider B IPN (stored without its hash), or an orphan waiting for its checkout. */
export interface IpnMessagesTable {
  id: Generated<number>;
  provider: ColumnType<Provider, Provider | undefined, Provider>;
  subject: "checkout" | "permit";
  token: string;
  payment_id: Nullable<string>;
  tenant_id: Nullable<string>;
  environment: Nullable<Environment>;
  body: Jsonb<Record<string, JsonValue>>;
  body_digest: string;
  hash_digest: Nullable<string>;
  state: IpnState;
  attempts: Generated<number>;
  last_error: Nullable<string>;
  received_at: CreatedAt;
  processed_at: NullableTimestamp;
  expires_at: NullableTimestamp;
  /** A permit IPN's permit (migration 0008); null for a checkout or charge IPN, and for an orphan. */
  permit_id: Nullable<string>;
}

export type IpnMessage = Selectable<IpnMessagesTable>;

/** Where a permit stands: `pending` → `active` → `revoked` | `expired`; `pending` → `declined` (or revoked, expired). */
export type PermitStatus = "pending" | "active" | "declined" | "revoked" | "expired";

/**
 * A customer's standing authorisation at provider B to be charged later (migration 0008), made with the
 * tenant's credential set `provider_account` at `credential_version`.
 */
export interface PermitsTable {
  /** `prm_` + ULID. */
  id: string;
  tenant_id: string;
  environment: Environment;
  /** Provider B's permit token; unique per environment. */
  token: string;
  /** The `provider_credentials.id` of the set the permit was made with. */
  provider_account: string;
  credential_version: number;
  status: ColumnType<PermitStatus, PermitStatus | undefined, PermitStatus>;
  customer: Jsonb<PaymentCustomer>;
  description: string;
  /** The largest amount one charge may take (int8). */
  max_amount: number;
  currency: Currency;
  return_url: string;
  cancel_url: string;
  custom_data: NullableJsonb<CustomData>;
  authorization_url: string;
  /** The channel provider B reports once authorised. */
  payment_method: Nullable<string>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  activated_at: NullableTimestamp;
  /** When it became declined, revoked or expired. */
  ended_at: NullableTimestamp;
}

export type Permit = Selectable<PermitsTable>;

/** Where a permit charge stands: `pending` → `succeeded` | `failed` (a failed one may still succeed: paid wins). */
export type PermitChargeStatus = "pending" | "succeeded" | "failed";

/**
 * One charge on a permit (migration 0008): written, with its `pending` payment of kind `permit_charge`,
 * before provider B is called with the charge id as the idempotency key.
 */
export interface PermitChargesTable {
  /** `chg_` + ULID. */
  id: string;
  permit_id: string;
  tenant_id: string;
  environment: Environment;
  payment_id: string;
  amount: number;
  description: string;
  custom_data: NullableJsonb<CustomData>;
  status: ColumnType<PermitChargeStatus, PermitChargeStatus | undefined, PermitChargeStatus>;
  /** Null until provider B answered the charge call. */
  provider_answered_at: NullableTimestamp;
  /** The charge's invoice token at provider B, from its answer. */
  invoice_token: Nullable<string>;
  fail_reason: Nullable<string>;
  /** A renewal's schedule (`sch_…`), its period (`YYYY-MM-DD`) and dunning attempt; null/0 for a charge made by API. */
  schedule_id: Nullable<string>;
  period: Nullable<string>;
  attempt: ColumnType<number, number | undefined, number>;
  /**
   * The merchant's `Idempotency-Key` of a charge made by API, unique per (tenant, environment, permit, key)
   * (migration 0032): a retry with the key finds this charge, never makes another. Null for a renewal or a
   * call without the header.
   */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  settled_at: NullableTimestamp;
}

export type PermitChargeRow = Selectable<PermitChargesTable>;

/** How often a permit's schedule charges: every `interval_count` days, weeks or months. */
export type ScheduleInterval = "day" | "week" | "month";

/** Where a renewal schedule stands: `active` → `past_due` (dunning exhausted) or `cancelled`. */
export type ScheduleStatus = "active" | "past_due" | "cancelled";

/**
 * A permit's renewal schedule (migration 0009): one row per permit, updated in place by PUT. The row is also
 * the schedule's position: the period being collected and its dunning attempt.
 */
export interface PermitSchedulesTable {
  /** `sch_` + ULID. */
  id: string;
  permit_id: string;
  tenant_id: string;
  environment: Environment;
  amount: number;
  interval: ScheduleInterval;
  interval_count: number;
  description: string;
  /** The anchor every period is computed from. */
  start_at: Date;
  /** The IANA time zone whose calendar the periods follow (migration 0009_schedule_time_zone). */
  time_zone: string;
  /** The period being collected, counted from the anchor (0 = `start_at`). */
  period_index: number;
  /** That period's key: the local date of its due day in `time_zone`, `YYYY-MM-DD`. */
  period: string;
  /** That period's due date. */
  due_at: Date;
  /** The dunning attempt to make or in flight: 0 at the due date, then 1, 2, 3… per retry. */
  attempt: Generated<number>;
  /** When the sweep acts next on this schedule. */
  next_attempt_at: Date;
  status: ScheduleStatus;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  past_due_at: NullableTimestamp;
  cancelled_at: NullableTimestamp;
}

export type PermitSchedule = Selectable<PermitSchedulesTable>;

/** Why money goes out: a payout the merchant asked for, or a refund of a payment (migration 0011). */
export type PayoutPurpose = "payout" | "refund";

/** A payout's state: `pending` → `sent` | `failed`. */
export type PayoutStateColumn = "pending" | "sent" | "failed";

/** The recipient of a payout, as stored (its phone is in `phone_number` and `country`). */
export interface PayoutRecipientColumn {
  firstname?: string;
  lastname?: string;
  email?: string;
}

/** One payout (`po_…`) or refund (`rf_…`), written before the provider is called (migration 0011). */
export interface PayoutsTable {
  id: string;
  tenant_id: string;
  environment: Environment;
  purpose: PayoutPurpose;
  /** The payment a refund gives back; null for a payout. */
  payment_id: Nullable<string>;
  provider: string;
  /** `service`, or the tenant's credential set id. */
  provider_account: string;
  credential_version: Nullable<number>;
  operator: string;
  country: string;
  phone_number: string;
  recipient: Jsonb<PayoutRecipientColumn>;
  amount: number;
  currency: Currency;
  description: string;
  reason: Nullable<string>;
  metadata: NullableJsonb<CustomData>;
  state: Generated<PayoutStateColumn>;
  provider_payout_id: Nullable<string>;
  provider_status: Nullable<string>;
  failure_code: Nullable<string>;
  fee: Nullable<number>;
  outcome_unknown: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  sent_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  provider_synced_at: NullableTimestamp;
  /** The lease of the worker moving it at its provider. */
  locked_until: NullableTimestamp;
  /**
   * The merchant's `Idempotency-Key`, unique per (tenant, environment) among payouts and per payment among its
   * refunds (migration 0033): a retry with the key finds this row, never makes another. Null without the header.
   */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
}

export type PayoutRow = Selectable<PayoutsTable>;

/** The kinds of movement in the ledger. */
export type LedgerKind = "payment" | "payout" | "refund" | "fee";

/** One leg of a ledger movement (migration 0011): a movement's legs sum to zero. */
export interface LedgerEntriesTable {
  id: Generated<string>;
  tenant_id: string;
  environment: Environment;
  currency: Currency;
  /** The movement: `<subject id>.<what>` (`pay_….collected`, `po_….reserved`, `po_….sent`, `po_….released`, `po_….fee`). */
  journal: string;
  /** `available`, `pending`, `provider:<name>` or `fees`. */
  account: string;
  /** Signed, in whole units. */
  amount: number;
  kind: LedgerKind;
  subject_id: string;
  provider: string;
  /** Where the money sits (migration 0014): `pooled:<provider>` (the service's account) or `own:<provider>` (the tenant's). */
  holding: string;
  created_at: CreatedAt;
}

export type LedgerEntry = Selectable<LedgerEntriesTable>;

/** A record whose provider state differs from ours, as the sync schedule found it (migration 0011). */
export interface ReconciliationDifferencesTable {
  subject_id: string;
  subject_kind: "payment" | "payout" | "refund";
  tenant_id: string;
  environment: Environment;
  provider: string;
  our_state: string;
  provider_state: string;
  provider_status: string;
  amount: number;
  currency: Currency;
  first_seen_at: Date;
  last_seen_at: Date;
}

/** A tenant's route list for one operator in one country (migration 0012). */
export interface RoutingRulesTable {
  tenant_id: string;
  environment: Environment;
  operator: string;
  country: string;
  providers: Jsonb<string[]>;
  updated_at: CreatedAt;
}

/** How one attempt of a payment on one provider ended (migration 0012). */
export type AttemptOutcome = "started" | "refused" | "unreachable" | "circuit_open" | "unknown" | "failed";

export interface PaymentAttemptsTable {
  payment_id: string;
  attempt: number;
  provider: string;
  provider_account: string;
  credential_version: Nullable<number>;
  outcome: AttemptOutcome;
  provider_transaction_id: Nullable<string>;
  error: Nullable<string>;
  /** Why this provider was tried. */
  reason: string;
  created_at: CreatedAt;
  ended_at: NullableTimestamp;
  /** A rescue try (issue 31 point 3) rather than a route of the payment's first plan (migration 0031). */
  rescue: Generated<boolean>;
  /** The wallet it was made with, when it may differ from the payment's (a rescue try on another wallet). */
  operator: Nullable<string>;
  payment_method: Nullable<string>;
  customer: NullableJsonb<PaymentCustomer>;
}

export type PaymentAttempt = Selectable<PaymentAttemptsTable>;

/** A payment's offer of a rescue (migration 0031): `id` is the secret of its rescue URL. */
export interface PaymentRescuesTable {
  /** `rs_` and 26 random characters. */
  id: string;
  payment_id: string;
  tenant_id: string;
  environment: Environment;
  /** `no_answer` (the push went unanswered for RESCUE_AFTER) or the failure code the customer can fix. */
  reason: string;
  /** The attempt the latest offer was made after: a try is taken only while it is the payment's last. */
  offered_for_attempt: number;
  offers: Generated<number>;
  tries: Generated<number>;
  created_at: CreatedAt;
  offered_at: Date;
}

export type PaymentRescue = Selectable<PaymentRescuesTable>;

/** Per provider × operator × country and minute, the payments that ended paid and failed (migration 0012). */
export interface RouteOutcomesTable {
  environment: Environment;
  provider: string;
  operator: string;
  country: string;
  minute: Date;
  /** Which of the minute's rows (0 to 15, migration 0035): a route's minute is spread over several so that payments settling at once do not queue on one row. */
  slot: Generated<number>;
  succeeded: Generated<number>;
  failed: Generated<number>;
}

/**
 * Per tenant, a counter raised with every change to its route lists or provider credentials (migration 0017):
 * what a process's cached routes are checked against (`services/routing/route-cache.ts`).
 */
export interface RoutingVersionsTable {
  tenant_id: string;
  /** bigint: postgres.js reads it as a string, PGlite as a number; `Number()` it. */
  version: string | number;
}

/** A person's place in a shop (issue 30 point 4; migration 0030 replaced `member` with the last three). */
export type MembershipRole = "owner" | "developer" | "finance" | "viewer";

/** A person of the operator's staff (issue 30 point 4, migration 0030): `support` reads only. */
export type OperatorRole = "admin" | "support";

/** A person who signs in to the dashboard (migration 0025). */
export interface PeopleTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  name: Nullable<string>;
  /** argon2id (`Bun.password`); null until the person accepts an invitation. */
  password_hash: Nullable<string>;
  /** The TOTP secret (sealed) once enrolment is confirmed (migration 0026). */
  totp_secret: Nullable<string>;
  /** The TOTP secret (sealed) of an enrolment not yet confirmed. */
  totp_pending: Nullable<string>;
  totp_enabled_at: NullableTimestamp;
  /** The 30 s step of the last code used: a code (and any earlier one) works once. */
  totp_last_counter: Nullable<number>;
  /** Consecutive failed sign-ins; reset by a successful one. */
  failed_sign_ins: Generated<number>;
  /** Sign-ins are refused until then (too many failures). */
  locked_until: NullableTimestamp;
  /** A member of the operator's staff signs in to the operator's side with this role (migration 0030). */
  operator_role: Nullable<OperatorRole>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** Which shops a person belongs to, and as what. */
export interface MembershipsTable {
  tenant_id: string;
  person_id: string;
  role: MembershipRole;
  created_at: CreatedAt;
}

/** A single-use link to join a shop, or the operator's staff (no tenant); only the HMAC of its token is stored. */
export interface InvitationsTable {
  id: string;
  /** Null for an invitation to the operator's staff (`role` `admin` or `support`). */
  tenant_id: string | null;
  email: string;
  role: MembershipRole | OperatorRole;
  token_hash: string;
  /** `operator`, a person's id, or `key:<key id>`. */
  invited_by: string;
  created_at: CreatedAt;
  expires_at: Date;
  accepted_at: NullableTimestamp;
  accepted_by: Nullable<string>;
  revoked_at: NullableTimestamp;
}

/** A single-use link to set a new password; only the HMAC of its token is stored. */
export interface PasswordResetsTable {
  token_hash: string;
  person_id: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: NullableTimestamp;
}

/** Where an outbox e-mail stands. */
export type OutboxEmailStatus = "pending" | "sent" | "failed";

/** An e-mail to send; its body is sealed (it holds a single-use link) and cleared once sent. */
export interface OutboxEmailsTable {
  id: string;
  recipient: string;
  subject: string;
  sealed_body: Nullable<string>;
  status: ColumnType<OutboxEmailStatus, OutboxEmailStatus | undefined, OutboxEmailStatus>;
  attempts: Generated<number>;
  last_error: Nullable<string>;
  created_at: CreatedAt;
  sent_at: NullableTimestamp;
}

/** A two-factor recovery code, single use; only its HMAC is stored. */
export interface RecoveryCodesTable {
  code_hash: string;
  person_id: string;
  used_at: NullableTimestamp;
}

/** One sign-in or failure: `signed_in`, `wrong_password`, `unknown_email`, `code_needed`, `wrong_code`, `locked`, `no_shop`, `limited`. */
export interface SignInsTable {
  id: Generated<number>;
  person_id: Nullable<string>;
  email: string;
  address: string;
  outcome: string;
  at: CreatedAt;
}

/** A signed-in person in one shop, or on the operator's side (no tenant); only the HMAC of the cookie's secret is stored. */
export interface SessionsTable {
  id: string;
  secret_hash: string;
  person_id: string;
  /** Null for an operator's staff session (migration 0030). */
  tenant_id: string | null;
  address: string;
  user_agent: Nullable<string>;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Date;
  ended_at: NullableTimestamp;
}

/** Who made an audited call: a person (dashboard session), an API key's token, another tenant token, or an operator's token. */
export type AuditActorType = "person" | "key" | "token" | "operator";

/**
 * One state-changing call (issue 30 point 5, migration 0030): append-only (a trigger refuses UPDATE, and DELETE
 * outside the retention's purge), chained per `chain` (`<tenant id or "operator">:<environment>`) by `hash`.
 */
export interface AuditLogTable {
  id: string;
  chain: string;
  /** 1, 2, 3… within the chain; bigint (postgres.js reads a string, PGlite a number). */
  seq: string | number;
  at: Date;
  tenant_id: Nullable<string>;
  environment: Environment;
  actor_type: AuditActorType;
  /** A person's id, an API key's id, a token's `sub`. */
  actor_id: string;
  /** The person's role when they called; null for a token. */
  actor_role: Nullable<string>;
  /** The procedure, e.g. `payouts.refund`. */
  action: string;
  /** The ids the call named or made. */
  targets: Jsonb<string[]>;
  /** The input, secrets redacted; null when it could not be stored. */
  input: NullableJsonb<Record<string, unknown>>;
  /** Fields changed, `{ field: { before, after } }`, when the procedure tells them. */
  changes: NullableJsonb<Record<string, { before: unknown; after: unknown }>>;
  /** `success`, or the error code (`forbidden`, `not_found`…). */
  outcome: string;
  address: string;
  user_agent: Nullable<string>;
  request_id: string;
  prev_hash: string;
  hash: string;
  /**
   * How `hash` is made (migration 0036): 1, the SHA-256 of all the entry's fields, `prev_hash` included; 2, the
   * SHA-256 of `prev_hash` followed by the SHA-256 of its content (`services/audit-log/entry.ts`).
   */
  hash_version: 1 | 2;
}

/** Each chain's last entry (migration 0036): what an append advances, in the statement that inserts its entries. */
export interface AuditChainHeadsTable {
  chain: string;
  /** bigint (postgres.js reads a string, PGlite a number). */
  seq: string | number;
  hash: string;
  /** The head before the last append: where that append's first entry links. */
  from_hash: string;
}

/** Where retention cut a chain: its entries through `through_seq` are gone, the last of them hashed `through_hash`. */
export interface AuditLogPurgesTable {
  chain: string;
  through_seq: string | number;
  through_hash: string;
  purged_at: Date;
}
