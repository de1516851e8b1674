/**
 * The bounds an id path parameter is documented with (OpenAPI `minLength`/`maxLength`), like the other ids'
 * `min(1).max(64)`: our ids are a prefix and a ULID, at most 30 characters. Documented only: a longer one is
 * answered 404 like any id that does not exist (test/e2e/payments/payments.test.ts keeps it so).
 */
export const ID_BOUNDS = { minLength: 1, maxLength: 64 } as const;
