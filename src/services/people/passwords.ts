/**
 * People's passwords (issue 30): argon2id through `Bun.password`, a minimum length, and a check against
 * the 49 000 most common passwords (`@zxcvbn-ts/language-common`'s list, case-insensitive).
 */
import { dictionary } from "@zxcvbn-ts/language-common";
import { ValidationError } from "../../errors.ts";

/** Shorter passwords are refused (NIST SP 800-63B asks for at least 8; a dashboard that moves money asks for more). */
export const PASSWORD_MIN_LENGTH = 10;
/** Longer ones too: hashing a megabyte is a way to tire the server. */
export const PASSWORD_MAX_LENGTH = 200;

const COMMON = new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));

/**
 * Refuses a password a person may not choose, with the contract's 400: too short, too long, one of the
 * common passwords, or the person's own e-mail address.
 *
 * @example
 * ```ts
 * assertAcceptablePassword("password1234", "ama@example.com"); // throws: a common password
 * ```
 */
export function assertAcceptablePassword(password: string, email: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw new ValidationError([`password must have at least ${PASSWORD_MIN_LENGTH} characters`]);
  if (length > PASSWORD_MAX_LENGTH) throw new ValidationError([`password must have at most ${PASSWORD_MAX_LENGTH} characters`]);
  const folded = password.toLowerCase();
  if (COMMON.has(folded)) throw new ValidationError(["password is one of the most common passwords: choose another"]);
  const local = email.toLowerCase().split("@")[0] ?? "";
  if (folded === email.toLowerCase() || (local.length >= 4 && folded === local)) throw new ValidationError(["password must not be your e-mail address"]);
}

/** The stored form of a password: argon2id (PHC string, salt and parameters included). */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

/** Does the password match the stored hash? */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}
