/**
 * Invitations (issue 30 point 1): an operator invites a shop's owner by e-mail address, a shop invites team
 * members. An invitation is a single-use link that expires, sent through the outbox; accepting it sets the
 * person's password (a new person) or adds the shop to an existing person's (who proves it with theirs).
 */
import { hashLinkToken, mintLinkToken } from "../../crypto/secrets.ts";
import type { MembershipRole, OperatorRole } from "../../db/schema.ts";
import { ConflictError, NotFoundError, UnauthorizedError } from "../../errors.ts";
import { enqueueEmail } from "../../jobs/queues.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { writeEmail } from "../mail/outbox.ts";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.ts";

/** How long an invitation's link works. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

export interface InvitationView {
  id: string;
  email: string;
  role: MembershipRole | OperatorRole;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

/** An e-mail address as people are told apart: trimmed, lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The dashboard page a link opens; the token is in the fragment, which no server (ours or a proxy) logs. */
export function dashboardLink(deps: Pick<Deps, "config">, page: "invitation" | "reset-password", token: string): string {
  return `${deps.config.publicBaseUrl}/dashboard/#/${page}/${token}`;
}

const view = (row: {
  id: string;
  email: string;
  role: MembershipRole | OperatorRole;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
}): InvitationView => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by,
  createdAt: row.created_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
});

const ROLE_WORDS: Record<MembershipRole | OperatorRole, string> = {
  owner: "its owner",
  developer: "a developer (API keys, webhooks, routing)",
  finance: "a member of its finance team (payments, refunds, payouts)",
  viewer: "a viewer (reading only)",
  admin: "an administrator",
  support: "a member of support (reading only)",
};

/**
 * Invites `email` to a shop with `role` — or, with `tenantId` null, to the operator's staff with an operator
 * role — replacing a pending invitation of the same address to the same place (its link stops working). The
 * invitation and its e-mail are written in one transaction. 409 when the address already belongs there.
 */
export async function inviteToShop(
  deps: Deps,
  input: { tenantId: string | null; email: string; role: MembershipRole | OperatorRole; invitedBy: string },
): Promise<InvitationView> {
  const email = normaliseEmail(input.email);
  const now = deps.now();
  const token = mintLinkToken("inv");
  const { row, emailId } = await deps.db.transaction().execute(async (tx) => {
    const member = input.tenantId
      ? await tx
          .selectFrom("memberships")
          .innerJoin("people", "people.id", "memberships.person_id")
          .select("people.id")
          .where("memberships.tenant_id", "=", input.tenantId)
          .where("people.email", "=", email)
          .executeTakeFirst()
      : await tx.selectFrom("people").select("id").where("email", "=", email).where("operator_role", "is not", null).executeTakeFirst();
    if (member)
      throw new ConflictError(input.tenantId ? "This e-mail address already belongs to the shop" : "This e-mail address is already of the operator's staff");
    await tx
      .updateTable("invitations")
      .set({ revoked_at: now })
      .where((eb) => (input.tenantId ? eb("tenant_id", "=", input.tenantId) : eb("tenant_id", "is", null)))
      .where("email", "=", email)
      .where("accepted_at", "is", null)
      .where("revoked_at", "is", null)
      .execute();
    const storeName = input.tenantId
      ? (await tx.selectFrom("tenants").select("store_name").where("id", "=", input.tenantId).executeTakeFirstOrThrow()).store_name
      : null;
    const row = await tx
      .insertInto("invitations")
      .values({
        id: newId("inv"),
        tenant_id: input.tenantId,
        email,
        role: input.role,
        token_hash: hashLinkToken(deps.config.apiKeyPepper, token),
        invited_by: input.invitedBy,
        created_at: now,
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const emailId = await writeEmail(deps, tx, {
      to: email,
      subject: `You are invited to ${storeName ?? "the operator's side"} on Passerelle`,
      text: [
        `You are invited to join ${storeName ? `${storeName}'s dashboard` : "the operator's side"} on Passerelle as ${ROLE_WORDS[input.role]}.`,
        "",
        `Open this link to choose your password (it works once, until ${row.expires_at.toISOString()}):`,
        dashboardLink(deps, "invitation", token),
        "",
        "If you did not expect this, ignore this message.",
      ].join("\n"),
    });
    return { row, emailId };
  });
  await enqueueEmail(deps, emailId);
  return view(row);
}

/** A shop's pending invitations (neither accepted, revoked nor expired), or the operator's (`null`), newest first. */
export async function listInvitations(deps: Pick<Deps, "db" | "now">, tenantId: string | null): Promise<InvitationView[]> {
  const rows = await deps.db
    .selectFrom("invitations")
    .selectAll()
    .where((eb) => (tenantId ? eb("tenant_id", "=", tenantId) : eb("tenant_id", "is", null)))
    .where("accepted_at", "is", null)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", deps.now())
    .orderBy("id", "desc")
    .execute();
  return rows.map(view);
}

/** Revokes a shop's pending invitation: its link stops working. 404 when it is not the shop's or not pending. */
export async function revokeInvitation(deps: Pick<Deps, "db" | "now">, tenantId: string, invitationId: string): Promise<{ id: string; revokedAt: string }> {
  const now = deps.now();
  const row = await deps.db
    .updateTable("invitations")
    .set({ revoked_at: now })
    .where("id", "=", invitationId)
    .where("tenant_id", "=", tenantId)
    .where("accepted_at", "is", null)
    .where("revoked_at", "is", null)
    .returning("id")
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Invitation not found");
  return { id: row.id, revokedAt: now.toISOString() };
}

const UNUSABLE_LINK = "This invitation link is unknown, already used, revoked or expired";

export interface AcceptedInvitation {
  personId: string;
  email: string;
  /** Null for an invitation to the operator's staff. */
  tenantId: string | null;
  role: MembershipRole | OperatorRole;
}

/**
 * Accepts an invitation by its link's token. A new person sets a password (the rules of `passwords.ts`);
 * a person who already has one (a member of another shop) gives it instead. The link works once: two
 * accepts racing meet on the invitation's row, and one of them gets 404.
 */
export async function acceptInvitation(deps: Deps, input: { token: string; password: string; name?: string | null }): Promise<AcceptedInvitation> {
  const tokenHash = hashLinkToken(deps.config.apiKeyPepper, input.token);
  const invitation = await deps.db.selectFrom("invitations").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
  if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expires_at <= deps.now()) throw new NotFoundError(UNUSABLE_LINK);
  const existing = await deps.db.selectFrom("people").selectAll().where("email", "=", invitation.email).executeTakeFirst();
  let passwordHash: string | null = null;
  if (existing?.password_hash) {
    if (!(await verifyPassword(input.password, existing.password_hash)))
      throw new UnauthorizedError("This e-mail address already has a Passerelle password: give it to join the shop");
  } else {
    assertAcceptablePassword(input.password, invitation.email);
    passwordHash = await hashPassword(input.password);
  }
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const personId = existing?.id ?? newId("per");
    // Single use: only the first accept moves the row.
    const taken = await tx
      .updateTable("invitations")
      .set({ accepted_at: now, accepted_by: personId })
      .where("id", "=", invitation.id)
      .where("accepted_at", "is", null)
      .where("revoked_at", "is", null)
      .where("expires_at", ">", now)
      .returning("id")
      .executeTakeFirst();
    if (!taken) throw new NotFoundError(UNUSABLE_LINK);
    if (!existing) {
      await tx
        .insertInto("people")
        .values({ id: personId, email: invitation.email, name: input.name ?? null, password_hash: passwordHash, created_at: now, updated_at: now })
        .execute();
    } else if (passwordHash) {
      await tx.updateTable("people").set({ password_hash: passwordHash, updated_at: now }).where("id", "=", personId).execute();
    }
    if (invitation.tenant_id === null) {
      await tx
        .updateTable("people")
        .set({ operator_role: invitation.role as OperatorRole, updated_at: now })
        .where("id", "=", personId)
        .execute();
    } else {
      await tx
        .insertInto("memberships")
        .values({ tenant_id: invitation.tenant_id, person_id: personId, role: invitation.role as MembershipRole, created_at: now })
        .onConflict((oc) => oc.columns(["tenant_id", "person_id"]).doUpdateSet({ role: invitation.role as MembershipRole }))
        .execute();
    }
    return { personId, email: invitation.email, tenantId: invitation.tenant_id, role: invitation.role };
  });
}
