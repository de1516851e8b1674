/**
 * `/auth/*` (contract §2). The token exchange for API keys arrives with the tenants work.
 */
import { z } from "zod";
import { authedProcedure, router } from "./trpc.ts";

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
