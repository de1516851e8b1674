/**
 * The dashboard's sessions (issue 30 point 3): a signed-in person in one shop, held by the browser as an
 * `HttpOnly; Secure; SameSite=Strict` cookie. Only the HMAC of the cookie's secret is stored. A state-changing
 * call made with the cookie also carries the session's CSRF token (`x-csrf-token`), derived from the secret,
 * which a page of another site cannot read.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { hashLinkToken } from "../../crypto/secrets.ts";
import type { Database } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import type { LiveSession } from "./live-session.ts";

export type { LiveSession } from "./live-session.ts";

/** The cookie's name. */
export const SESSION_COOKIE = "passerelle_session";
/** The header a state-changing call with the cookie carries. */
export const CSRF_HEADER = "x-csrf-token";
/** How long a session lasts from sign-in. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** `last_seen_at` is written at most this often per session. */
const LAST_SEEN_EVERY_MS = 60_000;

const secretHash = (deps: Pick<Deps, "config">, secret: string) => hashLinkToken(deps.config.apiKeyPepper, `session\u0000${secret}`);

/** The CSRF token of a session: an HMAC of its secret, so nothing more is stored. */
export function csrfTokenOf(deps: Pick<Deps, "config">, secret: string): string {
  return createHmac("sha256", deps.config.apiKeyPepper).update(`csrf\u0000${secret}`).digest("base64url");
}

/** Does the header's value match the session's CSRF token (in constant time)? */
export function csrfTokenMatches(deps: Pick<Deps, "config">, secret: string, given: string | null): boolean {
  if (!given) return false;
  const expected = Buffer.from(csrfTokenOf(deps, secret));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The `Set-Cookie` value that gives the browser a session, or (with `null`) takes it back. */
export function sessionCookie(secret: string | null, maxAgeSeconds = SESSION_TTL_MS / 1000): string {
  return `${SESSION_COOKIE}=${secret ?? ""}; Path=/; Max-Age=${secret ? maxAgeSeconds : 0}; HttpOnly; Secure; SameSite=Strict`;
}

/** The session secret a request's `Cookie` header carries, if any. */
export function sessionSecretOf(headers: Headers): string | null {
  const cookie = headers.get("cookie");
  if (!cookie) return null;
  for (const part of cookie.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=") || null;
  }
  return null;
}

export interface NewSession {
  id: string;
  secret: string;
  expiresAt: Date;
}

/** Opens a session inside the caller's transaction (the sign-in's): in a shop, or on the operator's side (`tenantId` null). */
export async function openSession(
  deps: Pick<Deps, "config" | "now">,
  tx: Kysely<Database> | Transaction<Database>,
  input: { personId: string; tenantId: string | null; address: string; userAgent: string | null },
): Promise<NewSession> {
  const secret = `pss_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  const id = newId("ses");
  await tx
    .insertInto("sessions")
    .values({
      id,
      secret_hash: secretHash(deps, secret),
      person_id: input.personId,
      tenant_id: input.tenantId,
      address: input.address,
      user_agent: input.userAgent?.slice(0, 300) ?? null,
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
    })
    .execute();
  return { id, secret, expiresAt };
}

/**
 * The live session a cookie's secret opens: not ended, not expired, and its person still in its shop — or, for a
 * session of the operator's staff, still of the staff (a person removed is signed out at once). Undefined
 * otherwise.
 */
export async function findLiveSession(deps: Pick<Deps, "db" | "config" | "now">, secret: string): Promise<LiveSession | undefined> {
  const now = deps.now();
  const row = await deps.db
    .selectFrom("sessions")
    .leftJoin("memberships", (join) => join.onRef("memberships.person_id", "=", "sessions.person_id").onRef("memberships.tenant_id", "=", "sessions.tenant_id"))
    .innerJoin("people", "people.id", "sessions.person_id")
    .leftJoin("tenants", "tenants.id", "sessions.tenant_id")
    .select([
      "sessions.id",
      "sessions.person_id",
      "sessions.tenant_id",
      "sessions.expires_at",
      "sessions.last_seen_at",
      "people.email",
      "people.totp_enabled_at",
      "people.operator_role",
      "memberships.role",
      "tenants.require_two_factor",
    ])
    .where("sessions.secret_hash", "=", secretHash(deps, secret))
    .where("sessions.ended_at", "is", null)
    .where("sessions.expires_at", ">", now)
    .executeTakeFirst();
  if (!row) return undefined;
  const role = row.tenant_id === null ? row.operator_role : row.role;
  if (!role) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() > LAST_SEEN_EVERY_MS)
    await deps.db.updateTable("sessions").set({ last_seen_at: now }).where("id", "=", row.id).execute();
  // The operator's side always requires two-factor sign-in; a shop when its owner says so.
  const required = row.tenant_id === null || row.require_two_factor === true;
  return {
    sessionId: row.id,
    personId: row.person_id,
    email: row.email,
    tenantId: row.tenant_id,
    role,
    twoFactorEnabled: row.totp_enabled_at !== null,
    mustEnrol: required && row.totp_enabled_at === null,
    expiresAt: row.expires_at,
  };
}

export interface SessionView {
  id: string;
  /** Null for a session on the operator's side. */
  tenantId: string | null;
  address: string;
  userAgent: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  current: boolean;
}

/** A person's live sessions, newest first; `current` marks the one asking. */
export async function listSessions(deps: Pick<Deps, "db" | "now">, personId: string, currentId: string): Promise<SessionView[]> {
  const rows = await deps.db
    .selectFrom("sessions")
    .selectAll()
    .where("person_id", "=", personId)
    .where("ended_at", "is", null)
    .where("expires_at", ">", deps.now())
    .orderBy("id", "desc")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    address: row.address,
    userAgent: row.user_agent,
    createdAt: row.created_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    current: row.id === currentId,
  }));
}

/** Ends one of a person's sessions (another person's is 404). Ending an ended one is 404 too. */
export async function endSession(deps: Pick<Deps, "db" | "now">, personId: string, sessionId: string): Promise<{ id: string; endedAt: string }> {
  const now = deps.now();
  const row = await deps.db
    .updateTable("sessions")
    .set({ ended_at: now })
    .where("id", "=", sessionId)
    .where("person_id", "=", personId)
    .where("ended_at", "is", null)
    .returning("id")
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Session not found");
  return { id: row.id, endedAt: now.toISOString() };
}

/** Ends every live session of a person (in one shop, when given), inside the caller's transaction. */
export async function endSessionsOf(tx: Kysely<Database> | Transaction<Database>, now: Date, personId: string, tenantId?: string): Promise<void> {
  let update = tx.updateTable("sessions").set({ ended_at: now }).where("person_id", "=", personId).where("ended_at", "is", null);
  if (tenantId) update = update.where("tenant_id", "=", tenantId);
  await update.execute();
}
