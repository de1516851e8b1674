/**
 * Provider A direct payments (spec endpoints 1–3, contract §4): initiation, status reads with
 * refresh-on-read, the state order with its events, the `providerA-sync` job and its sweeper clause, and
 * the contract's words (`payment-methods.ts`). Provider A's own calls, mapping and webhooks live in
 * `src/providers/providerA/`, reached through the port.
 *
 * @module
 */
export { applyDirectPaymentUpdate, nextState, type DirectPaymentUpdate } from "./apply-update.ts";
export { checkDirectPaymentRules, createDirectPayment, type DirectPaymentAnswer, type DirectPaymentInput } from "./create-direct-payment.ts";
export { getTransactionStatus, isTransactionApproved, type TransactionLookup } from "./read-transaction.ts";
export { REFRESH_FLOOR_MS, refreshOnRead, syncFromProvider } from "./refresh.ts";
export { DIRECT_PAYMENT_STATUSES, isApprovedSchema, transactionStatusSchema, type IsApprovedView, type TransactionStatusView } from "./status.ts";
export { PROVIDER_A_SYNC_QUEUE, runSyncJob, sweepDirectPaymentSyncs, syncJobId, type SyncJobData } from "./sync-jobs.ts";
