/**
 * Procedures that exercise the REST bridge and the error shape with the kinds of schema the real routers
 * use (the spec's enum, nested fields, path and query coercion, form bodies), mounted beside the real
 * router on a test gateway's dependencies.
 */
import { z } from "zod";
import { appRouter } from "../../src/routers/app.ts";
import { NotFoundError, ProviderError, UnavailableError, ValidationError } from "../../src/errors.ts";
import { idempotencyKeyHeader, idempotent } from "../../src/routers/idempotency.ts";
import { adminProcedure, authedProcedure, publicProcedure, router, tenantProcedure } from "../../src/routers/trpc.ts";

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

// ---------------------------------------------------------------------------------------------------------
// Idempotency-Key fixtures (test/e2e/payments/idempotency.test.ts): creating procedures with a visible effect.
// (Imports kept here, beside what uses them, so that this section stays an append to the file.)

/**
 * What the idempotency fixtures did and will do, by the `name` in their input: how many times each ran,
 * a promise a call waits on before answering (to hold it in flight), and how many more calls fail with 503.
 */
export const idempotencyProbe = {
  calls: new Map<string, number>(),
  gates: new Map<string, Promise<unknown>>(),
  failures: new Map<string, number>(),
};

async function runIdempotencyFixture(name: string, outcome: string | undefined): Promise<number> {
  const call = (idempotencyProbe.calls.get(name) ?? 0) + 1;
  idempotencyProbe.calls.set(name, call);
  await idempotencyProbe.gates.get(name);
  const failures = idempotencyProbe.failures.get(name) ?? 0;
  if (failures > 0) {
    idempotencyProbe.failures.set(name, failures - 1);
    throw new UnavailableError("The fixture is unavailable this time");
  }
  if (outcome === "not_found") throw new NotFoundError("Thing not found");
  if (outcome === "refused")
    throw new ProviderError(422, "The provider refused the thing", { providerErrors: ["thing is too big"], providerResponseCode: "42" });
  if (outcome === "invalid") throw new ValidationError(["name must be shorter", "group is odd"]);
  if (outcome === "unavailable") throw new UnavailableError();
  if (outcome === "crash") throw new Error("the fixture crashed");
  if (outcome === "provider_timeout")
    throw new ProviderError(504, "The provider did not answer in time; the payment stays pending", { paymentId: `pay_${name}`, transactionId: 412 });
  if (outcome === "provider_unreachable") throw new ProviderError(502, "The provider could not be reached; nothing was sent");
  return call;
}

const thingOutput = z.object({ id: z.string(), group: z.string(), name: z.string(), call: z.number(), tenantId: z.string(), environment: z.string() });

export const idempotencyFixtureRouter = router({
  createThing: tenantProcedure
    .use(idempotent())
    .meta({ openapi: { method: "POST", path: "/fixture/groups/{group}/things", tags: ["fixture"], requestHeaders: idempotencyKeyHeader } })
    .input(
      z.object({
        group: z.string().min(1),
        name: z.string().min(1),
        outcome: z.enum(["created", "not_found", "refused", "invalid", "unavailable", "crash", "provider_timeout", "provider_unreachable"]).optional(),
      }),
    )
    .output(thingOutput)
    .mutation(async ({ ctx, input }) => {
      const call = await runIdempotencyFixture(input.name, input.outcome);
      return { id: crypto.randomUUID(), group: input.group, name: input.name, call, tenantId: ctx.tenant.id, environment: ctx.environment };
    }),
  createOperatorThing: adminProcedure
    .use(idempotent())
    .meta({ openapi: { method: "POST", path: "/fixture/operator-things", tags: ["fixture"] } })
    .input(z.object({ name: z.string().min(1) }))
    .output(z.object({ id: z.string(), call: z.number() }))
    .mutation(async ({ input }) => ({ id: crypto.randomUUID(), call: await runIdempotencyFixture(input.name, undefined) })),
  createSecret: tenantProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({ openapi: { method: "POST", path: "/fixture/secrets", tags: ["fixture"] } })
    .input(z.object({ name: z.string().min(1) }))
    .output(z.object({ id: z.string(), secret: z.string() }))
    .mutation(async ({ input }) => {
      await runIdempotencyFixture(input.name, undefined);
      return { id: crypto.randomUUID(), secret: `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}` };
    }),
});

/** The real router, the fixtures, and the idempotency fixtures beside them. */
export const routerWithIdempotencyFixtures = router({ ...routerWithFixtures._def.record, fixtureIdempotency: idempotencyFixtureRouter });
