/**
 * Direct payments (spec endpoints 1–3, contract §4): initiation, status reads with refresh-on-read, the
 * moves of the state order (`payments/state-order.ts`) with their events, the sync chain on the provider's
 * `<provider>-sync` queue (its first step held in-process) and its sweeper clause, and the contract's
 * words (`payment-methods.ts`). Provider A's own calls, mapping and webhooks live in
 * `src/providers/providerA/`, reached through the port.
 *
 * @module
 */
export { applyDirectPaymentUpdate, type DirectPaymentUpdate } from "./apply-update.ts";
export { checkDirectPaymentRules, createDirectPayment, type DirectPaymentAnswer, type DirectPaymentInput } from "./create-direct-payment.ts";
export { getTransactionStatus, isTransactionApproved, type TransactionLookup } from "./read-transaction.ts";
export { REFRESH_FLOOR_MS, refreshOnRead, syncFromProvider } from "./refresh.ts";
export { DIRECT_PAYMENT_STATUSES, isApprovedSchema, transactionStatusSchema, type IsApprovedView, type TransactionStatusView } from "./status.ts";
export { createFirstSyncHold, releaseHeldFirstSyncs, type FirstSyncHold } from "./first-sync.ts";
export { DIRECT_PAYMENT_SYNC, syncDirectPayment, sweepDirectPaymentSyncs, type DirectPaymentSyncJobData } from "./sync-jobs.ts";
