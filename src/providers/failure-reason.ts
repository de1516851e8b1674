/**
 * Why a call to a provider got no answer, for a log line: what the HTTP client threw, as
 * `<name> <code>: <message>` (and its cause's message when it has one), with the account's keys cut out
 * wherever they appear — a client's message may quote a header or a URL.
 *
 * @example
 * ```ts
 * failureReason(new TypeError("Header 'PAYDUNYA-MASTER-KEY' has invalid value"), [keys.masterKey]);
 * // "TypeError: Header 'PAYDUNYA-MASTER-KEY' has invalid value"
 * ```
 */
export function failureReason(error: unknown, secrets: readonly (string | undefined)[]): string {
  const described = describe(error);
  const cause = error instanceof Error && error.cause !== undefined ? describe(error.cause) : "";
  let reason = cause && cause !== described ? `${described} (cause: ${cause})` : described;
  // Longest first, so that a key containing another is cut out whole.
  for (const secret of [...secrets].filter((s): s is string => !!s).sort((a, b) => b.length - a.length)) reason = reason.split(secret).join("[redacted]");
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason;
}

/** Bounds a reason: a log line, not a dump. */
const MAX_REASON = 300;

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}${typeof code === "string" && !error.message.startsWith(code) ? ` ${code}` : ""}: ${error.message}`;
}
