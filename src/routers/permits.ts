/**
 * Provider B PERMIT procedures (contract §5): recurring debit authorisations and charges against them.
 * Every route is tenant-scoped with `x-tenant-id` required; another tenant's (or environment's) permit is
 * 404. The schedule routes live in `permitSchedules`.
 *
 * | Method | Path | Does |
 * |---|---|---|
 * | POST | /providerB/permits | create at provider B → `{ permitId, status: "pending", authorizationUrl, token }` |
 * | GET | /providerB/permits, /providerB/permits/{permit_id} | list (filter by status) / read |
 * | DELETE | /providerB/permits/{permit_id} | revoke at provider B and locally; its schedule is cancelled |
 * | POST | /providerB/permits/{permit_id}/charges | charge now → `{ chargeId, status, amount, paymentId, … }` |
 * | GET | /providerB/permits/{permit_id}/charges | the permit's charges |
 */
import { z } from "zod";
import { createPermitCharge, executePermitCharge } from "../services/permits/charges.ts";
import { createPermit } from "../services/permits/create-permit.ts";
import { customData, permitRequest } from "../services/permits/permit-request.ts";
import { chargeSchema, chargeView, PERMIT_STATUS_VALUES, permitSchema } from "../services/permits/permit-view.ts";
import { findPermit, getPermit, listCharges, listPermits } from "../services/permits/read-permits.ts";
import { revokePermit } from "../services/permits/revoke-permit.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const tenantHeader = z.object({ "x-tenant-id": z.string().meta({ description: "The calling tenant (required)" }) });

const permitCreated = z
  .object({
    permitId: z.string().meta({ description: "Our permit id (prm_…)" }),
    status: z.literal("pending"),
    authorizationUrl: z.string().meta({ description: "Send the customer here to authorise the permit" }),
    token: z.string().meta({ description: "Provider B's permit token" }),
  })
  .meta({ id: "PermitCreated" });

const chargeInput = z
  .object({
    amount: z.number().int().min(1).meta({ description: "Amount to charge, at most the permit's maxAmount", example: 5000 }),
    description: z.string().trim().min(1).max(255).meta({ example: "Monthly box, January" }),
    customData,
  })
  .meta({ id: "PermitChargeRequest" });

const permitId = z.string().min(1).max(64).meta({ description: "Our permit id (prm_…)" });

export const permitsRouter = router({
  create: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/providerB/permits",
        tags: ["permits"],
        summary: "Create a permit (recurring debit authorisation)",
        description:
          "Creates the permit at provider B with the tenant's credentials of the token's environment (424 when there are none) and records it pending. " +
          "Send the customer to authorizationUrl; the permit becomes active when provider B confirms the authorisation (permit.activated).",
        requestHeaders: idempotencyKeyHeader.extend(tenantHeader.shape),
      },
      tenantHeader: "required",
      errors: [424, 502, 504],
    })
    .input(permitRequest)
    .output(permitCreated)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return createPermit(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input);
    }),

  list: tenantProcedure
    .meta({
      openapi: { method: "GET", path: "/providerB/permits", tags: ["permits"], summary: "List permits, newest first", requestHeaders: tenantHeader },
      tenantHeader: "required",
    })
    .input(z.object({ ...pageQuery, status: z.enum(PERMIT_STATUS_VALUES).optional() }))
    .output(pageOf(permitSchema).meta({ id: "PermitList" }))
    .query(({ ctx, input }) => listPermits(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input)),

  get: tenantProcedure
    .meta({
      openapi: { method: "GET", path: "/providerB/permits/{permit_id}", tags: ["permits"], summary: "Read a permit", requestHeaders: tenantHeader },
      tenantHeader: "required",
    })
    .input(z.object({ permit_id: permitId }))
    .output(permitSchema)
    .query(({ ctx, input }) => getPermit(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.permit_id)),

  revoke: tenantProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/providerB/permits/{permit_id}",
        tags: ["permits"],
        summary: "Revoke a permit",
        description:
          "Revokes the permit at provider B, then locally (permit.revoked) and cancels its schedule, in one transaction. An ended permit answers as it is. " +
          "Provider B down (502/504) changes nothing.",
        requestHeaders: tenantHeader,
      },
      tenantHeader: "required",
      // 422: provider B refused the revocation for another reason than the permit having ended.
      errors: [422, 424, 502, 504],
    })
    .input(z.object({ permit_id: permitId }))
    .output(permitSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return revokePermit(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.permit_id);
    }),

  charge: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/providerB/permits/{permit_id}/charges",
        tags: ["permits"],
        summary: "Charge a permit now",
        description:
          "Records the charge (a payment of kind permit_charge), then charges it at provider B with the charge id as idempotency key. " +
          "With an Idempotency-Key the charge keeps the key for good: a retry with it answers that charge as it stands (carried through if it was not), never a second one. " +
          "Answers the charge as it stands: succeeded or failed when provider B settled it at once, " +
          "otherwise pending — settled later by IPN or the sync job, never charged twice. 409 permit_not_active, 422 amount_exceeds_permit.",
        requestHeaders: idempotencyKeyHeader.extend(tenantHeader.shape),
      },
      tenantHeader: "required",
      errors: [409, 422],
    })
    .input(chargeInput.extend({ permit_id: permitId }))
    .output(chargeSchema)
    .mutation(async ({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      const scope = { tenantId: ctx.tenant.id, environment: ctx.environment };
      // The key is the charge row's own (unique per permit): a retry finds this charge whatever became of the
      // key's stored answer, and carries it through (provider B, asked again under the charge's id, charges once).
      const { charge } = await createPermitCharge(ctx.deps, {
        ...scope,
        permitId: input.permit_id,
        amount: input.amount,
        description: input.description,
        customData: input.customData,
        idempotencyKey: ctx.headers.get("idempotency-key") ?? undefined,
      });
      const permit = await findPermit(ctx.deps, scope, input.permit_id);
      try {
        return chargeView(await executePermitCharge(ctx.deps, charge.id), permit.currency);
      } catch (err) {
        // The row is there and its sync job will settle it: answer it as pending rather than lose its id.
        ctx.deps.logger.error({ err, chargeId: charge.id }, "permit charge could not be executed now; the sync job will");
        return chargeView(charge, permit.currency);
      }
    }),

  charges: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/providerB/permits/{permit_id}/charges",
        tags: ["permits"],
        summary: "The permit's charges, newest first",
        requestHeaders: tenantHeader,
      },
      tenantHeader: "required",
    })
    .input(z.object({ permit_id: permitId, ...pageQuery }))
    .output(pageOf(chargeSchema).meta({ id: "PermitChargeList" }))
    .query(({ ctx, input }) =>
      listCharges(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, { permitId: input.permit_id, limit: input.limit, cursor: input.cursor }),
    ),
});
