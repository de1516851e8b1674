/**
 * Payments of every kind (direct payments, checkouts, permit charges): reading them, and the API shape
 * every endpoint and event shows them in.
 *
 * @module
 */
export { createPayment, paymentRequest, type PaymentRequest, quotePayment, quoteSchema } from "./create-payment.ts";
export { getPayment, type GetPaymentInput } from "./get-payment.ts";
export { countStuckPayments, listStuckPayments, STUCK_AFTER_MS, type ListStuckInput, type StuckPaymentView } from "./stuck-payments.ts";
export { listPayments, MIN_PHONE_DIGITS, type ListPaymentsInput, type PaymentPage } from "./list-payments.ts";
export {
  CURRENCIES,
  PAYMENT_KINDS,
  PAYMENT_STATES,
  assertKnownProvider,
  providerNameSchema,
  paymentCustomerSchema,
  paymentSchema,
  toPaymentView,
  type PaymentView,
} from "./payment-view.ts";
