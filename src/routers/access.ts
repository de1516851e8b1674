/**
 * Which area (`services/people/roles.ts`) each procedure belongs to, for the roles of the people who call it
 * (issue 30 point 4). `trpc.ts` checks it once, in the authentication step every base shares, so the REST
 * surface (which calls the same procedures) and `/trpc` are checked alike. A procedure missing here is refused
 * to every person (the matrix test, `test/e2e/people/roles-matrix.test.ts`, compares this with docs/team.md).
 *
 * The public procedures (no caller to check) are listed apart. A provider's credentials procedures are named
 * `credentials.<provider>.<verb>`: `credentials.*.<verb>` stands for every provider's.
 *
 * @module
 */
import type { Area } from "../services/people/roles.ts";

/** The procedures anyone may call, signed in or not. */
export const PUBLIC_PROCEDURES: readonly string[] = [
  "auth.token",
  "people.acceptInvitation",
  "people.requestPasswordReset",
  "people.resetPassword",
  "me.signInOptions",
  "me.signIn",
  "payPage.link",
  "payPage.pay",
  "payPage.payment",
];

/** Every other procedure's area. */
export const PROCEDURE_AREAS: Readonly<Record<string, Area>> = {
  "auth.whoami": "self",
  "me.signOut": "self",
  "me.me": "self",
  "me.sessions": "self",
  "me.endSession": "self",
  "me.changePassword": "self",
  "me.signIns": "self",
  "me.startTwoFactor": "self",
  "me.confirmTwoFactor": "self",
  "me.disableTwoFactor": "self",

  "tenants.create": "operator-write",
  "tenants.list": "operator-read",
  "tenants.get": "read",
  "tenants.update": "operator-write",
  "tenants.rotateCallbackSecret": "keys",
  "admin.stuckPayments": "operator-read",
  "admin.auditLog": "operator-read",
  "admin.inviteStaff": "operator-write",
  "admin.staff": "operator-read",
  "admin.removeStaff": "operator-write",
  "balance.allReconciliation": "operator-read",
  "balance.allDifferences": "operator-read",

  "credentials.*.put": "credentials",
  "credentials.*.get": "read",
  "credentials.*.versions": "read",
  "credentials.*.delete": "credentials",
  "providers.credentials": "read",
  "apiKeys.create": "keys",
  "apiKeys.list": "read",
  "apiKeys.revoke": "keys",

  "people.invite": "team",
  "people.invitations": "team",
  "people.revokeInvitation": "team",
  "people.members": "team",
  "people.changeRole": "team",
  "people.removeMember": "team",
  "people.twoFactorPolicy": "team",
  "auditLog.list": "audit",

  "events.list": "read",
  "events.get": "read",
  "webhooks.create": "webhooks",
  "webhooks.list": "read",
  "webhooks.get": "read",
  "webhooks.update": "webhooks",
  "webhooks.delete": "webhooks",
  "webhooks.rotateSecret": "webhooks",
  "webhooks.test": "webhooks",
  "webhooks.deliveries": "read",
  "webhooks.retry": "webhooks",
  "webhooks.replay": "webhooks",
  "webhooks.recover": "webhooks",
  "routing.get": "read",
  "routing.put": "routing",
  "routing.stats": "read",
  "routing.paymentMethods": "read",

  "payments.create": "money",
  "payments.quote": "read",
  "payments.list": "read",
  "payments.get": "read",
  "payments.deliveries": "read",
  "paymentLinks.create": "money",
  "paymentLinks.list": "read",
  "paymentLinks.get": "read",
  "paymentLinks.update": "money",
  "providerA.directPayment": "money",
  "providerA.transactionStatus": "read",
  "providerA.transactionIsApproved": "read",
  "providerB.checkout": "money",
  "permits.create": "money",
  "permits.list": "read",
  "permits.get": "read",
  "permits.revoke": "money",
  "permits.charge": "money",
  "permits.charges": "read",
  "permitSchedules.put": "money",
  "permitSchedules.get": "read",
  "permitSchedules.cancel": "money",
  "payouts.create": "money",
  "payouts.list": "read",
  "payouts.get": "read",
  "payouts.refund": "money",
  "payouts.refunds": "read",
  "payouts.allRefunds": "read",
  "payouts.getRefund": "read",
  "balance.get": "read",
  "balance.entries": "read",
  "balance.reconciliation": "read",
  "balance.differences": "read",
  "reports.overview": "read",
  "reports.onboarding": "read",
};

/** The procedures that change nothing though called as mutations (a POST): not written to the audit log. */
export const MUTATIONS_THAT_CHANGE_NOTHING: ReadonlySet<string> = new Set(["payments.quote"]);

/** The area of the procedure at `path`, or undefined when the table has none (refused to every person). */
export function areaOf(path: string): Area | undefined {
  const exact = PROCEDURE_AREAS[path];
  if (exact) return exact;
  const parts = path.split(".");
  return parts.length === 3 && parts[0] === "credentials" ? PROCEDURE_AREAS[`credentials.*.${parts[2]}`] : undefined;
}
