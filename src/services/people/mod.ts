/**
 * People (issue 30): the persons who sign in to the dashboard, the shops they belong to, their invitations and
 * password resets.
 *
 * @module
 */
export {
  acceptInvitation,
  type AcceptedInvitation,
  INVITATION_TTL_MS,
  type InvitationView,
  inviteToShop,
  listInvitations,
  normaliseEmail,
  revokeInvitation,
} from "./invitations.ts";
export { changeRole, listMembers, type MemberView, removeMember, setTwoFactorRequired, twoFactorRequired } from "./members.ts";
export { isOperatorRole, OPERATOR_ROLES, type PersonRole, roleMay, SHOP_ROLES } from "./roles.ts";
export { listStaff, removeStaff, type StaffView } from "./staff.ts";
export {
  CSRF_HEADER,
  csrfTokenMatches,
  csrfTokenOf,
  endSession,
  findLiveSession,
  listSessions,
  type LiveSession,
  SESSION_COOKIE,
  sessionCookie,
  sessionSecretOf,
  type SessionView,
} from "./sessions.ts";
export { listSignIns, LOCK_AFTER_FAILURES, lockMs, signIn, type SignedIn, type SignInView } from "./sign-in.ts";
export { confirmEnrolment, disableTwoFactor, type Enrolment, RECOVERY_CODE_COUNT, recoveryCodesLeft, startEnrolment, totpCode } from "./two-factor.ts";
export { changePassword, type PasswordChanged } from "./password-change.ts";
export { confirmPasswordReset, PASSWORD_RESET_TTL_MS, requestPasswordReset } from "./password-reset.ts";
export { assertAcceptablePassword, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from "./passwords.ts";
