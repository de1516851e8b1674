/**
 * `/tenants/{tenant_id}/api-keys` (contract §3): a tenant's long-lived keys, exchanged for bearer tokens at
 * `POST /auth/token`. The secret is shown once, at creation.
 */
import { z } from "zod";
import { ForbiddenError } from "../errors.ts";
import { apiKeyEnvironment, createApiKey, listApiKeys, revokeApiKey } from "../services/api-keys/api-keys.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { assertMayActIn, router, tenantOwnerProcedure } from "./trpc.ts";

const tenantId = z.string().min(1).max(64);
const environment = z.enum(["sandbox", "live"]);

const apiKeySchema = z
  .object({
    id: z.string(),
    environment,
    name: z.string().nullable(),
    prefix: z.string().meta({ description: "The first characters of the secret, for recognising it" }),
    createdAt: z.string().meta({ format: "date-time" }),
    revokedAt: z.string().meta({ format: "date-time" }).nullable(),
    lastUsedAt: z.string().meta({ format: "date-time" }).nullable(),
  })
  .meta({ id: "ApiKey" });

export const apiKeysRouter = router({
  create: tenantOwnerProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({
      openapi: {
        method: "POST",
        path: "/tenants/{tenant_id}/api-keys",
        tags: ["api keys"],
        summary: "Create an API key",
        description: "The secret is in this response only.",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ tenant_id: tenantId, environment, name: z.string().trim().min(1).max(100).optional().meta({ example: "Checkout server" }) }))
    .output(
      z
        .object({
          id: z.string(),
          secret: z.string(),
          environment,
          name: z.string().nullable(),
          prefix: z.string(),
          createdAt: z.string().meta({ format: "date-time" }),
        })
        .meta({ id: "CreatedApiKey" }),
    )
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, input.environment);
      return createApiKey(ctx.deps, { tenantId: ctx.tenant.id, environment: input.environment, name: input.name ?? null });
    }),
  list: tenantOwnerProcedure
    .meta({ openapi: { method: "GET", path: "/tenants/{tenant_id}/api-keys", tags: ["api keys"], summary: "List API keys (prefixes only)" } })
    .input(z.object({ tenant_id: tenantId }))
    .output(z.object({ data: z.array(apiKeySchema) }))
    .query(async ({ ctx }) => ({ data: await listApiKeys(ctx.deps, ctx.tenant.id) })),
  revoke: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/tenants/{tenant_id}/api-keys/{key_id}",
        tags: ["api keys"],
        summary: "Revoke an API key",
        description: "Tokens minted from it stop working within 5 seconds.",
      },
    })
    .input(z.object({ tenant_id: tenantId, key_id: z.string().min(1).max(64) }))
    .output(z.object({ id: z.string(), revokedAt: z.string().meta({ format: "date-time" }) }))
    .mutation(async ({ ctx, input }) => {
      const keyEnvironment = await apiKeyEnvironment(ctx.deps, ctx.tenant.id, input.key_id);
      if (keyEnvironment === "live" && ctx.principal.role !== "admin" && ctx.principal.environment !== "live")
        throw new ForbiddenError("A sandbox token cannot act on live");
      return revokeApiKey(ctx.deps, ctx.tenant.id, input.key_id);
    }),
});
