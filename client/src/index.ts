/**
 * `@passerelle/client`: a typed client for a Passerelle gateway.
 *
 * - {@link createPasserelleClient}: a tRPC client (`@trpc/client`) on the gateway's `/trpc`, typed by the
 *   gateway's router and sending the bearer token on every call.
 * - {@link AppRouter}: the router's type, for building a tRPC client yourself (other links, React Query).
 * - `paths`, `components`, `operations`: the REST API's types generated from the OpenAPI document by
 *   openapi-typescript, for `openapi-fetch` (`createClient<paths>(…)`) or any typed fetch wrapper.
 *
 * @example
 * ```ts
 * import { createPasserelleClient } from "@passerelle/client";
 * const passerelle = createPasserelleClient({ baseUrl: "https://pay.example.com", token: accessToken });
 * const payment = await passerelle.payments.get.query({ payment_id: "pay_…" });
 * ```
 */
import { createTRPCClient, httpLink, type TRPCClient } from "@trpc/client";
import type { AppRouter } from "../generated/router.js";

export type { AppRouter } from "../generated/router.js";
export type { components, operations, paths } from "../generated/openapi.js";

export interface PasserelleClientOptions {
  /** The gateway's base URL, e.g. `https://pay.example.com` (tRPC is served under `/trpc`). */
  baseUrl: string;
  /**
   * The bearer token: an access token from `POST /auth/token` (the `auth.token` procedure), or a secret
   * API key (`psk_…`) as it is. A function is called before each request (a token that is renewed).
   * Left out (or undefined), only public procedures (`auth.token`) answer.
   */
  token?: string | (() => string | Promise<string>) | undefined;
  /** More headers for every request, e.g. `x-tenant-id` on an operator's calls. */
  headers?: Record<string, string> | undefined;
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch | undefined;
}

/** A tRPC client on the gateway: `client.<router>.<procedure>.query(input)` or `.mutate(input)`. */
export type PasserelleClient = TRPCClient<AppRouter>;

/**
 * A tRPC client on the gateway at `options.baseUrl`. One HTTP request per call (the gateway does not
 * accept batches); errors are `TRPCClientError`s whose `data.httpStatus` is the HTTP status.
 */
export function createPasserelleClient(options: PasserelleClientOptions): PasserelleClient {
  const { token } = options;
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${options.baseUrl.replace(/\/+$/, "")}/trpc`,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        async headers() {
          const headers: Record<string, string> = { ...options.headers };
          const bearer = typeof token === "function" ? await token() : token;
          if (bearer) headers.authorization = `Bearer ${bearer}`;
          return headers;
        },
      }),
    ],
  });
}
