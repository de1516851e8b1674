/**
 * Payment links (issue 31): links a merchant shares and any customer pays from a phone on `/pay/{id}`.
 *
 * @module
 */
export { createPaymentLink, deactivatePaymentLink, getPaymentLink, isLinkId, listPaymentLinks, newLinkId } from "./links.ts";
export {
  PAYMENT_LINK_STATUSES,
  paymentLinkDetailSchema,
  paymentLinkRequest,
  paymentLinkSchema,
  type PaymentLinkDetailView,
  type PaymentLinkRequest,
  type PaymentLinkView,
} from "./link-view.ts";
export {
  linkPayment,
  linkPaymentRequest,
  payThroughLink,
  publicLinkSchema,
  publicPaymentLink,
  publicPaymentSchema,
  type PublicLinkView,
  type PublicPaymentView,
} from "./pay.ts";
export { paysLink, recordLinkPaid } from "./link-paid.ts";
