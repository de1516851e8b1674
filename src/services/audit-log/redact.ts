/**
 * What of a call's input and output goes into its audit log entry: the input with every secret replaced by
 * `"[redacted]"`, and the ids the call named or made (its targets).
 *
 * @module
 */

export const REDACTED = "[redacted]";

// A field is a secret by its name: passwords, codes, tokens, every kind of key (an id such as `key_id` is not).
const SECRET_NAME = /(secret|password|token|code|otp|key)$/i;
const ID_NAME = /(_id|Id)$/;

/**
 * The input with secrets redacted, at any depth. `everyValue`: every field is redacted but ids and `environment`
 * (a provider's credentials, whose field names are the provider's own).
 *
 * @example
 * ```ts
 * redactInput({ email: "a@b.example", password: "baobab sous la pluie" }); // { email: "a@b.example", password: "[redacted]" }
 * ```
 */
export function redactInput(input: unknown, everyValue = false): Record<string, unknown> | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== "object" || Array.isArray(input)) return { value: redactValue(input, everyValue) };
  return redactObject(input as Record<string, unknown>, everyValue);
}

function redactObject(object: Record<string, unknown>, everyValue: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(object)) {
    if (value === undefined) continue;
    const keep = ID_NAME.test(name) || name === "environment";
    out[name] = !keep && (SECRET_NAME.test(name) || everyValue) ? REDACTED : redactValue(value, everyValue);
  }
  return out;
}

function redactValue(value: unknown, everyValue: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => redactValue(item, everyValue));
  if (value !== null && typeof value === "object") return redactObject(value as Record<string, unknown>, everyValue);
  return value;
}

const OUTPUT_ID_FIELDS = ["id", "paymentId", "permitId", "chargeId", "personId"] as const;

/** The ids a call named (its input's `…_id` and `…Id` fields) and made (its answer's `id`, `paymentId`…). */
export function targetsOf(input: unknown, output: unknown): string[] {
  const found = new Set<string>();
  if (input && typeof input === "object")
    for (const [name, value] of Object.entries(input)) if (ID_NAME.test(name) && typeof value === "string") found.add(value);
  if (output && typeof output === "object") {
    const answer = output as Record<string, unknown>;
    for (const name of OUTPUT_ID_FIELDS) {
      const id = answer[name];
      if (typeof id === "string") found.add(id);
    }
    const tenant = answer.tenant as { id?: unknown } | undefined;
    if (typeof tenant?.id === "string") found.add(tenant.id);
  }
  return [...found].slice(0, 20).map((id) => id.slice(0, 200));
}
