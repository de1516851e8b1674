/**
 * `/auth/*` (contract §2). `POST /auth/token` is an OAuth2 token endpoint (RFC 6749 §4.4): client
 * credentials in the body or as HTTP Basic, errors as §5.2 has them on REST (`meta.oauthErrors`).
 */
import { z } from "zod";
import { exchangeApiKey } from "../services/api-keys/api-keys.ts";
import { clientCredentials } from "../services/auth/client-credentials.ts";
import type { Principal } from "../services/auth/tokens.ts";
import { authedProcedure, publicProcedure, router } from "./trpc.ts";

const whoamiOutput = z
  .object({
    sub: z.string(),
    role: z.enum(["admin", "tenant"]),
    tenantId: z.string().nullable(),
    environment: z.enum(["sandbox", "live"]),
    keyId: z.string().nullable(),
    expiresAt: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "WhoAmI" });

/**
 * One view per principal: a verified token's principal is kept with it (`services/auth/tokens.ts`), so its
 * view is too, and the direct read validates and serializes it once (`meta.directRead`). Never mutated.
 */
const whoamiViews = new WeakMap<Principal, z.infer<typeof whoamiOutput>>();

export const authRouter = router({
  token: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/token",
        tags: ["auth"],
        summary: "Exchange an API key for a bearer token",
        description:
          "OAuth2 client credentials (RFC 6749 §4.4): the API key's id and secret in the body (`client_secret_post`) or as HTTP Basic " +
          "(`client_secret_basic`, RFC 6749 §2.3.1), not both. The token acts in the API key's environment. Errors are RFC 6749 §5.2's " +
          "(`OAuthError`): a wrong id and a wrong secret get the same 401 `invalid_client`, with `WWW-Authenticate: Basic`.",
        protect: false,
        contentTypes: ["application/json", "application/x-www-form-urlencoded"],
      },
      errors: [401],
      oauthErrors: true,
    })
    .input(
      z.object({
        // A string first: a missing grant_type is `invalid_request`, another one `unsupported_grant_type` (RFC 6749 §5.2);
        // the document shows the one value (a pipe is documented by its input side).
        grant_type: z
          .string()
          .meta({ enum: ["client_credentials"] })
          .pipe(z.literal("client_credentials")),
        client_id: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .meta({ description: "The API key id, key_… (or send it as HTTP Basic)", example: "key_01JD3M8Q4ZK2T9XG7B6V5N4C3A" }),
        client_secret: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .meta({ description: "The API key secret, psk_… (or send it as HTTP Basic)", example: "psk_your-api-key-secret" }),
      }),
    )
    .output(z.object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number().int() }).meta({ id: "AccessToken" }))
    .mutation(({ ctx, input }) => {
      // RFC 6749 §5.1: a response holding a token is never cached.
      Object.assign((ctx.request.responseHeaders ??= {}), { "cache-control": "no-store", pragma: "no-cache" });
      return exchangeApiKey(ctx.deps, clientCredentials(ctx.headers, input));
    }),
  whoami: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/auth/whoami",
        tags: ["auth"],
        summary: "Who the calling token is",
        description: "The claims of the calling token, as the gateway reads them: the first call to make when a token does not work.",
      },
      directRead: true,
    })
    .output(whoamiOutput)
    .query(({ ctx }) => {
      const p = ctx.principal;
      let view = whoamiViews.get(p);
      if (!view) {
        view = { sub: p.sub, role: p.role, tenantId: p.tenantId, environment: p.environment, keyId: p.keyId, expiresAt: p.expiresAt.toISOString() };
        whoamiViews.set(p, view);
      }
      return view;
    }),
});
