/**
 * `/tenants` (contract §3): operators create and manage tenants; a tenant reads its own record and
 * rotates its callback signing secret.
 */
import { z } from "zod";
import { pageOf, pageQuery } from "../services/paging.ts";
import { createTenant, getTenant, listTenants, rotateCallbackSecret, updateTenant } from "../services/tenants/manage-tenants.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { adminProcedure, router, tenantOwnerProcedure } from "./trpc.ts";

const tenantId = z.string().min(1).max(64).meta({ description: "ten_…" });
const name = z.string().trim().min(1).max(200).meta({ example: "Boutique Awa" });

export const tenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    storeName: z.string(),
    disabled: z.boolean(),
    disabledReason: z.string().nullable().meta({ description: "Why the operator disabled it (the shop's people read it at sign-in); null while enabled" }),
    liveEnabled: z.boolean(),
    rateLimit: z.object({ rps: z.number(), burst: z.number() }).nullable(),
    createdAt: z.string().meta({ format: "date-time" }),
    updatedAt: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "Tenant" });

const createdTenant = z
  .object({
    tenant: tenantSchema.pick({ id: true, name: true, storeName: true, disabled: true, liveEnabled: true, createdAt: true }),
    apiKey: z.object({ id: z.string(), secret: z.string().meta({ description: "Shown this once" }), environment: z.literal("sandbox") }),
    callbackSecret: z.string().meta({ description: "Signs deliveries to a direct payment's callback_url. Shown this once" }),
  })
  .meta({ id: "CreatedTenant" });

const rateLimit = z.object({ rps: z.number().int().min(1).max(100_000), burst: z.number().int().min(1).max(1_000_000) });

export const tenantsRouter = router({
  create: adminProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({
      openapi: {
        method: "POST",
        path: "/tenants",
        tags: ["tenants"],
        summary: "Create a tenant",
        description: "Returns the first sandbox API key and the callback signing secret: the only time they are shown.",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ name, storeName: name.optional().meta({ description: "Defaults to name (provider B requires a store name)" }) }))
    .output(createdTenant)
    .mutation(async ({ ctx, input }) => {
      const created = await createTenant(ctx.deps, input);
      return { ...created, apiKey: { id: created.apiKey.id, secret: created.apiKey.secret, environment: "sandbox" as const } };
    }),
  list: adminProcedure
    .meta({ openapi: { method: "GET", path: "/tenants", tags: ["tenants"], summary: "List tenants, newest first" } })
    .input(z.object({ ...pageQuery }))
    .output(pageOf(tenantSchema))
    .query(({ ctx, input }) => listTenants(ctx.deps, input)),
  get: tenantOwnerProcedure
    .meta({ openapi: { method: "GET", path: "/tenants/{tenant_id}", tags: ["tenants"], summary: "Read a tenant" } })
    .input(z.object({ tenant_id: tenantId }))
    .output(tenantSchema)
    .query(({ ctx }) => getTenant(ctx.deps, ctx.tenant.id)),
  update: adminProcedure
    .meta({
      openapi: { method: "PATCH", path: "/tenants/{tenant_id}", tags: ["tenants"], summary: "Rename, disable, enable live, change the rate limit" },
      errors: [404],
    })
    .input(
      z.object({
        tenant_id: tenantId,
        name: name.optional(),
        storeName: name.optional(),
        disabled: z.boolean().optional(),
        reason: z.string().trim().min(1).max(500).optional().meta({
          description: "With disabled: true, why (shown to the shop's people when they sign in); enabling clears it",
          example: "Unpaid invoice of October",
        }),
        liveEnabled: z.boolean().optional(),
        rateLimit: rateLimit.nullable().optional().meta({ description: "null returns to the service default" }),
      }),
    )
    .output(tenantSchema)
    .mutation(({ ctx, input }) => {
      const { tenant_id, ...changes } = input;
      return updateTenant(ctx.deps, tenant_id, changes);
    }),
  rotateCallbackSecret: tenantOwnerProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({
      openapi: {
        method: "POST",
        path: "/tenants/{tenant_id}/callback-secret/rotate",
        tags: ["tenants"],
        summary: "Rotate the callback signing secret",
        description: "The previous secret keeps signing beside the new one for 24 hours. The new secret is shown this once.",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ tenant_id: tenantId }))
    .output(z.object({ callbackSecret: z.string(), previousExpiresAt: z.string().meta({ format: "date-time" }) }))
    .mutation(({ ctx }) => rotateCallbackSecret(ctx.deps, ctx.tenant.id)),
});
