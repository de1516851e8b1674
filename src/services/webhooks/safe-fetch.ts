/**
 * The one way the gateway POSTs to a tenant's URL (webhooks, `callback_url`): checked, resolved once,
 * and connected to the address that was vetted — never to a second DNS answer (DNS rebinding).
 *
 * How the address is pinned, with Bun's `fetch`:
 * - `http:` the request goes to `http://<vetted ip>:<port>/…` with the original `Host` header;
 * - `https:` the same, plus `tls.serverName` = the original hostname: Bun sends it as SNI and checks the
 *   certificate against it (not against the IP), so the peer must still prove it is that host.
 *   Bun keeps a separate keep-alive pool per distinct `tls` options, so a connection verified for one
 *   name is not reused for another at the same IP.
 *
 * Residual risks, accepted: only the first vetted address is tried (no fallback to the next answer);
 * with `HTTP(S)_PROXY` set, Bun sends the pinned request through that proxy, which then reaches the
 * vetted IP; a URL whose host is an IP literal needs a certificate for that IP, as any client would.
 */
import { UnsafeTargetError, resolveSafeAddress, type LookupFunction, type TargetCaches, type TargetPolicy } from "./url-safety.ts";

/** How much of the answer is kept for the delivery log (contract §6). */
export const BODY_PREFIX_BYTES = 2048;

/** Why an attempt could not reach the target; the delivery log records the message. */
export type UnreachableReason = "timeout" | "dns" | "connection_refused" | "connection_reset" | "tls" | "network";

/** The target could not be reached or did not answer in time. The attempt may be retried. */
export class TargetUnreachableError extends Error {
  override name = "TargetUnreachableError";
  constructor(
    readonly reason: UnreachableReason,
    message: string,
  ) {
    super(message);
  }
}

export interface SafeFetchInit extends TargetPolicy {
  method: "POST";
  headers: HeadersInit;
  body: string | Uint8Array<ArrayBuffer>;
  /** Bounds the whole attempt: DNS, connect, answer and reading the body prefix. */
  timeoutMs: number;
  /** Defaults to the caches' resolver, else `node:dns/promises` `lookup`. */
  lookup?: LookupFunction;
  /** The gateway's URL checks and DNS answers (`deps.caches.targets`); without, each call checks and resolves afresh. */
  caches?: TargetCaches;
  /** Extra trusted CA certificates in PEM, for a private PKI in development and the tests' receiver. */
  ca?: string | string[];
}

export interface SafeFetchResult {
  status: number;
  headers: Headers;
  /** The first {@link BODY_PREFIX_BYTES} bytes of the answer, as UTF-8 text (a cut character is dropped). */
  bodyPrefix: string;
  durationMs: number;
  /** The IP that was connected to. */
  address: string;
}

/**
 * POSTs `init.body` to `url` under the outbound rules of contract §7. Redirects are not followed: a 3xx
 * comes back as its status. Rejects with {@link UnsafeTargetError} for a refused target and with
 * {@link TargetUnreachableError} (`timeout after 15000 ms`, `connection refused`, …) when the target cannot
 * be reached; any HTTP answer, whatever its status, resolves.
 *
 * @example
 * ```ts
 * const result = await safeFetch(endpoint.url, {
 *   method: "POST", headers: { "content-type": "application/json", ...signatureHeaders }, body,
 *   timeoutMs: config.webhookTimeoutMs, environment: endpoint.environment, allowPrivateTargets: config.allowPrivateTargets,
 * });
 * // { status: 200, headers, bodyPrefix: "ok", durationMs: 83, address: "203.0.113.7" }
 * ```
 */
export async function safeFetch(url: string, init: SafeFetchInit): Promise<SafeFetchResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(init.timeoutMs);
  try {
    const target = await resolveSafeAddress(url, {
      environment: init.environment,
      allowPrivateTargets: init.allowPrivateTargets,
      lookup: init.lookup,
      caches: init.caches,
      signal,
    });
    const pinned = new URL(target.url);
    const host = pinned.host;
    const https = pinned.protocol === "https:";
    const serverName = pinned.hostname.replace(/\.+$/, "");
    if (!target.literal) pinned.hostname = target.family === 6 ? `[${target.address}]` : target.address;

    const headers = new Headers(init.headers);
    headers.set("host", host);
    const tls: BunFetchRequestInitTLS = {};
    if (https && !target.literal) tls.serverName = serverName;
    if (init.ca !== undefined) tls.ca = init.ca;

    const response = await fetch(pinned, {
      method: init.method,
      headers,
      body: init.body,
      redirect: "manual",
      signal,
      tls,
    });
    const bodyPrefix = await readPrefix(response, signal);
    return {
      status: response.status,
      headers: response.headers,
      bodyPrefix,
      durationMs: Math.round(performance.now() - started),
      address: target.address,
    };
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw error;
    throw describeFailure(error, init.timeoutMs);
  }
}

/** Reads at most {@link BODY_PREFIX_BYTES} of the body, then drops the rest unread. */
async function readPrefix(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const aborted = new Promise<"aborted">((resolve) => {
    if (signal.aborted) resolve("aborted");
    signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  try {
    while (size < BODY_PREFIX_BYTES) {
      const next = await Promise.race([reader.read(), aborted]);
      // An answer whose status arrived but whose body stalls keeps what came before the timeout.
      if (next === "aborted" || next.done) break;
      chunks.push(next.value);
      size += next.value.byteLength;
    }
  } catch {
    // A body cut off mid-way still leaves the status and what was read.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, BODY_PREFIX_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.length;
    if (offset === bytes.length) break;
  }
  // `stream: true` without a final flush drops a character cut in half at the limit.
  return new TextDecoder("utf-8").decode(bytes, { stream: true });
}

const TLS_CODE = /CERT|TLS|SSL|SELF_SIGNED|ISSUER|SIGNATURE|HANDSHAKE/;

function describeFailure(error: unknown, timeoutMs: number): TargetUnreachableError {
  const e = error as { name?: string; code?: string; message?: string } | undefined;
  const code = typeof e?.code === "string" ? e.code : "";
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return new TargetUnreachableError("timeout", `timeout after ${timeoutMs} ms`);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA" || code.startsWith("DNS_")) {
    return new TargetUnreachableError("dns", `dns lookup failed (${code})`);
  }
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return new TargetUnreachableError("connection_refused", "connection refused");
  if (code === "ECONNRESET" || code === "ConnectionClosed" || code === "EPIPE") {
    return new TargetUnreachableError("connection_reset", "connection closed by the target");
  }
  if (TLS_CODE.test(code)) return new TargetUnreachableError("tls", `tls error (${code})`);
  const detail = code || (e?.message ?? String(error)).split("\n")[0]!.slice(0, 200);
  return new TargetUnreachableError("network", `network error (${detail})`);
}
