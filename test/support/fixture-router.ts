/**
 * Procedures that exercise the REST bridge and the error shape with the kinds of schema the real routers
 * use (the spec's enum, nested fields, path and query coercion, form bodies), mounted beside the real
 * router on a test gateway's dependencies.
 */
import { z } from "zod";
import { appRouter } from "../../src/routers/app.ts";
import { authedProcedure, publicProcedure, router, tenantProcedure } from "../../src/routers/trpc.ts";
import { ProviderError } from "../../src/errors.ts";

export const PAYMENT_METHODS = ["mnoA_open", "mnoB", "mnoC", "mnoB_tg", "mnoD", "mnoA_open_gn", "mnoA_ci", "mnoE_ne", "mnoF_sn"] as const;

const paymentInput = z.object({
  description: z.string().min(1).max(255),
  amount: z.number().int().min(1),
  payment_method: z.enum(PAYMENT_METHODS),
  phone_number: z.object({
    number: z.string().regex(/^\+\d{8,15}$/, "must be in international format, like +22997000000"),
    country: z.string().regex(/^[a-z]{2}$/, "must be two lower-case letters"),
  }),
  email: z.email().optional(),
});

export const fixtureRouter = router({
  createPayment: authedProcedure
    .meta({ openapi: { method: "POST", path: "/fixture/payments", tags: ["fixture"] } })
    .input(paymentInput)
    .output(paymentInput.extend({ ok: z.literal(true) }))
    .mutation(({ input }) => ({ ...input, ok: true as const })),
  readItem: tenantProcedure
    .meta({ openapi: { method: "GET", path: "/fixture/items/{item_id}", tags: ["fixture"] } })
    .input(z.object({ item_id: z.number().int().positive(), flag: z.boolean().optional(), tags: z.array(z.string()).optional() }))
    .output(z.object({ item_id: z.number(), flag: z.boolean().nullable(), tags: z.array(z.string()), tenantId: z.string(), environment: z.string() }))
    .query(({ input, ctx }) => ({
      item_id: input.item_id,
      flag: input.flag ?? null,
      tags: input.tags ?? [],
      tenantId: ctx.tenant.id,
      environment: ctx.environment,
    })),
  checkout: tenantProcedure
    .meta({ openapi: { method: "POST", path: "/fixture/checkout", tags: ["fixture"] }, tenantHeader: "required" })
    .input(z.object({ amount: z.number().int().min(1) }))
    .output(z.object({ tenantId: z.string() }))
    .mutation(({ ctx }) => ({ tenantId: ctx.tenant.id })),
  form: publicProcedure
    .meta({ openapi: { method: "POST", path: "/fixture/form", tags: ["fixture"], contentTypes: ["application/json", "application/x-www-form-urlencoded"] } })
    .input(z.object({ grant_type: z.string(), client_id: z.string() }))
    .output(z.object({ grant_type: z.string(), client_id: z.string() }))
    .mutation(({ input }) => input),
  crash: publicProcedure
    .meta({ openapi: { method: "GET", path: "/fixture/crash", tags: ["fixture"] } })
    .input(z.object({}))
    .output(z.object({}))
    .query(() => {
      throw new Error('relation "secret_table" does not exist: SELECT password FROM secret_table');
    }),
  refuse: publicProcedure
    .meta({ openapi: { method: "POST", path: "/fixture/refuse", tags: ["fixture"] } })
    .input(z.object({}))
    .output(z.object({}))
    .mutation(() => {
      throw new ProviderError(422, "The provider refused the request", { providerErrors: ["amount is too large"], providerResponseCode: "1001" });
    }),
});

/** The real router with the fixtures beside it. */
export const routerWithFixtures = router({ ...appRouter._def.record, fixture: fixtureRouter });
