/**
 * The rescue of a stalled push (issue 31 point 3): a payment whose push stalled or failed for a reason the customer
 * can fix offers a rescue URL, where the customer tries again — another attempt of the same payment, under the
 * failover rules, never a second charge kept.
 *
 * @module
 */
export { isFixableFailure, isRescueId, NO_ANSWER, offerStalledRescues, recordRescueOffer, rescueUrl } from "./offer.ts";
export { payThroughRescue, publicRescue, rescuePayment } from "./rescue-page.ts";
export { rescueTryRequest, type RescueTryRequest } from "./rescue-scope.ts";
export { tryRescue } from "./try-rescue.ts";
export { payPageFace, payPageOwner, payPagePay, payPagePayment } from "./pay-page-calls.ts";
export { followEarlierPushes, sweepRescues } from "./sweep-rescues.ts";
