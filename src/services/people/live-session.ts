/**
 * What a person's live session is, on its own: the token verifier (`auth/tokens.ts`) reads it without the
 * session services, which need the gateway's `Deps` (an import circle otherwise).
 *
 * @module
 */
import type { MembershipRole, OperatorRole } from "../../db/schema.ts";

/** A live session, as a call made with its cookie acts (`people/sessions.ts`, `findLiveSession`). */
export interface LiveSession {
  sessionId: string;
  personId: string;
  email: string;
  /** The session's shop; null for a session of the operator's staff (issue 30 point 4). */
  tenantId: string | null;
  /** The person's role in the session's shop, or on the operator's side. */
  role: MembershipRole | OperatorRole;
  twoFactorEnabled: boolean;
  /** The shop requires two-factor sign-in (the operator's side always does) and the person has not set it up: only enrolment is allowed. */
  mustEnrol: boolean;
  expiresAt: Date;
}
