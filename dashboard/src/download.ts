/**
 * Files the gateway answers over its REST API, saved by the browser: a CSV report fetched with the
 * session's bearer token (and `x-tenant-id` for a tenant's screens, as the tRPC client sends it), then
 * handed to the browser as a download (a Blob, an object URL and a link with `download`). Everything stays
 * on the page's own origin, as its Content-Security-Policy (`connect-src 'self'`) asks.
 */

/** The gateway's message from an error body (`{ message: string | string[] }`), or the status line. */
async function refusalOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { message?: string | string[] };
    if (Array.isArray(body.message)) return body.message.join("; ");
    if (typeof body.message === "string") return body.message;
  } catch {
    // Not the gateway's JSON error body: the status says what happened.
  }
  return `${response.status} ${response.statusText}`.trim();
}

/**
 * GETs `path` (e.g. `/reports/reconciliation?from=…&to=…`) as CSV and saves it as `filename`. A 401 (the
 * token expired or its key was revoked) tells `onUnauthorized` first, so the page signs out as it does
 * for its tRPC calls (`createApi`).
 *
 * @throws {Error} with the gateway's own message when it refuses (a 401, a bad window…).
 */
export async function downloadCsv(options: {
  path: string;
  /** The session's bearer token; null for a person's session, which the cookie carries. */
  token: string | null;
  tenantId?: string | null;
  filename: string;
  onUnauthorized?: () => void;
}): Promise<void> {
  const headers: Record<string, string> = { accept: "text/csv" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
  const response = await fetch(options.path, { headers });
  if (response.status === 401) options.onUnauthorized?.();
  if (!response.ok) throw new Error(await refusalOf(response));
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  try {
    const link = document.createElement("a");
    link.href = url;
    link.download = options.filename;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has handed the file to the browser; the URL is kept a moment for browsers that read it late.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
