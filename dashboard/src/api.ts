/**
 * The dashboard's only way to the gateway: a `@trpc/client` typed by the gateway's `AppRouter`, on `/trpc`
 * of the page's own origin. A change of a procedure's input or output that the screens do not follow is a
 * type error in `bun run typecheck`.
 */
import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../src/routers/app.ts";

/** The typed client: `api.payments.list.query({ … })`. */
export type Api = TRPCClient<AppRouter>;

/** Every procedure's output, e.g. `Outputs["payments"]["get"]` for a payment. */
export type Outputs = inferRouterOutputs<AppRouter>;

/** Every procedure's input. */
export type Inputs = inferRouterInputs<AppRouter>;

/** A payment as lists show it (a payment's own page may carry more). */
export type Payment = Outputs["payments"]["list"]["data"][number];
export type Delivery = Outputs["payments"]["deliveries"]["data"][number];
export type WebhookEndpoint = Outputs["webhooks"]["get"];
export type ApiKey = Outputs["apiKeys"]["list"]["data"][number];
export type WhoAmI = Outputs["auth"]["whoami"];

/**
 * The person's own calls that answer 401 for a wrong password or code they typed: their session goes on, and the
 * screen says the refusal (any other 401 means the session ended).
 */
const CHECKS_WHAT_WAS_TYPED = ["me.changePassword", "me.confirmTwoFactor", "me.disableTwoFactor"];

function checksWhatWasTyped(input: unknown): boolean {
  const path = new URL(String(input instanceof Request ? input.url : input), location.origin).pathname;
  return CHECKS_WHAT_WAS_TYPED.some((procedure) => path === `/trpc/${procedure}`);
}

/**
 * A client sending `token` as the bearer (left out: only `auth.token` answers, or a person's session cookie),
 * a person's session's CSRF token as `x-csrf-token`, and, for a tenant's session, its `tenantId` as `x-tenant-id`. `onUnauthorized` is told
 * when the gateway answers 401 (the token expired or its key was revoked), so the page can sign out.
 *
 * @example
 * ```ts
 * const api = createApi({ token: () => session?.token, onUnauthorized: signOut });
 * const page = await api.payments.list.query({ limit: 20 });
 * ```
 */
export function createApi(options: {
  token: () => string | null | undefined;
  tenantId?: () => string | null | undefined;
  /** A person's session (the cookie): its CSRF token, sent as `x-csrf-token` on every call. */
  csrfToken?: () => string | undefined;
  /** Is anyone signed in (a 401 then means the session ended)? Default: a token is set. */
  signedIn?: () => boolean;
  onUnauthorized?: () => void;
}): Api {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: "/trpc",
        headers() {
          const headers: Record<string, string> = {};
          const token = options.token();
          if (token) headers.authorization = `Bearer ${token}`;
          const csrfToken = options.csrfToken?.();
          if (csrfToken) headers["x-csrf-token"] = csrfToken;
          // A tenant's session names its tenant, as the procedures that require x-tenant-id ask.
          const tenantId = options.tenantId?.();
          if (tenantId) headers["x-tenant-id"] = tenantId;
          return headers;
        },
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          if (response.status === 401 && (options.signedIn?.() ?? Boolean(options.token())) && !checksWhatWasTyped(input)) options.onUnauthorized?.();
          return response;
        },
      }),
    ],
  });
}

/** The gateway's own message for a failed call (never a stack), or the browser's when it was not reached. */
export function messageOf(error: unknown): string {
  if (error instanceof TRPCClientError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The HTTP status of a failed call, when the gateway answered. */
export function statusOf(error: unknown): number | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = error.data as { httpStatus?: number } | undefined;
  return data?.httpStatus;
}

/** The contract's error code of a failed call (`insufficient_balance`, …), when the gateway answered one. */
export function codeOf(error: unknown): string | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = error.data as { httpBody?: { code?: unknown } } | undefined;
  return typeof data?.httpBody?.code === "string" ? data.httpBody.code : undefined;
}
