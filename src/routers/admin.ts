/**
 * `/admin/…`: operators' views across tenants. `GET /admin/payments/stuck` is the admin list of contract
 * §8: payments still pending after the 24 h sync window (the `passerelle_payments_stuck_pending` gauge
 * counts the same rows). `GET /admin/audit-log` is every shop's audit log, and `/admin/staff…` the operator's
 * staff: people who sign in to the operator's side as `admin` or `support` (issue 30 point 4).
 */
import { z } from "zod";
import { listAuditLog } from "../services/audit-log/mod.ts";
import { listStuckPayments, paymentSchema, providerNameSchema } from "../services/payments/mod.ts";
import { inviteToShop, listInvitations, listStaff, OPERATOR_ROLES, removeStaff } from "../services/people/mod.ts";
import { pageQuery } from "../services/paging.ts";
import { auditEntryListSchema, auditFilters } from "./audit-log.ts";
import { invitationSchema, inviterOf } from "./people.ts";
import { adminProcedure, router } from "./trpc.ts";

const operatorRole = z.enum(OPERATOR_ROLES).meta({ description: "admin: everything; support: reads only" });

const stuckPaymentSchema = paymentSchema
  .extend({
    tenantId: z.string().meta({ description: "The tenant the payment belongs to" }),
    pendingSeconds: z.number().int().meta({ description: "Seconds since the payment was created" }),
  })
  .meta({ id: "StuckPayment" });

const stuckListSchema = z
  .object({
    data: z.array(stuckPaymentSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
  })
  .meta({ id: "StuckPaymentList" });

export const adminRouter = router({
  stuckPayments: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/payments/stuck",
        tags: ["admin"],
        summary: "Payments still pending after the 24 h sync window",
        description:
          "Every tenant's payments (both providers, both environments unless filtered) still pending more than 24 h after creation: " +
          "the sync jobs have stopped and the payment was never assumed failed; an operator settles it. Oldest first. Admin token only.",
      },
    })
    .input(
      z.object({
        ...pageQuery,
        provider: providerNameSchema.optional(),
        environment: z.enum(["sandbox", "live"]).optional(),
        tenantId: z.string().min(1).max(64).optional().meta({ description: "Only this tenant's (ten_…)" }),
      }),
    )
    .output(stuckListSchema)
    .query(({ ctx, input }) => listStuckPayments(ctx.deps, input)),
  auditLog: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/audit-log",
        tags: ["admin"],
        summary: "Every shop's audit log, and the operator's own calls",
        description: "As `GET /audit-log`, across every shop (`tenantId` narrows to one). An admin token or the operator's staff.",
      },
    })
    .input(z.object({ ...auditFilters, tenantId: z.string().min(1).max(64).optional().meta({ description: "Only this shop's entries (ten_…)" }) }))
    .output(auditEntryListSchema)
    .query(({ ctx, input }) => listAuditLog(ctx.deps, input)),
  inviteStaff: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/admin/staff/invitations",
        tags: ["admin"],
        summary: "Invite a person to the operator's staff",
        description:
          "E-mails a single-use link (valid 7 days) to sign in to the operator's side of the dashboard as admin or support (reads only). " +
          "The operator's side always requires two-factor sign-in. 409 when the address is already of the staff.",
      },
      errors: [409],
    })
    .input(z.object({ email: z.email().max(254).meta({ example: "kofi@operator.example" }), role: operatorRole }))
    .output(invitationSchema)
    .mutation(({ ctx, input }) => inviteToShop(ctx.deps, { tenantId: null, email: input.email, role: input.role, invitedBy: inviterOf(ctx.principal) })),
  staff: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/staff", tags: ["admin"], summary: "The operator's staff, and their pending invitations" } })
    .input(z.object({}).optional())
    .output(
      z.object({
        data: z.array(z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), role: operatorRole }).meta({ id: "StaffMember" })),
        invitations: z.array(invitationSchema),
      }),
    )
    .query(async ({ ctx }) => ({ data: await listStaff(ctx.deps), invitations: await listInvitations(ctx.deps, null) })),
  removeStaff: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/admin/staff/{person_id}",
        tags: ["admin"],
        summary: "Take a person off the operator's staff",
        description: "Their sessions on the operator's side end at once; their shops, if any, are theirs still.",
      },
      errors: [404],
    })
    .input(z.object({ person_id: z.string().min(1).max(64) }))
    .output(z.object({ id: z.string(), removedAt: z.string().meta({ format: "date-time" }) }))
    .mutation(({ ctx, input }) => removeStaff(ctx.deps, input.person_id)),
});
