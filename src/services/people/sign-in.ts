/**
 * Signing in (issue 30 points 2 and 3): e-mail address, password and — when the person has set it up — a
 * two-factor code, for a session in one of the person's shops. Failures are slowed and locked per address (a
 * token bucket of `SIGN_IN_ADDRESS_LIMIT` attempts refilled over 15 minutes, shared through Redis when configured) and per account (after 5 failures in a row the account is
 * locked for 1 minute, doubling with each further failure, up to an hour). Every sign-in and failure is recorded
 * in `sign_ins`.
 */
import { ForbiddenError, RateLimitedError, UnauthorizedError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { normaliseEmail } from "./invitations.ts";
import { verifyPassword } from "./passwords.ts";
import { type NewSession, openSession } from "./sessions.ts";
import { secondFactorMatches } from "./two-factor.ts";

/** The window of `SIGN_IN_ADDRESS_LIMIT`: that many attempts at once, then the bucket refills over 15 minutes. */
const ADDRESS_WINDOW_S = 900;
/** Failures in a row that lock an account. */
export const LOCK_AFTER_FAILURES = 5;
const FIRST_LOCK_MS = 60_000;
const LONGEST_LOCK_MS = 3_600_000;
// Verified against when the address is unknown, so that an unknown address takes as long as a wrong password.
const NOBODY_HASH = "$argon2id$v=19$m=65536,t=2,p=1$nmX8KtbG54VzAlIZ1NDYaTb0EFTdaKfnsI4G6i/ZIFY$PRdGtBY/yiFlet+5G1TGhcc35yGN5dcB+Hy4sLNtLio";

const WRONG_CREDENTIALS = "Wrong e-mail address or password";

export interface SignInInput {
  email: string;
  password: string;
  code?: string | undefined;
  /** The shop to sign in to; default the person's first. */
  tenantId?: string | undefined;
  address: string;
  userAgent: string | null;
}

export interface SignedIn {
  session: NewSession;
  personId: string;
  email: string;
  /** Null for a session on the operator's side. */
  tenantId: string | null;
}

type Outcome = "signed_in" | "wrong_password" | "unknown_email" | "code_needed" | "wrong_code" | "locked" | "no_shop" | "shop_disabled" | "limited";

async function record(deps: Pick<Deps, "db" | "now">, email: string, address: string, outcome: Outcome, personId: string | null = null): Promise<void> {
  await deps.db
    .insertInto("sign_ins")
    .values({ person_id: personId, email: email.slice(0, 254), address, outcome, at: deps.now() })
    .execute();
}

/** The refusal of a sign-in to a disabled shop: the operator's reason, when one was given. */
export function shopDisabledMessage(reason: string | null): string {
  return reason ? `This shop is disabled by the operator: ${reason}` : "This shop is disabled by the operator";
}

/** How long an account is locked after its `failures`-th failure in a row (0: not locked). */
export function lockMs(failures: number): number {
  if (failures < LOCK_AFTER_FAILURES) return 0;
  return Math.min(LONGEST_LOCK_MS, FIRST_LOCK_MS * 2 ** (failures - LOCK_AFTER_FAILURES));
}

/** Counts a failure of the account's password or code toward its lock (also a wrong current password: `password-change.ts`). */
export async function countFailure(deps: Pick<Deps, "db" | "now">, person: { id: string; failed_sign_ins: number }): Promise<void> {
  const failures = person.failed_sign_ins + 1;
  const lock = lockMs(failures);
  await deps.db
    .updateTable("people")
    .set({ failed_sign_ins: failures, locked_until: lock > 0 ? new Date(deps.now().getTime() + lock) : null })
    .where("id", "=", person.id)
    .execute();
}

/**
 * Signs a person in: a session in the chosen shop (or their first; a person of the operator's staff, on the
 * operator's side unless they name a shop). 401 for a wrong address, password or code
 * (one message for the first two), 403 for a shop the person does not belong to, 429 with `Retry-After` while the
 * address or the account is locked.
 */
export async function signIn(deps: Deps, input: SignInInput): Promise<SignedIn> {
  const email = normaliseEmail(input.email);
  const perAddress = deps.config.signInAddressLimit;
  const decision = await deps.rateLimiter.consume(`sign-in:${input.address}`, { burst: perAddress, rps: perAddress / ADDRESS_WINDOW_S });
  if (!decision.allowed) {
    await record(deps, email, input.address, "limited");
    throw new RateLimitedError(decision.retryAfterSeconds, "Too many sign-in attempts from this address: try again later");
  }
  const person = await deps.db
    .selectFrom("people")
    .select(["id", "email", "password_hash", "totp_secret", "totp_enabled_at", "failed_sign_ins", "locked_until", "operator_role"])
    .where("email", "=", email)
    .executeTakeFirst();
  if (!person?.password_hash) {
    await verifyPassword(input.password, NOBODY_HASH);
    await record(deps, email, input.address, "unknown_email");
    throw new UnauthorizedError(WRONG_CREDENTIALS);
  }
  const now = deps.now();
  if (person.locked_until && person.locked_until > now) {
    await record(deps, email, input.address, "locked", person.id);
    const seconds = Math.ceil((person.locked_until.getTime() - now.getTime()) / 1000);
    throw new RateLimitedError(seconds, "Too many failed sign-ins for this account: try again later, or set a new password by e-mail");
  }
  if (!(await verifyPassword(input.password, person.password_hash))) {
    await countFailure(deps, person);
    await record(deps, email, input.address, "wrong_password", person.id);
    throw new UnauthorizedError(WRONG_CREDENTIALS);
  }
  const shops = await deps.db
    .selectFrom("memberships")
    .innerJoin("tenants", "tenants.id", "memberships.tenant_id")
    .select(["memberships.tenant_id", "tenants.disabled", "tenants.disabled_reason"])
    .where("memberships.person_id", "=", person.id)
    .orderBy("memberships.created_at")
    .orderBy("memberships.tenant_id")
    .execute();
  // The operator's staff sign in to the operator's side unless they name one of their shops; anyone else,
  // without a shop named, to their first shop that is not disabled.
  const tenantId = input.tenantId ?? (person.operator_role ? null : (shops.find((s) => !s.disabled) ?? shops[0])?.tenant_id);
  const shop = tenantId === null ? undefined : shops.find((s) => s.tenant_id === tenantId);
  if (tenantId !== null && (!tenantId || !shop)) {
    await record(deps, email, input.address, "no_shop", person.id);
    throw new ForbiddenError(input.tenantId ? "You do not belong to this shop" : "You belong to no shop any more");
  }
  // The password is right: the person is told their shop is disabled, and why, rather than a bare refusal.
  if (shop?.disabled) {
    await record(deps, email, input.address, "shop_disabled", person.id);
    throw new ForbiddenError(shopDisabledMessage(shop.disabled_reason), "tenant_disabled");
  }
  if (person.totp_enabled_at && !input.code) {
    await record(deps, email, input.address, "code_needed", person.id);
    throw new UnauthorizedError("This account signs in with a two-factor code: give the code your app shows, or a recovery code");
  }
  const signedIn = await deps.db.transaction().execute(async (tx) => {
    if (person.totp_enabled_at && !(await secondFactorMatches(deps, tx, person, input.code!))) return null;
    await tx.updateTable("people").set({ failed_sign_ins: 0, locked_until: null }).where("id", "=", person.id).execute();
    const session = await openSession(deps, tx, { personId: person.id, tenantId, address: input.address, userAgent: input.userAgent });
    await tx.insertInto("sign_ins").values({ person_id: person.id, email, address: input.address, outcome: "signed_in", at: deps.now() }).execute();
    return session;
  });
  if (!signedIn) {
    await countFailure(deps, person);
    await record(deps, email, input.address, "wrong_code", person.id);
    throw new UnauthorizedError("Wrong two-factor code");
  }
  return { session: signedIn, personId: person.id, email, tenantId };
}

export interface SignInView {
  at: string;
  address: string;
  outcome: Outcome;
}

/** A person's latest sign-ins and failures (100), newest first. */
export async function listSignIns(deps: Pick<Deps, "db">, personId: string): Promise<SignInView[]> {
  const rows = await deps.db
    .selectFrom("sign_ins")
    .select(["at", "address", "outcome"])
    .where("person_id", "=", personId)
    .orderBy("id", "desc")
    .limit(100)
    .execute();
  return rows.map((row) => ({ at: row.at.toISOString(), address: row.address, outcome: row.outcome as Outcome }));
}
