/**
 * A shop's team and the operator's staff for tests (issue 30 point 4): each person invited by the operator,
 * joined through the e-mailed link, and signed in as a browser would; the staff enrol two-factor sign-in, which
 * the operator's side requires.
 */
import { expect } from "bun:test";
import { totpCode } from "../../src/services/people/two-factor.ts";
import { type Browser, cookieOf, linkTokenTo } from "./people.ts";
import type { SmtpSink } from "./smtp-sink.ts";

export const TEAM_PASSWORD = "baobab sous la pluie";

export type ShopRole = "owner" | "developer" | "finance" | "viewer";
export type StaffRole = "admin" | "support";

/** A call as a browser (cookie and CSRF token) or a program (bearer), on the gateway at `base`. */
export function caller(base: string) {
  return (method: string, path: string, auth: { token?: string; browser?: Browser; tenantId?: string } = {}, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.browser ? { cookie: auth.browser.cookie, "x-csrf-token": auth.browser.csrfToken } : {}),
        ...(auth.tenantId ? { "x-tenant-id": auth.tenantId } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** Signs a person in (to `tenantId`, or their default place) and answers their browser. */
export async function signInAs(base: string, email: string, extra: { code?: string; tenantId?: string } = {}): Promise<Browser> {
  const response = await caller(base)("POST", "/people/sign-in", {}, { email, password: TEAM_PASSWORD, ...extra });
  expect(response.status === 200 ? "signed in" : await response.json()).toBe("signed in");
  const me = (await response.json()) as Browser["me"] & { csrfToken: string };
  return { cookie: cookieOf(response), csrfToken: me.csrfToken, me };
}

/** Invites `email` with `role` (to the shop, or the staff for an operator role) by the admin token, and accepts the e-mailed link. */
export async function join(base: string, sink: SmtpSink, admin: string, email: string, role: ShopRole | StaffRole, tenantId: string | null): Promise<void> {
  const call = caller(base);
  const count = sink.to(email).filter((m) => m.text.includes("#/invitation/")).length + 1;
  const invited =
    tenantId === null
      ? await call("POST", "/admin/staff/invitations", { token: admin }, { email, role })
      : await call("POST", `/tenants/${tenantId}/invitations`, { token: admin }, { email, role });
  expect(invited.status === 200 ? "invited" : await invited.json()).toBe("invited");
  const token = await linkTokenTo(sink, email, "invitation", count);
  const accepted = await call("POST", "/people/invitations/accept", {}, { token, password: TEAM_PASSWORD });
  expect(accepted.status === 200 ? "accepted" : await accepted.json()).toBe("accepted");
}

/** Sets up two-factor sign-in for a signed-in person (the operator's side requires it); answers the TOTP secret. */
export async function enrolTwoFactor(base: string, browser: Browser): Promise<string> {
  const call = caller(base);
  const enrolment = (await (await call("POST", "/people/me/two-factor", { browser })).json()) as { secret: string };
  const confirmed = await call("POST", "/people/me/two-factor/confirm", { browser }, { code: totpCode(enrolment.secret, Date.now()) });
  expect(confirmed.status).toBe(200);
  return enrolment.secret;
}

/** A shop's four people and the operator's two, signed in: `people.<role>`. */
export async function signInTeam(
  base: string,
  sink: SmtpSink,
  admin: string,
  tenantId: string,
  domain: string,
): Promise<Record<ShopRole | StaffRole, Browser>> {
  const people = {} as Record<ShopRole | StaffRole, Browser>;
  for (const role of ["owner", "developer", "finance", "viewer"] as const) {
    await join(base, sink, admin, `${role}@${domain}`, role, tenantId);
    people[role] = await signInAs(base, `${role}@${domain}`);
  }
  for (const role of ["admin", "support"] as const) {
    await join(base, sink, admin, `${role}@staff.${domain}`, role, null);
    people[role] = await signInAs(base, `${role}@staff.${domain}`);
    await enrolTwoFactor(base, people[role]);
  }
  return people;
}
