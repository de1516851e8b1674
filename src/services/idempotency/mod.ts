/**
 * Idempotency keys (contract §9): claim a key before running a creating request, hold it while the
 * request runs, store its answer after, replay it to retries for 24 hours. No HTTP here: the tRPC
 * middleware in `routers/idempotency.ts` maps calls and answers to this.
 *
 * @module
 */
export {
  beginIdempotentRequest,
  completeIdempotentRequest,
  completeIdempotentRequestWhenBack,
  holdIdempotencyClaim,
  IDEMPOTENCY_TTL_MS,
  isReplayableStatus,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  OPERATOR_TENANT_ID,
  releaseIdempotencyClaim,
  SEALED_RESPONSE_FIELD,
  type IdempotencyClaim,
  type IdempotencyScope,
  type IdempotencyStart,
  type IdempotentAnswer,
  type StoredResponseBody,
} from "./idempotency-keys.ts";
export { resealIdempotencyResponses } from "./maintenance.ts";
export { canonicalJson, requestHash } from "./request-hash.ts";
