/**
 * One plain sentence for an environment variable that fails its schema in `config.ts`, instead of zod's
 * wording ("Invalid input: expected number, received NaN"): what the variable must be, e.g.
 * `PORT must be an integer from 0 to 65535 (got "abc")`.
 *
 * @module
 */
import { z } from "zod";

/** The schemes a URL variable may name, to say which ones it takes. */
const KNOWN_SCHEMES = ["http", "https", "postgres", "postgresql", "redis", "rediss"];

/** How a value shows in a message: numbers and enum options only, which never hold a secret, cut short. */
function shown(value: unknown): string {
  const text = String(value);
  return ` (got ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)})`;
}

/** "an integer from 0 to 65535", "a positive integer", "an integer of at least 1000" … from a JSON Schema. */
function describeNumber(json: { type?: unknown; minimum?: number; exclusiveMinimum?: number; maximum?: number }): string {
  const kind = json.type === "integer" ? "integer" : "number";
  const max = json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
  const article = kind === "integer" ? "an" : "a";
  if (json.exclusiveMinimum === 0 && max === undefined) return `a positive ${kind}`;
  const min = json.minimum ?? (json.exclusiveMinimum !== undefined ? json.exclusiveMinimum + (kind === "integer" ? 1 : 0) : undefined);
  if (min !== undefined && max !== undefined) return `${article} ${kind} from ${min} to ${max}`;
  if (min !== undefined) return `${article} ${kind} of at least ${min}`;
  if (max !== undefined) return `${article} ${kind} of at most ${max}`;
  return `${article} ${kind}`;
}

/**
 * `NAME must be …` for the first problem zod found with variable `name`, whose schema is `field`.
 * Only a number's or an enum's value is echoed: a URL or a secret may carry a password.
 *
 * @example
 * ```ts
 * describeConfigIssue("PORT", envSchema.shape.PORT, issue, "abc"); // 'PORT must be an integer from 0 to 65535 (got "abc")'
 * ```
 */
export function describeConfigIssue(name: string, field: z.ZodType | undefined, issue: z.core.$ZodIssue, value: unknown): string {
  const json = field ? (z.toJSONSchema(field, { io: "input", unrepresentable: "any" }) as Record<string, unknown>) : {};
  if (json.type === "integer" || json.type === "number") return `${name} must be ${describeNumber(json)}${shown(value)}`;
  if (Array.isArray(json.enum)) return `${name} must be one of ${json.enum.join(", ")}${shown(value)}`;
  if (issue.code === "invalid_format" && issue.format === "url" && field) {
    const schemes = KNOWN_SCHEMES.filter((scheme) => field.safeParse(`${scheme}://host`).success);
    if (schemes.length === 0) return `${name} must be a URL`;
    return `${name} must be ${schemes[0]!.startsWith("h") ? "an" : "a"} ${schemes.map((s) => `${s}://`).join(" or ")} URL`;
  }
  // Our own checks already speak plainly ("must be at least 32 bytes").
  return issue.message.startsWith("must ") ? `${name} ${issue.message}` : `${name} is invalid: ${issue.message}`;
}
