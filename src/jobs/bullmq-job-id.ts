/**
 * Reversible mapping between our job/scheduler ids and the ids BullMQ accepts.
 *
 * BullMQ 6.7 (`Job.validateOptions`) refuses custom ids that parse as integers ("Custom Id cannot be
 * integers") and ids with `:` — except, for legacy repeatable jobs, ids with exactly two `:`, which
 * it silently accepts. Ours are built like `<scheduleId>:<period>`, so ids are escaped instead:
 * `%` → `%25`, `:` → `%3A`, and the first character of an integer-looking id → `%XX`. Only the
 * escapes produce `%`, so decoding is unambiguous, and an encoded id never looks like BullMQ's own
 * scheduler ids (`repeat:<schedulerId>:<ms>`), which decode to themselves.
 *
 * @module
 */

function escapeChar(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;
}

function looksLikeInteger(id: string): boolean {
  // The exact test BullMQ applies to custom ids.
  return `${Number.parseInt(id, 10)}` === id;
}

/**
 * Maps an id to one BullMQ accepts as a custom job id or scheduler id.
 *
 * @example
 * ```ts
 * encodeBullmqId("sch_1:2026-05"); // "sch_1%3A2026-05"
 * encodeBullmqId("42");            // "%342"
 * ```
 */
export function encodeBullmqId(id: string): string {
  const escaped = id.replaceAll("%", "%25").replaceAll(":", "%3A");
  return looksLikeInteger(escaped) ? escapeChar(escaped[0] ?? "") + escaped.slice(1) : escaped;
}

/**
 * Inverse of {@link encodeBullmqId}; also turns BullMQ's `repeat:<encoded schedulerId>:<ms>` into
 * `repeat:<schedulerId>:<ms>`.
 *
 * @example
 * ```ts
 * decodeBullmqId("sch_1%3A2026-05"); // "sch_1:2026-05"
 * ```
 */
export function decodeBullmqId(id: string): string {
  return id.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
