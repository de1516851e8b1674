/**
 * A signed-in person changes their password (issue 30 point 6): the current one first — a stolen session cookie
 * alone cannot take the account over —, then the new one under the password rules. The person's other sessions
 * end, and any reset link sent earlier stops working, in the same transaction; the session that asked stays.
 * A wrong current password counts as a failed sign-in (the account's lock, `sign-in.ts`).
 */
import { RateLimitedError, UnauthorizedError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.ts";
import { countFailure } from "./sign-in.ts";

export interface PasswordChanged {
  /** How many of the person's other sessions were ended. */
  sessionsEnded: number;
}

/**
 * Changes the password of the person whose session `sessionId` asks. 401 for a wrong current password, 400 for a
 * new one the rules refuse (or the same as the current), 429 while the account is locked.
 *
 * @example
 * ```ts
 * await changePassword(deps, { personId, sessionId, currentPassword: "baobab sous la pluie", newPassword: "fromager au bord du lac" });
 * ```
 */
export async function changePassword(
  deps: Pick<Deps, "db" | "now">,
  input: { personId: string; sessionId: string; currentPassword: string; newPassword: string },
): Promise<PasswordChanged> {
  const person = await deps.db
    .selectFrom("people")
    .select(["id", "email", "password_hash", "failed_sign_ins", "locked_until"])
    .where("id", "=", input.personId)
    .executeTakeFirstOrThrow();
  const now = deps.now();
  if (person.locked_until && person.locked_until > now) {
    const seconds = Math.ceil((person.locked_until.getTime() - now.getTime()) / 1000);
    throw new RateLimitedError(seconds, "Too many wrong passwords for this account: try again later");
  }
  if (!person.password_hash || !(await verifyPassword(input.currentPassword, person.password_hash))) {
    await countFailure(deps, person);
    throw new UnauthorizedError("The current password is wrong");
  }
  if (input.newPassword === input.currentPassword) throw new ValidationError(["newPassword must differ from the current password"]);
  assertAcceptablePassword(input.newPassword, person.email);
  const passwordHash = await hashPassword(input.newPassword);
  return deps.db.transaction().execute(async (tx) => {
    const changedAt = deps.now();
    await tx
      .updateTable("people")
      .set({ password_hash: passwordHash, failed_sign_ins: 0, locked_until: null, updated_at: changedAt })
      .where("id", "=", person.id)
      .execute();
    // A reset link asked for before the change would set a password over this one.
    await tx.updateTable("password_resets").set({ used_at: changedAt }).where("person_id", "=", person.id).where("used_at", "is", null).execute();
    const ended = await tx
      .updateTable("sessions")
      .set({ ended_at: changedAt })
      .where("person_id", "=", person.id)
      .where("ended_at", "is", null)
      .where("id", "!=", input.sessionId)
      .executeTakeFirst();
    return { sessionsEnded: Number(ended.numUpdatedRows) };
  });
}
