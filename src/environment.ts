/**
 * Which side of a provider a tenant acts in: its test (`sandbox`) or its real (`live`) accounts. The one
 * declaration; `config.ts` and `db/schema.ts` re-export it for their importers.
 *
 * @example
 * ```ts
 * const environment = z.enum(ENVIRONMENTS); // "sandbox" | "live"
 * ```
 */

/** Every environment, in the contract's order. */
export const ENVIRONMENTS = ["sandbox", "live"] as const;

/** Which side of a provider a tenant acts in. */
export type Environment = (typeof ENVIRONMENTS)[number];
