/**
 * People (issue 30): a shop's invitations and members (`/tenants/{tenant_id}/…`), and the public calls a person
 * makes from an e-mailed link (`/people/…`): accept an invitation, ask for and use a password link. See
 * docs/team.md.
 */
import { z } from "zod";
import { ForbiddenError } from "../errors.ts";
import {
  acceptInvitation,
  changeRole,
  confirmPasswordReset,
  inviteToShop,
  listInvitations,
  listMembers,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  removeMember,
  requestPasswordReset,
  setTwoFactorRequired,
  revokeInvitation,
  SHOP_ROLES,
} from "../services/people/mod.ts";
import type { Principal } from "../services/auth/tokens.ts";
import { publicProcedure, router, tenantOwnerProcedure } from "./trpc.ts";

const tenantId = z.string().min(1).max(64).meta({ description: "ten_…" });
const role = z.enum(SHOP_ROLES).meta({
  description: "owner: everything; developer: keys, webhooks, routing, reads; finance: payments, refunds, payouts, reads; viewer: reads (docs/team.md)",
});
const anyRole = z.enum(["owner", "developer", "finance", "viewer", "admin", "support"]);
const email = z.email().max(254).meta({ example: "awa@boutique.example" });
// The rules beyond a string (length, common passwords) are the service's, so that their message is one.
const password = z
  .string()
  .min(1)
  .max(PASSWORD_MAX_LENGTH * 4)
  .meta({ description: `At least ${PASSWORD_MIN_LENGTH} characters, not one of the common passwords`, example: "baobab sous la pluie" });
const linkToken = z.string().min(1).max(200).meta({
  description: "The token of the e-mailed link (what follows `#/invitation/` or `#/reset-password/`)",
  example: "inv_6y0cS2Qh1N1x0rI7Zb6S5E3bYw0wS3hF8Gm2Jc4Xk9Q",
});
const dateTime = z.string().meta({ format: "date-time" });

export const invitationSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: anyRole,
    invitedBy: z.string().meta({ description: "`operator`, `key:<key id>` or a person's id" }),
    createdAt: dateTime,
    expiresAt: dateTime,
  })
  .meta({ id: "Invitation" });

const memberSchema = z
  .object({ id: z.string().meta({ description: "per_…" }), email: z.string(), name: z.string().nullable(), role, joinedAt: dateTime })
  .meta({ id: "Member" });

/** Who sent an invitation, as the invitation records it. */
export function inviterOf(principal: Principal): string {
  if (principal.person) return principal.person.personId;
  if (principal.role === "admin") return "operator";
  return principal.keyId ? `key:${principal.keyId}` : principal.sub;
}

/** The operator (a token or the operator's staff) may give and take the owner's role; the shop's own people not. */
const byOperator = (principal: Principal) => principal.role === "admin";

export const peopleRouter = router({
  invite: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/tenants/{tenant_id}/invitations",
        tags: ["people"],
        summary: "Invite a person to the shop",
        description:
          "E-mails a single-use link (valid 7 days) to join the shop's dashboard with the role (default viewer). An operator invites owners and the other roles; " +
          "the shop (its owner signed in, or its token) the other roles. A pending invitation of the same address is replaced. 409 when the address already belongs to the shop.",
      },
      errors: [409],
    })
    .input(z.object({ tenant_id: tenantId, email, role: role.default("viewer") }))
    .output(invitationSchema)
    .mutation(({ ctx, input }) => {
      if (input.role === "owner" && !byOperator(ctx.principal)) throw new ForbiddenError("Only an operator invites a shop's owner");
      return inviteToShop(ctx.deps, { tenantId: ctx.tenant.id, email: input.email, role: input.role, invitedBy: inviterOf(ctx.principal) });
    }),
  invitations: tenantOwnerProcedure
    .meta({ openapi: { method: "GET", path: "/tenants/{tenant_id}/invitations", tags: ["people"], summary: "List the shop's pending invitations" } })
    .input(z.object({ tenant_id: tenantId }))
    .output(z.object({ data: z.array(invitationSchema) }))
    .query(async ({ ctx }) => ({ data: await listInvitations(ctx.deps, ctx.tenant.id) })),
  revokeInvitation: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/tenants/{tenant_id}/invitations/{invitation_id}",
        tags: ["people"],
        summary: "Revoke a pending invitation",
        description: "Its link stops working at once.",
      },
    })
    .input(z.object({ tenant_id: tenantId, invitation_id: z.string().min(1).max(64) }))
    .output(z.object({ id: z.string(), revokedAt: dateTime }))
    .mutation(({ ctx, input }) => {
      return revokeInvitation(ctx.deps, ctx.tenant.id, input.invitation_id);
    }),
  members: tenantOwnerProcedure
    .meta({ openapi: { method: "GET", path: "/tenants/{tenant_id}/people", tags: ["people"], summary: "List the shop's people" } })
    .input(z.object({ tenant_id: tenantId }))
    .output(z.object({ data: z.array(memberSchema) }))
    .query(async ({ ctx }) => ({ data: await listMembers(ctx.deps, ctx.tenant.id) })),
  changeRole: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/tenants/{tenant_id}/people/{person_id}",
        tags: ["people"],
        summary: "Change a person's role in the shop",
        description:
          "The shop's owner (or its token) sets developer, finance or viewer; making someone an owner, or changing an owner's role, is an operator's (else 403). " +
          "The person's sessions act with the new role from their next call. The audit log records the role before and after.",
      },
      errors: [404],
    })
    .input(z.object({ tenant_id: tenantId, person_id: z.string().min(1).max(64), role }))
    .output(z.object({ id: z.string(), role, previousRole: role }).meta({ id: "RoleChange" }))
    .mutation(async ({ ctx, input }) => {
      const changed = await changeRole(ctx.deps, {
        tenantId: ctx.tenant.id,
        personId: input.person_id,
        role: input.role,
        byOperator: byOperator(ctx.principal),
      });
      ctx.request.auditChanges = { role: { before: changed.previousRole, after: changed.role } };
      return changed;
    }),
  removeMember: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/tenants/{tenant_id}/people/{person_id}",
        tags: ["people"],
        summary: "Remove a person from the shop",
        description: "Their sessions in the shop end at once; they keep their other shops, if any. An owner is removed by an operator only (else 403).",
      },
    })
    .input(z.object({ tenant_id: tenantId, person_id: z.string().min(1).max(64) }))
    .output(z.object({ id: z.string(), removedAt: dateTime }))
    .mutation(({ ctx, input }) => removeMember(ctx.deps, ctx.tenant.id, input.person_id, byOperator(ctx.principal))),
  twoFactorPolicy: tenantOwnerProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/tenants/{tenant_id}/two-factor-policy",
        tags: ["people"],
        summary: "Require two-factor sign-in for the whole shop",
        description:
          "The shop's owner (signed in) or an operator. Once required, a person of the shop without two-factor sign-in can only set it up " +
          "(every other call with their session is 403 until then), and nobody of the shop can turn theirs off.",
      },
    })
    .input(z.object({ tenant_id: tenantId, requireTwoFactor: z.boolean() }))
    .output(z.object({ requireTwoFactor: z.boolean() }))
    .mutation(({ ctx, input }) => {
      if (!byOperator(ctx.principal) && ctx.principal.person?.role !== "owner") throw new ForbiddenError("Only the shop's owner or an operator sets this");
      return setTwoFactorRequired(ctx.deps, ctx.tenant.id, input.requireTwoFactor);
    }),
  acceptInvitation: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/invitations/accept",
        tags: ["people"],
        summary: "Accept an invitation",
        description:
          "With the token of the e-mailed link: a new person chooses a password (at least 10 characters, not a common one: else 400); " +
          "a person who already has one gives it (else 401). The link works once: an unknown, used, revoked or expired one is 404.",
        protect: false,
      },
      errors: [401, 404],
    })
    .input(z.object({ token: linkToken, password, name: z.string().trim().min(1).max(200).optional().meta({ example: "Awa Diop" }) }))
    .output(
      z
        .object({ personId: z.string(), email: z.string(), tenantId: z.string().nullable().meta({ description: "null: the operator's staff" }), role: anyRole })
        .meta({ id: "AcceptedInvitation" }),
    )
    .mutation(({ ctx, input }) => acceptInvitation(ctx.deps, { token: input.token, password: input.password, name: input.name ?? null })),
  requestPasswordReset: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/password-reset",
        tags: ["people"],
        summary: "Ask for a password link by e-mail",
        description:
          "When a person has this address, e-mails a single-use link (valid 1 hour; at most 3 an hour). The answer is the same whether the address is known or not.",
        protect: false,
      },
    })
    .input(z.object({ email }))
    .output(z.object({ accepted: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await requestPasswordReset(ctx.deps, input);
      return { accepted: true as const };
    }),
  resetPassword: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/password-reset/confirm",
        tags: ["people"],
        summary: "Set a new password with an e-mailed link",
        description: "The link works once (every other password link of the person stops too); an unknown, used or expired one is 404.",
        protect: false,
      },
      errors: [404],
    })
    .input(z.object({ token: linkToken, password }))
    .output(z.object({ personId: z.string() }))
    .mutation(({ ctx, input }) => confirmPasswordReset(ctx.deps, input)),
});
