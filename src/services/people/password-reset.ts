/**
 * Password resets (issue 30 point 1): a person asks for a link by e-mail address; the link works once, for an
 * hour, and sets a new password. The answer to the request is the same whether the address is known or not.
 */
import { hashLinkToken, mintLinkToken } from "../../crypto/secrets.ts";
import { NotFoundError } from "../../errors.ts";
import { enqueueEmail } from "../../jobs/queues.ts";
import type { Deps } from "../deps.ts";
import { writeEmail } from "../mail/outbox.ts";
import { dashboardLink, normaliseEmail } from "./invitations.ts";
import { assertAcceptablePassword, hashPassword } from "./passwords.ts";
import { endSessionsOf } from "./sessions.ts";

/** How long a reset link works. */
export const PASSWORD_RESET_TTL_MS = 3_600_000;
/** Links a person can be sent per hour: more asks are answered alike and send nothing. */
const RESETS_PER_HOUR = 3;

/**
 * Sends a reset link to the address when a person with a password has it (at most {@link RESETS_PER_HOUR} an
 * hour); nothing otherwise. Either way the caller learns nothing.
 */
export async function requestPasswordReset(deps: Deps, input: { email: string }): Promise<void> {
  const email = normaliseEmail(input.email);
  const person = await deps.db.selectFrom("people").select(["id", "password_hash"]).where("email", "=", email).executeTakeFirst();
  if (!person?.password_hash) return;
  const now = deps.now();
  const token = mintLinkToken("pwr");
  const emailId = await deps.db.transaction().execute(async (tx) => {
    const recent = await tx
      .selectFrom("password_resets")
      .select((eb) => eb.fn.countAll<number>().as("count"))
      .where("person_id", "=", person.id)
      .where("created_at", ">", new Date(now.getTime() - 3_600_000))
      .executeTakeFirstOrThrow();
    if (Number(recent.count) >= RESETS_PER_HOUR) return null;
    const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
    await tx
      .insertInto("password_resets")
      .values({ token_hash: hashLinkToken(deps.config.apiKeyPepper, token), person_id: person.id, created_at: now, expires_at: expiresAt })
      .execute();
    return writeEmail(deps, tx, {
      to: email,
      subject: "Your Passerelle password",
      text: [
        "Someone (we hope you) asked to set a new password for this address on Passerelle.",
        "",
        `Open this link to choose it (it works once, until ${expiresAt.toISOString()}):`,
        dashboardLink(deps, "reset-password", token),
        "",
        "If it was not you, ignore this message: your password stays as it is.",
      ].join("\n"),
    });
  });
  if (emailId) await enqueueEmail(deps, emailId);
}

/**
 * Sets a new password with a reset link's token, unlocks the account and ends every session of the person.
 * Every other reset link of the person stops working too.
 * 404 when the link is unknown, used or expired; 400 when the password breaks a rule (the link still works).
 */
export async function confirmPasswordReset(deps: Deps, input: { token: string; password: string }): Promise<{ personId: string }> {
  const tokenHash = hashLinkToken(deps.config.apiKeyPepper, input.token);
  const found = await deps.db
    .selectFrom("password_resets")
    .innerJoin("people", "people.id", "password_resets.person_id")
    .select(["password_resets.person_id", "password_resets.used_at", "password_resets.expires_at", "people.email"])
    .where("password_resets.token_hash", "=", tokenHash)
    .executeTakeFirst();
  const unusable = new NotFoundError("This password link is unknown, already used or expired");
  if (!found || found.used_at || found.expires_at <= deps.now()) throw unusable;
  assertAcceptablePassword(input.password, found.email);
  const passwordHash = await hashPassword(input.password);
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const taken = await tx
      .updateTable("password_resets")
      .set({ used_at: now })
      .where("token_hash", "=", tokenHash)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returning("person_id")
      .executeTakeFirst();
    if (!taken) throw unusable;
    await tx.updateTable("password_resets").set({ used_at: now }).where("person_id", "=", taken.person_id).where("used_at", "is", null).execute();
    // A new password unlocks the account and signs the person out everywhere.
    await tx
      .updateTable("people")
      .set({ password_hash: passwordHash, failed_sign_ins: 0, locked_until: null, updated_at: now })
      .where("id", "=", taken.person_id)
      .execute();
    await endSessionsOf(tx, now, taken.person_id);
    return { personId: taken.person_id };
  });
}
