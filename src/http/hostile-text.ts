/**
 * Text that no string of a request may hold: U+0000, which PostgreSQL's `text` and `jsonb` cannot store,
 * and an unpaired UTF-16 surrogate, which is no character at all (it has no UTF-8 form, and `jsonb`
 * refuses its `\ud800` escape). Any client can send both — `\u0000` and `\ud800` in JSON, `%00` in a
 * form or a query string — so every request's input is searched for them before anything reads it, and
 * one holding either is refused as a validation error naming each place, instead of failing in the
 * database as a 500. The procedure bases (`routers/trpc.ts`) apply it to every call on `/trpc` and on
 * the REST surface; the provider B IPN route applies it to the IPN it parsed.
 */

// Without the `u` flag a regular expression sees UTF-16 code units, so a surrogate is matched on its own:
// a high one not followed by a low one, or a low one not preceded by a high one.
const HOSTILE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const HOSTILE_UNIT = /[\0\ud800-\udfff]/g;

/** What a message says is wrong, after the path. */
const HOSTILE_TEXT = "a NUL character or an unpaired surrogate";
/** The rule a message names after a value's path (`customer.name must not contain …`). */
export const HOSTILE_VALUE_RULE = `must not contain ${HOSTILE_TEXT}`;
const KEY_RULE = `has a property name with ${HOSTILE_TEXT}`;

/** At most this many places are listed: a 64 KiB body could otherwise name thousands. */
export const MAX_HOSTILE_TEXT_MESSAGES = 50;

/**
 * Does the string hold U+0000 or an unpaired surrogate?
 *
 * @example
 * ```ts
 * holdsHostileText("caf\u00e9 \ud83d\ude00"); // false: a paired surrogate is an ordinary character
 * holdsHostileText("a\u0000b"); // true
 * holdsHostileText("\ud800"); // true
 * ```
 */
export function holdsHostileText(text: string): boolean {
  return HOSTILE.test(text);
}

/** A path segment as a message may show it: hostile code units written as `\uXXXX`, never echoed raw. */
function printable(segment: string | number): string {
  if (typeof segment === "number" || !holdsHostileText(segment)) return String(segment);
  return segment.replace(HOSTILE_UNIT, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A place in the walked value, linked to its parent: no path is copied per value, whatever the depth. */
interface Place {
  key: string | number;
  parent: Place | undefined;
}

function pathText(place: Place | undefined): string {
  const segments: string[] = [];
  for (let at = place; at; at = at.parent) segments.push(printable(at.key));
  return segments.length > 0 ? segments.reverse().join(".") : "body";
}

/**
 * One validation message per place in `value` that holds hostile text, phrased like the contract's other
 * validation entries (`<dotted.path> <rule>`, `body` for the top level), in document order: a string is
 * named by its path (`customer.name must not contain …`), a property name by the object that holds it
 * (`customData has a property name with …`). Walks nested objects and arrays with a stack of its own, so
 * no nesting depth can overflow the call stack. Empty when the value is clean.
 *
 * @example
 * ```ts
 * hostileTextMessages({ customer: { name: "a\u0000" }, channels: ["ok", "\ud800"] });
 * // ["customer.name must not contain a NUL character or an unpaired surrogate",
 * //  "channels.1 must not contain a NUL character or an unpaired surrogate"]
 * ```
 */
export function hostileTextMessages(value: unknown): string[] {
  if (!holdsHostileTextAnywhere(value)) return [];
  const messages: string[] = [];
  const pending: { value: unknown; place: Place | undefined }[] = [{ value, place: undefined }];
  while (pending.length > 0 && messages.length < MAX_HOSTILE_TEXT_MESSAGES) {
    const { value: current, place } = pending.pop()!;
    if (typeof current === "string") {
      if (holdsHostileText(current)) messages.push(`${pathText(place)} ${HOSTILE_VALUE_RULE}`);
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    const entries: [string | number, unknown][] = Array.isArray(current) ? current.map((item, index) => [index, item]) : Object.entries(current);
    if (!Array.isArray(current) && entries.some(([key]) => holdsHostileText(key as string))) messages.push(`${pathText(place)} ${KEY_RULE}`);
    // Reversed onto the stack, so they come off it in document order.
    for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], place: { key: entries[i]![0], parent: place } });
  }
  return messages.slice(0, MAX_HOSTILE_TEXT_MESSAGES);
}

/** The clean case, which is nearly every request, without building a path per value. */
function holdsHostileTextAnywhere(value: unknown): boolean {
  if (typeof value === "string") return holdsHostileText(value);
  if (value === null || typeof value !== "object") return false;
  const pending: object[] = [value];
  while (pending.length > 0) {
    const current = pending.pop()!;
    if (Array.isArray(current)) {
      for (const item of current) {
        if (typeof item === "string") {
          if (holdsHostileText(item)) return true;
        } else if (item !== null && typeof item === "object") pending.push(item);
      }
      continue;
    }
    for (const key in current) {
      if (!Object.hasOwn(current, key)) continue;
      if (holdsHostileText(key)) return true;
      const item = (current as Record<string, unknown>)[key];
      if (typeof item === "string") {
        if (holdsHostileText(item)) return true;
      } else if (item !== null && typeof item === "object") pending.push(item);
    }
  }
  return false;
}
