/**
 * Who is signed in. A person (issue 30) signs in with e-mail, password and code: the session is an `HttpOnly`
 * cookie the page never sees, and the tab keeps nothing (a reload asks `me.me` who is signed in). An operator's
 * admin token — and, outside production, an API key's token for development — is kept with what `auth.whoami`
 * says of it in sessionStorage (gone with the tab; never localStorage, which outlives it and every tab of the
 * origin can read). A session past its expiry is not a session.
 */
import type { Api, Outputs, WhoAmI } from "./api.ts";

export interface Session {
  /** The bearer token of an operator's or an API key's session; null for a person's (the cookie carries it). */
  token: string | null;
  /** A person's session: its CSRF token, sent with every call. */
  csrfToken?: string;
  role: WhoAmI["role"];
  tenantId: string | null;
  environment: WhoAmI["environment"];
  /** The token's subject: `key:key_…` for a tenant's API key, the operator's name for an admin token. */
  subject: string;
  expiresAt: string;
  /** A person's role (`owner`, `developer`, `finance`, `viewer`; `admin`, `support` on the operator's side): what is offered (`permissions.ts`). */
  personRole?: Me["role"];
  /** A person who must set up two-factor sign-in before anything else (their shop, or the operator's side, requires it). */
  mustEnrol?: boolean;
}

const SESSION_KEY = "passerelle.session";
const ACTING_FOR_KEY = "passerelle.actingFor";

/** The tenant an operator's session has opened (its screens then act for it, with `x-tenant-id`). */
export interface ActingFor {
  tenantId: string;
  name: string;
}

/** True when the tab holds a session whose token has expired (the tab was away, or reloaded, past its end). */
export function hasExpiredSession(storage: Storage, now: Date): boolean {
  try {
    const session = JSON.parse(storage.getItem(SESSION_KEY) ?? "null") as Session | null;
    return session !== null && typeof session.expiresAt === "string" && Date.parse(session.expiresAt) <= now.getTime();
  } catch {
    return false;
  }
}

/** The stored session, unless it is missing, unreadable or expired (then it is removed). */
export function loadSession(storage: Storage, now: Date): Session | undefined {
  const text = storage.getItem(SESSION_KEY);
  if (!text) return undefined;
  try {
    const session = JSON.parse(text) as Session;
    if (typeof session.token === "string" && Date.parse(session.expiresAt) > now.getTime()) return session;
  } catch {
    // An unreadable entry is dropped below.
  }
  storage.removeItem(SESSION_KEY);
  return undefined;
}

/** Keeps a token's session for the tab; a person's session is the cookie's, and nothing of it is kept. */
export function saveSession(storage: Storage, session: Session): void {
  if (session.token) storage.setItem(SESSION_KEY, JSON.stringify(session));
}

export function clearSession(storage: Storage): void {
  storage.removeItem(SESSION_KEY);
  storage.removeItem(ACTING_FOR_KEY);
}

/** The tenant the operator opened in this tab, if any. */
export function loadActingFor(storage: Storage): ActingFor | undefined {
  try {
    const value = JSON.parse(storage.getItem(ACTING_FOR_KEY) ?? "null") as ActingFor | null;
    return value && typeof value.tenantId === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Opens a tenant for the operator (or closes it, with `undefined`). */
export function saveActingFor(storage: Storage, actingFor: ActingFor | undefined): void {
  if (actingFor) storage.setItem(ACTING_FOR_KEY, JSON.stringify(actingFor));
  else storage.removeItem(ACTING_FOR_KEY);
}

type Me = Outputs["me"]["me"];

// A person of the operator's staff (a session in no shop) has the operator's screens, as an admin token does.
function personSession(me: Me): Session {
  return {
    token: null,
    csrfToken: me.csrfToken,
    role: me.tenantId === null ? "admin" : "tenant",
    tenantId: me.tenantId,
    environment: "sandbox",
    subject: me.email,
    expiresAt: me.expiresAt,
    personRole: me.role,
    mustEnrol: me.mustEnrol,
  };
}

/** A person's sign-in: e-mail, password and, when they have set it up, a two-factor or recovery code. */
export async function signInAsPerson(api: Api, input: { email: string; password: string; code?: string }): Promise<Session> {
  return personSession(await api.me.signIn.mutate({ email: input.email, password: input.password, ...(input.code ? { code: input.code } : {}) }));
}

/** The person signed in with this browser's session cookie, if any (a reload, a new tab). */
export async function resumePersonSession(api: Api): Promise<Session | undefined> {
  try {
    return personSession(await api.me.me.query());
  } catch {
    return undefined;
  }
}

/** Reads who a token is (`auth.whoami`) into a session. */
async function sessionFor(api: Api, token: string): Promise<Session> {
  const me = await api.auth.whoami.query();
  return { token, role: me.role, tenantId: me.tenantId, environment: me.environment, subject: me.sub, expiresAt: me.expiresAt };
}

/**
 * A tenant's sign-in: the API key's id and secret exchanged for a token by `auth.token` (the secret is
 * not kept), then `auth.whoami`. `apiFor(token)` builds a client that sends that token.
 */
export async function signInWithApiKey(api: Api, apiFor: (token: string) => Api, keyId: string, secret: string): Promise<Session> {
  const { access_token } = await api.auth.token.mutate({ grant_type: "client_credentials", client_id: keyId, client_secret: secret });
  return sessionFor(apiFor(access_token), access_token);
}

/** An operator's sign-in with an admin token (`bun run passerelle token --admin`); refused for any other token. */
export async function signInWithAdminToken(apiFor: (token: string) => Api, token: string, notAdmin: string): Promise<Session> {
  const session = await sessionFor(apiFor(token), token);
  if (session.role !== "admin") throw new Error(notAdmin);
  return session;
}
