/**
 * Two-factor sign-in (issue 30 point 2): TOTP (RFC 6238: SHA-1, 6 digits, 30 s, one step of drift either way)
 * through `otpauth`, enrolled with a QR code (`qrcode`, as SVG) and confirmed with a first code; ten single-use
 * recovery codes, stored as HMACs. The secret is sealed at rest like provider credentials.
 */
import type { Kysely, Transaction } from "kysely";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import { hashLinkToken } from "../../crypto/secrets.ts";
import type { Database } from "../../db/schema.ts";
import { ConflictError, UnauthorizedError } from "../../errors.ts";
import type { Deps } from "../deps.ts";

/** Recovery codes given at each enrolment. */
export const RECOVERY_CODE_COUNT = 10;
const ISSUER = "Passerelle";
const sealContext = (personId: string) => ({ tenantId: personId, field: "person.totp" });

function totpOf(email: string, base32: string): TOTP {
  return new TOTP({ issuer: ISSUER, label: email, algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(base32) });
}

/** The 30 s step whose code `code` is at `nowMs` (one step either way), or null when it matches none. */
export function totpStep(base32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(base32), algorithm: "SHA1", digits: 6, period: 30, window: 1, timestamp: nowMs });
  return delta === null ? null : TOTP.counter({ period: 30, timestamp: nowMs }) + delta;
}

/** The current code of a secret (for tests and tools, as an authenticator app shows it). */
export function totpCode(base32: string, nowMs: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(base32), algorithm: "SHA1", digits: 6, period: 30, timestamp: nowMs });
}

export interface Enrolment {
  /** Base32, for typing into an authenticator app by hand. */
  secret: string;
  /** `otpauth://totp/…`, what the QR code holds. */
  otpauthUrl: string;
  /** The QR code of `otpauthUrl`, as an SVG document. */
  qrSvg: string;
}

/**
 * Starts (or starts again) a person's enrolment: a new secret, kept sealed as pending until
 * {@link confirmEnrolment}. A person who has two-factor sign-in already keeps it until they confirm the new one.
 */
export async function startEnrolment(deps: Pick<Deps, "db" | "keyring" | "now">, personId: string): Promise<Enrolment> {
  const person = await deps.db.selectFrom("people").select("email").where("id", "=", personId).executeTakeFirstOrThrow();
  const secret = new Secret({ size: 20 }).base32;
  await deps.db
    .updateTable("people")
    .set({ totp_pending: await deps.keyring.seal(secret, sealContext(personId)), updated_at: deps.now() })
    .where("id", "=", personId)
    .execute();
  const otpauthUrl = totpOf(person.email, secret).toString();
  return { secret, otpauthUrl, qrSvg: await QRCode.toString(otpauthUrl, { type: "svg", errorCorrectionLevel: "M", margin: 2 }) };
}

function mintRecoveryCode(): string {
  // 10 characters of Crockford base32 (50 bits), shown as xxxxx-xxxxx.
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  const chars = [...bytes].map((b) => alphabet[b & 31]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

const recoveryHash = (deps: Pick<Deps, "config">, code: string) => hashLinkToken(deps.config.apiKeyPepper, `recovery\u0000${code.trim().toLowerCase()}`);

/**
 * Confirms the pending enrolment with a code from the app: two-factor sign-in is on, and ten new recovery
 * codes (the old ones stop working) are returned, this once. 401 on a wrong code, 409 with nothing pending.
 */
export async function confirmEnrolment(
  deps: Pick<Deps, "db" | "keyring" | "now" | "config">,
  personId: string,
  code: string,
): Promise<{ recoveryCodes: string[] }> {
  const person = await deps.db.selectFrom("people").select(["totp_pending"]).where("id", "=", personId).executeTakeFirstOrThrow();
  if (!person.totp_pending) throw new ConflictError("No two-factor enrolment is pending: start one first");
  const secret = await deps.keyring.open(person.totp_pending, sealContext(personId));
  const step = totpStep(secret, code, deps.now().getTime());
  if (step === null) throw new UnauthorizedError("Wrong two-factor code");
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, mintRecoveryCode);
  await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    await tx
      .updateTable("people")
      .set({ totp_secret: person.totp_pending, totp_pending: null, totp_enabled_at: now, totp_last_counter: step, updated_at: now })
      .where("id", "=", personId)
      .execute();
    await tx.deleteFrom("recovery_codes").where("person_id", "=", personId).execute();
    await tx
      .insertInto("recovery_codes")
      .values(codes.map((c) => ({ code_hash: recoveryHash(deps, c), person_id: personId })))
      .execute();
  });
  return { recoveryCodes: codes };
}

/**
 * Checks a second factor inside the caller's transaction: a TOTP code not used before (its step is recorded, so
 * a code seen over a shoulder or replayed works no more, nor any earlier one), or an unused recovery code
 * (which is used up by this check).
 */
export async function secondFactorMatches(
  deps: Pick<Deps, "keyring" | "now" | "config">,
  tx: Kysely<Database> | Transaction<Database>,
  person: { id: string; totp_secret: string | null },
  code: string,
): Promise<boolean> {
  if (!person.totp_secret) return false;
  const secret = await deps.keyring.open(person.totp_secret, sealContext(person.id));
  const step = totpStep(secret, code.trim(), deps.now().getTime());
  if (step !== null) {
    const taken = await tx
      .updateTable("people")
      .set({ totp_last_counter: step })
      .where("id", "=", person.id)
      .where((eb) => eb.or([eb("totp_last_counter", "is", null), eb("totp_last_counter", "<", step)]))
      .returning("id")
      .executeTakeFirst();
    return taken !== undefined;
  }
  const used = await tx
    .updateTable("recovery_codes")
    .set({ used_at: deps.now() })
    .where("code_hash", "=", recoveryHash(deps, code))
    .where("person_id", "=", person.id)
    .where("used_at", "is", null)
    .returning("code_hash")
    .executeTakeFirst();
  return used !== undefined;
}

/** Recovery codes a person has left. */
export async function recoveryCodesLeft(deps: Pick<Deps, "db">, personId: string): Promise<number> {
  const row = await deps.db
    .selectFrom("recovery_codes")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("person_id", "=", personId)
    .where("used_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Turns two-factor sign-in off, with a code (TOTP or recovery). 409 while a shop of the person requires it, and
 * for the operator's staff (their side always does);
 * 401 on a wrong code.
 */
export async function disableTwoFactor(deps: Pick<Deps, "db" | "keyring" | "now" | "config">, personId: string, code: string): Promise<void> {
  const required = await deps.db
    .selectFrom("memberships")
    .innerJoin("tenants", "tenants.id", "memberships.tenant_id")
    .select("tenants.store_name")
    .where("memberships.person_id", "=", personId)
    .where("tenants.require_two_factor", "=", true)
    .executeTakeFirst();
  if (required) throw new ConflictError(`${required.store_name} requires two-factor sign-in: it cannot be turned off`);
  await deps.db.transaction().execute(async (tx) => {
    const person = await tx.selectFrom("people").select(["id", "totp_secret", "operator_role"]).where("id", "=", personId).executeTakeFirstOrThrow();
    // The operator's side always requires it (`sessions.ts`): turned off, the next sign-in could do nothing but set it up again.
    if (person.operator_role) throw new ConflictError("The operator's staff sign in with two-factor: it cannot be turned off");
    if (!(await secondFactorMatches(deps, tx, person, code))) throw new UnauthorizedError("Wrong two-factor code");
    await tx
      .updateTable("people")
      .set({ totp_secret: null, totp_pending: null, totp_enabled_at: null, updated_at: deps.now() })
      .where("id", "=", personId)
      .execute();
    await tx.deleteFrom("recovery_codes").where("person_id", "=", personId).execute();
  });
}
