/**
 * A person's own calls (issue 30 points 2 and 3): signing in and out of the dashboard (the session cookie), who
 * they are and which shops they belong to, their sessions and sign-ins, and their two-factor sign-in. See
 * docs/team.md.
 */
import { z } from "zod";
import {
  changePassword,
  confirmEnrolment,
  csrfTokenOf,
  disableTwoFactor,
  endSession,
  findLiveSession,
  listSessions,
  type LiveSession,
  listSignIns,
  OPERATOR_ROLES,
  PASSWORD_MIN_LENGTH,
  recoveryCodesLeft,
  SHOP_ROLES,
  sessionCookie,
  sessionSecretOf,
  signIn,
  startEnrolment,
} from "../services/people/mod.ts";
import type { Deps } from "../services/deps.ts";
import { personProcedure, publicProcedure, router } from "./trpc.ts";

const dateTime = z.string().meta({ format: "date-time" });
const code = z
  .string()
  .trim()
  .min(6)
  .max(20)
  .meta({ description: "The 6 digits the authenticator app shows, or a recovery code (xxxxx-xxxxx)", example: "123456" });

const meSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    tenantId: z.string().nullable().meta({ description: "The shop this session acts on; null on the operator's side" }),
    role: z
      .enum(["owner", "developer", "finance", "viewer", "admin", "support"])
      .meta({ description: "The person's role in that shop, or on the operator's side" }),
    twoFactorEnabled: z.boolean(),
    mustEnrol: z.boolean().meta({ description: "The shop requires two-factor sign-in and this person has not set it up: only that is open" }),
    recoveryCodesLeft: z.number().int(),
    shops: z.array(z.object({ tenantId: z.string(), storeName: z.string(), role: z.enum(SHOP_ROLES), requireTwoFactor: z.boolean() })),
    operatorRole: z.enum(OPERATOR_ROLES).nullable().meta({ description: "The person's role on the operator's side, if they are of its staff" }),
    csrfToken: z.string().meta({ description: "Send it as `x-csrf-token` on every call that changes something" }),
    expiresAt: dateTime,
  })
  .meta({ id: "Me" });

async function me(deps: Deps, person: LiveSession, secret: string): Promise<z.infer<typeof meSchema>> {
  const [row, shops, left] = await Promise.all([
    deps.db.selectFrom("people").select(["name", "operator_role"]).where("id", "=", person.personId).executeTakeFirstOrThrow(),
    deps.db
      .selectFrom("memberships")
      .innerJoin("tenants", "tenants.id", "memberships.tenant_id")
      .select(["tenants.id", "tenants.store_name", "memberships.role", "tenants.require_two_factor"])
      .where("memberships.person_id", "=", person.personId)
      .orderBy("memberships.created_at")
      .execute(),
    recoveryCodesLeft(deps, person.personId),
  ]);
  return {
    id: person.personId,
    email: person.email,
    name: row.name,
    tenantId: person.tenantId,
    role: person.role,
    twoFactorEnabled: person.twoFactorEnabled,
    mustEnrol: person.mustEnrol,
    recoveryCodesLeft: left,
    shops: shops.map((s) => ({ tenantId: s.id, storeName: s.store_name, role: s.role, requireTwoFactor: s.require_two_factor })),
    operatorRole: row.operator_role,
    csrfToken: csrfTokenOf(deps, secret),
    expiresAt: person.expiresAt.toISOString(),
  };
}

export const meRouter = router({
  signInOptions: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/people/sign-in/options",
        tags: ["people"],
        summary: "How the dashboard may be signed in to",
        description:
          "People sign in with e-mail, password and code; operators with an admin token. Signing in with an API key (a program's credential) " +
          "is offered only outside production (`NODE_ENV` other than `production`), for development and tests.",
        protect: false,
      },
    })
    .input(z.object({}).optional())
    .output(z.object({ apiKey: z.boolean() }))
    .query(({ ctx }) => ({ apiKey: ctx.deps.config.nodeEnv !== "production" })),
  signIn: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/sign-in",
        tags: ["people"],
        summary: "Sign in to the dashboard",
        description:
          "E-mail address, password and — when the person has set it up — a two-factor code (or a recovery code), for a session in one of " +
          "their shops (`tenantId`, default their first). The session is an `HttpOnly; Secure; SameSite=Strict` cookie (12 hours); the answer " +
          "holds its CSRF token. 401 for a wrong address or password (one message), a missing or wrong code; 403 for a shop they do not belong " +
          "to; 429 with `Retry-After` after `SIGN_IN_ADDRESS_LIMIT` attempts from one address (20 by default, refilled over 15 minutes), or while the account is locked (5 failures in a row: " +
          "1 minute, doubling, up to an hour). Every sign-in and failure is recorded.",
        protect: false,
      },
      errors: [401, 403, 429],
      sessionCookie: true,
    })
    .input(
      z.object({
        email: z.email().max(254).meta({ example: "awa@boutique.example" }),
        password: z.string().min(1).max(800).meta({ example: "baobab sous la pluie" }),
        code: code.optional(),
        tenantId: z.string().min(1).max(64).optional().meta({ description: "ten_…", example: "ten_01JD3M8Q4ZK2T9XG7B6V5N4C3A" }),
      }),
    )
    .output(meSchema)
    .mutation(async ({ ctx, input }) => {
      const signedIn = await signIn(ctx.deps, {
        ...input,
        address: ctx.request.clientAddress ?? "local",
        userAgent: ctx.headers.get("user-agent"),
      });
      Object.assign((ctx.request.responseHeaders ??= {}), { "set-cookie": sessionCookie(signedIn.session.secret), "cache-control": "no-store" });
      const secret = signedIn.session.secret;
      // The session just opened, read as every later call reads it.
      return me(ctx.deps, (await findLiveSession(ctx.deps, secret))!, secret);
    }),
  signOut: personProcedure
    .meta({
      openapi: { method: "POST", path: "/people/sign-out", tags: ["people"], summary: "Sign out: end this session", description: "The cookie is cleared." },
      sessionCookie: true,
    })
    .input(z.object({}).optional())
    .output(z.object({ id: z.string(), endedAt: dateTime }))
    .mutation(async ({ ctx }) => {
      const ended = await endSession(ctx.deps, ctx.person.personId, ctx.person.sessionId);
      Object.assign((ctx.request.responseHeaders ??= {}), { "set-cookie": sessionCookie(null) });
      return ended;
    }),
  me: personProcedure
    .meta({ openapi: { method: "GET", path: "/people/me", tags: ["people"], summary: "Who is signed in, in which shop, and their shops" } })
    .input(z.object({}).optional())
    .output(meSchema)
    .query(({ ctx }) => me(ctx.deps, ctx.person, sessionSecretOf(ctx.headers)!)),
  sessions: personProcedure
    .meta({ openapi: { method: "GET", path: "/people/me/sessions", tags: ["people"], summary: "The person's live sessions" } })
    .input(z.object({}).optional())
    .output(
      z.object({
        data: z.array(
          z
            .object({
              id: z.string(),
              tenantId: z.string().nullable(),
              address: z.string(),
              userAgent: z.string().nullable(),
              createdAt: dateTime,
              lastSeenAt: dateTime,
              expiresAt: dateTime,
              current: z.boolean(),
            })
            .meta({ id: "Session" }),
        ),
      }),
    )
    .query(async ({ ctx }) => ({ data: await listSessions(ctx.deps, ctx.person.personId, ctx.person.sessionId) })),
  endSession: personProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/people/me/sessions/{session_id}",
        tags: ["people"],
        summary: "End one of the person's sessions",
        description: "Another person's session is 404.",
      },
      errors: [404],
    })
    .input(z.object({ session_id: z.string().min(1).max(64) }))
    .output(z.object({ id: z.string(), endedAt: dateTime }))
    .mutation(({ ctx, input }) => endSession(ctx.deps, ctx.person.personId, input.session_id)),
  changePassword: personProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/me/password",
        tags: ["people"],
        summary: "Change the person's password",
        description:
          `The current password, then the new one: at least ${PASSWORD_MIN_LENGTH} characters, not one of the most common passwords, not ` +
          "the person's e-mail address, not the current one (else 400 `validation_failed` saying which). The person's other sessions end " +
          "and any password link sent earlier stops working; this session stays. 401 for a wrong current password, which counts toward " +
          "the account's lock as a failed sign-in does (429 with `Retry-After` while it is locked).",
      },
      errors: [400, 401, 429],
    })
    .input(
      z.object({
        currentPassword: z.string().min(1).max(800).meta({ example: "baobab sous la pluie" }),
        newPassword: z.string().min(1).max(800).meta({ example: "fromager au bord du lac" }),
      }),
    )
    .output(z.object({ sessionsEnded: z.number().int().meta({ description: "How many of the person's other sessions were ended" }) }))
    .mutation(({ ctx, input }) => changePassword(ctx.deps, { personId: ctx.person.personId, sessionId: ctx.person.sessionId, ...input })),
  signIns: personProcedure
    .meta({ openapi: { method: "GET", path: "/people/me/sign-ins", tags: ["people"], summary: "The person's latest sign-ins and failures" } })
    .input(z.object({}).optional())
    .output(
      z.object({
        data: z.array(
          z.object({
            at: dateTime,
            address: z.string(),
            outcome: z.enum(["signed_in", "wrong_password", "unknown_email", "code_needed", "wrong_code", "locked", "no_shop", "shop_disabled", "limited"]),
          }),
        ),
      }),
    )
    .query(async ({ ctx }) => ({ data: await listSignIns(ctx.deps, ctx.person.personId) })),
  startTwoFactor: personProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/me/two-factor",
        tags: ["people"],
        summary: "Start setting up two-factor sign-in",
        description: "A new TOTP secret (RFC 6238), as text and as a QR code for the authenticator app; confirm it with a first code.",
      },
    })
    .input(z.object({}).optional())
    .output(z.object({ secret: z.string(), otpauthUrl: z.string(), qrSvg: z.string() }).meta({ id: "TwoFactorEnrolment" }))
    .mutation(({ ctx }) => startEnrolment(ctx.deps, ctx.person.personId)),
  confirmTwoFactor: personProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/me/two-factor/confirm",
        tags: ["people"],
        summary: "Confirm two-factor sign-in with a first code",
        description:
          "Turns it on, and returns ten single-use recovery codes, this once (earlier ones stop working). 401 on a wrong code; 409 with nothing to confirm.",
      },
      errors: [401, 409],
    })
    .input(z.object({ code }))
    .output(z.object({ recoveryCodes: z.array(z.string()) }))
    .mutation(({ ctx, input }) => confirmEnrolment(ctx.deps, ctx.person.personId, input.code)),
  disableTwoFactor: personProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/people/me/two-factor/disable",
        tags: ["people"],
        summary: "Turn two-factor sign-in off",
        description: "With a code (or a recovery code). 409 while one of the person's shops requires it; 401 on a wrong code.",
      },
      errors: [401, 409],
    })
    .input(z.object({ code }))
    .output(z.object({ twoFactorEnabled: z.literal(false) }))
    .mutation(async ({ ctx, input }) => {
      await disableTwoFactor(ctx.deps, ctx.person.personId, input.code);
      return { twoFactorEnabled: false as const };
    }),
});
