/**
 * What every screen reads: the typed client, the session, the language and its messages. Provided once by
 * the app shell (`app.tsx`).
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Api } from "./api.ts";
import type { Language, MessageKey } from "./i18n.ts";
import type { Session } from "./session.ts";

export interface DashboardContext {
  api: Api;
  session: Session;
  language: Language;
  /** The message for `key` in the current language, `{name}` placeholders filled from `values`. */
  t: (key: MessageKey, values?: Record<string, string | number>) => string;
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
