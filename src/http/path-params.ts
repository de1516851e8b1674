/**
 * Path parameters that cannot be text: a malformed escape (`%ZZ`, a lone `%`), bytes that are not UTF-8
 * once decoded — which is how a lone surrogate arrives in a URL (`%ED%A0%80`) — and text that holds a NUL
 * or an unpaired surrogate (`%00`, see `hostile-text.ts`). Elysia hands a handler `null` for the first two,
 * and PostgreSQL cannot store the third: each would end in a 500 somewhere. The gateway's `fetch` wrapper
 * asks this check about every path holding a `%` before any route runs — so before authentication too,
 * like any request whose path cannot be read — and answers 400 `validation_failed` naming the parameter.
 *
 * @module
 */
import { holdsHostileText, HOSTILE_VALUE_RULE } from "./hostile-text.ts";

/** What the message says of a parameter whose escapes do not decode to UTF-8 text. */
export const UNDECODABLE_RULE = "is not valid percent-encoded UTF-8";

interface Template {
  method: string;
  /** Per segment: the static text, or the parameter's name. */
  segments: { text: string; param: boolean }[];
}

/** A segment decoded as Elysia would see it, or null when its escapes are not UTF-8 text. */
function decodeSegment(segment: string): string | null {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null; // a malformed escape, or bytes that are not UTF-8 (a lone surrogate's WTF-8 form among them)
  }
}

/** The path of an absolute request URL, without its query or fragment. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start === -1) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query !== -1) end = query;
  const hash = url.indexOf("#", start);
  if (hash !== -1 && hash < end) end = hash;
  return url.slice(start, end);
}

/**
 * Builds the check over the app's routes (`/payments/{payment_id}` form; wildcards are ignored). The check
 * returns one message per unreadable parameter (`transaction_id is not valid percent-encoded UTF-8`,
 * `payment_id must not contain a NUL character or an unpaired surrogate`), or undefined when the path is
 * clean or names no route of the request's method (then the router answers, a 404 as usual).
 *
 * @example
 * ```ts
 * const check = createPathParamCheck([{ method: "GET", path: "/payments/{payment_id}" }]);
 * check("GET", "http://localhost/payments/%ZZ"); // ["payment_id is not valid percent-encoded UTF-8"]
 * check("GET", "http://localhost/payments/pay_1"); // undefined
 * ```
 */
export function createPathParamCheck(routes: readonly { method: string; path: string }[]): (method: string, url: string) => string[] | undefined {
  const templates: Template[] = routes
    .filter((route) => route.path.includes("{"))
    .map((route) => ({
      method: route.method,
      segments: route.path
        .split("/")
        .slice(1)
        .map((segment) => {
          const param = /^\{(\w+)\}$/.exec(segment);
          return param ? { text: param[1]!, param: true } : { text: segment, param: false };
        }),
    }));

  return (method, url) => {
    const path = pathOf(url);
    if (!path.includes("%")) return undefined; // nothing escaped: every segment is already plain text
    const raw = path.split("/").slice(1);
    const decoded = raw.map(decodeSegment);
    if (decoded.every((segment) => segment !== null && !holdsHostileText(segment))) return undefined;
    const lookup = method === "HEAD" ? "GET" : method;
    for (const template of templates) {
      if (template.method !== lookup || template.segments.length !== raw.length) continue;
      const messages: string[] = [];
      let matches = true;
      for (let i = 0; i < raw.length && matches; i++) {
        const segment = template.segments[i]!;
        const value = decoded[i]!;
        if (!segment.param) matches = value === segment.text;
        else if (value === null) messages.push(`${segment.text} ${UNDECODABLE_RULE}`);
        else if (value === "") matches = false;
        else if (holdsHostileText(value)) messages.push(`${segment.text} ${HOSTILE_VALUE_RULE}`);
      }
      if (matches && messages.length > 0) return messages;
    }
    return undefined;
  };
}
