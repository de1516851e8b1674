/**
 * What every screen reads: the typed client, the session, the language and its messages. Provided once by
 * the app shell (`app.tsx`).
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Api } from "./api.ts";
import type { Language, MessageKey } from "./i18n.ts";
import type { ActingFor, Session } from "./session.ts";

export interface DashboardContext {
  api: Api;
  session: Session;
  /**
   * The tenant the tenant screens act on: the session's own, or the one an operator opened (sent as
   * `x-tenant-id`, with the same authorisation as the API); null for an operator who opened none.
   */
  tenantId: string | null;
  /** The tenant an operator opened, if any. */
  actingFor: ActingFor | undefined;
  /** Opens a tenant's screens for the operator (on its Home, or at `to`), or (undefined) goes back to the operator's own. */
  actFor: (tenant: ActingFor | undefined, to?: string) => void;
  language: Language;
  /** The message for `key` in the current language, `{name}` placeholders filled from `values`. */
  t: (key: MessageKey, values?: Record<string, string | number>) => string;
  /**
   * Signs out because the gateway answered 401 (the token expired or its key was revoked), the sign-in
   * screen saying the session ended: what the tRPC client does, for the calls made outside it (Download CSV).
   */
  sessionEnded: () => void;
  /** Signs out at the person's or the operator's own asking (a person's session ends at the gateway). */
  signOut: () => void;
  /** Reads again who the signed-in person is (`me.me`): after they set up two-factor sign-in, say. */
  refreshPerson: () => Promise<void>;
  /** Goes to a hash route, e.g. `#/payments/pay_…`. */
  navigate: (hash: string) => void;
}

export const Dashboard = createContext<DashboardContext | null>(null);

/** The dashboard's context; only screens rendered inside the signed-in shell call it. */
export function useDashboard(): DashboardContext {
  const value = useContext(Dashboard);
  if (!value) throw new Error("useDashboard outside the signed-in shell");
  return value;
}
