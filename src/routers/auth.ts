/**
 * `/auth/*` (contract §2). The token exchange for API keys arrives with the tenants work.
 */
import { z } from "zod";
import { exchangeApiKey } from "../services/api-keys/api-keys.ts";
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

export const authRouter = router({
  token: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/token",
        tags: ["auth"],
        summary: "Exchange an API key for a bearer token",
        description: "OAuth2 client credentials. The token acts in the API key's environment. A wrong id and a wrong secret get the same 401.",
        protect: false,
        contentTypes: ["application/json", "application/x-www-form-urlencoded"],
      },
      errors: [401],
    })
    .input(
      z.object({
        grant_type: z.literal("client_credentials"),
        client_id: z.string().min(1).max(64).meta({ description: "The API key id, key_…", example: "key_01JD3M8Q4ZK2T9XG7B6V5N4C3A" }),
        client_secret: z.string().min(1).max(200).meta({ description: "The API key secret, psk_…", example: "psk_your-api-key-secret" }),
      }),
    )
    .output(z.object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number().int() }).meta({ id: "AccessToken" }))
    .mutation(({ ctx, input }) => exchangeApiKey(ctx.deps, { clientId: input.client_id, clientSecret: input.client_secret })),
  whoami: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/auth/whoami",
        tags: ["auth"],
        summary: "Who the calling token is",
        description: "The claims of the calling token, as the gateway reads them: the first call to make when a token does not work.",
      },
    })
    .output(whoamiOutput)
    .query(({ ctx }) => {
      const p = ctx.principal;
      return {
        sub: p.sub,
        role: p.role,
        tenantId: p.tenantId,
        environment: p.environment,
        keyId: p.keyId,
        expiresAt: p.expiresAt.toISOString(),
      };
    }),
});
