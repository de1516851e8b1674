/** A JSON object as tests read it from an answer: any field, any value (the test's expectations say which). */
export type Json = Record<string, any>;

/** An answer's status and its body read as JSON (`{}` when empty). */
export interface JsonAnswer {
  status: number;
  body: Json;
}

/**
 * Calls the gateway at `base` as `token` with an optional JSON body, and reads the answer as JSON.
 *
 * @example
 * ```ts
 * const call = callerOf(() => rig.base);
 * const created = await call(token, "POST", "/payments", { amount: 700, … });
 * ```
 */
export function callerOf(base: () => string, extraHeaders: (token: string) => Record<string, string> = () => ({})) {
  return async (token: string, method: string, path: string, body?: unknown): Promise<JsonAnswer> => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...extraHeaders(token),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
}
