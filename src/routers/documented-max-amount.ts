/**
 * The `maximum` the OpenAPI document shows for amounts the gateway bounds by `MAX_AMOUNT`: that setting's
 * default (`config.ts`; a test keeps them equal). The schemas do not enforce it — the services check the
 * configured value, which an operator may set otherwise — so it is metadata only:
 *
 * ```ts
 * amount: z.number().int().min(1).meta({ example: 500, maximum: DOCUMENTED_MAX_AMOUNT })
 * ```
 */
export const DOCUMENTED_MAX_AMOUNT = 10_000_000;
