/**
 * The app shell: the session (signed in or not, signed out when its token expires), the language, the
 * hash route, and the frame every screen sits in — the environment in use on every screen, live marked
 * unmistakably, the navigation, the language switch and sign-out.
 */
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { createApi } from "./api.ts";
import { Dashboard, type DashboardContext, useDashboard } from "./context.ts";
import { useLoad } from "./components.tsx";
import { fill, initialLanguage, type Language, type MessageKey, rememberLanguage } from "./i18n.ts";
import { en } from "./messages-en.ts";
import { fr } from "./messages-fr.ts";
import { hashOf, parseRoute, type Route } from "./routes.ts";
import { ApiKeysScreen } from "./screens/account/api-keys.tsx";
import { EventsScreen } from "./screens/webhooks/events.tsx";
import { HomeScreen } from "./screens/home.tsx";
import { MoneyScreen } from "./screens/money.tsx";
import { MoneyOutScreen } from "./screens/money-out.tsx";
import { NotFoundScreen } from "./screens/not-found.tsx";
import { StuckPaymentsScreen, TenantsScreen } from "./screens/operator.tsx";
import { PaymentScreen } from "./screens/payments/payment.tsx";
import { PaymentsScreen } from "./screens/payments/payments.tsx";
import { PermitScreen, PermitsScreen } from "./screens/permits.tsx";
import { PaymentLinkScreen, PaymentLinksScreen } from "./screens/links/payment-links.tsx";
import { ReconciliationScreen } from "./screens/reconciliation.tsx";
import { RoutingScreen } from "./screens/routing.tsx";
import { SettingsScreen } from "./screens/account/settings.tsx";
import { SignInScreen } from "./screens/sign-in.tsx";
import { WebhookScreen } from "./screens/webhooks/webhook.tsx";
import { WebhooksScreen } from "./screens/webhooks/webhooks.tsx";
import { PersonLinkScreen, personLinkOf } from "./screens/person-link.tsx";
import { AuditLogScreen } from "./screens/audit-log.tsx";
import { TeamScreen } from "./screens/team.tsx";
import { ProfileScreen } from "./screens/profile.tsx";
import { navigationOf } from "./navigation.ts";
import {
  type ActingFor,
  clearSession,
  hasExpiredSession,
  loadActingFor,
  loadSession,
  resumePersonSession,
  type Session,
  saveActingFor,
  saveSession,
} from "./session.ts";

const CATALOGUES = { fr, en } as const;

/** setTimeout's longest delay (about 24.8 days); a token living longer is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener("hashchange", onChange);
    // A change between the first render's read and this listener (a link followed while the page starts) is read now.
    onChange();
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return hash;
}

export function App() {
  const [language, setLanguage] = useState<Language>(() => initialLanguage(sessionStorage, navigator.languages ?? [navigator.language]));
  // A tab reopened or reloaded after its token ended says so, as one whose token ends while it is open does.
  const [expiredAtStart] = useState(() => hasExpiredSession(sessionStorage, new Date()));
  const [session, setSession] = useState<Session | undefined>(() => loadSession(sessionStorage, new Date()));
  // Without a token's session, the browser may still hold a person's session cookie: asked once at start.
  const [resuming, setResuming] = useState(session === undefined);
  const [signedOutBecause, setSignedOutBecause] = useState<MessageKey | undefined>(expiredAtStart ? "signIn.expired" : undefined);
  const [actingFor, setActingFor] = useState<ActingFor | undefined>(() => loadActingFor(sessionStorage));
  const current = useRef(session);
  current.current = session;
  const acting = useRef(actingFor);
  acting.current = actingFor;
  const hash = useHash();

  const t = useMemo(() => (key: MessageKey, values?: Record<string, string | number>) => fill(CATALOGUES[language][key] ?? key, values), [language]);
  const chooseLanguage = (next: Language) => {
    rememberLanguage(sessionStorage, next);
    setLanguage(next);
  };
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);

  const signOut = (reason?: MessageKey) => {
    const ending = current.current;
    // A person signing out ends the session at the gateway (which clears the cookie); an ended one needs nothing.
    if (ending && ending.token === null && reason === "signIn.signedOut")
      void createApi({ token: () => undefined, csrfToken: () => ending.csrfToken })
        .me.signOut.mutate()
        .catch(() => undefined);
    clearSession(sessionStorage);
    setSession(undefined);
    setActingFor(undefined);
    setSignedOutBecause(reason);
  };
  const signOutRef = useRef(signOut);
  signOutRef.current = signOut;
  const api = useMemo(
    () =>
      createApi({
        token: () => current.current?.token,
        csrfToken: () => current.current?.csrfToken,
        signedIn: () => current.current !== undefined,
        tenantId: () => current.current?.tenantId ?? (current.current?.role === "admin" ? acting.current?.tenantId : undefined),
        onUnauthorized: () => signOutRef.current("signIn.expired"),
      }),
    [],
  );

  useEffect(() => {
    if (!resuming) return;
    void resumePersonSession(api).then((resumed) => {
      if (resumed && !current.current) setSession(resumed);
      setResuming(false);
    });
  }, []);

  // Signed out when the token expires, whatever the page is doing then.
  useEffect(() => {
    if (!session) return;
    const left = Date.parse(session.expiresAt) - Date.now();
    const timer = setTimeout(
      () => {
        if (session.token === null ? Date.parse(session.expiresAt) > Date.now() : loadSession(sessionStorage, new Date())) setSession({ ...session });
        else signOutRef.current("signIn.expired");
      },
      Math.min(Math.max(left, 0), MAX_TIMER_MS),
    );
    return () => clearTimeout(timer);
  }, [session]);

  const signedIn = (next: Session) => {
    saveSession(sessionStorage, next);
    setSignedOutBecause(undefined);
    setSession(next);
    location.hash = next.role === "admin" ? "#/operator/tenants" : "#/home";
  };

  const languageSwitch = <LanguageSwitch language={language} onChoose={chooseLanguage} label={t("language.label")} />;
  // A title per screen (a browser tab, its history, a bookmark): the screen's name, then the dashboard's.
  const operatingNow = session?.role === "admin" ? actingFor : undefined;
  const titleRoute: Route | undefined = session?.mustEnrol
    ? { screen: "profile" }
    : session
      ? parseRoute(hash, session.role === "admin" && !operatingNow ? { screen: "tenants" } : { screen: "home" })
      : undefined;
  const screenTitle = titleRoute ? t(SCREEN_TITLES[titleRoute.screen]) : t("signIn.title");
  useEffect(() => {
    document.title = `${screenTitle} · ${t("app.title")}`;
  }, [screenTitle, t]);
  // An e-mailed link (an invitation, a new password) is answered whoever is signed in, or nobody.
  const link = personLinkOf(hash);
  if (link) return <PersonLinkScreen api={api} link={link} t={t} languageSwitch={languageSwitch} />;
  if (!session && resuming) return null;
  if (!session) return <SignInScreen api={api} t={t} languageSwitch={languageSwitch} onSignedIn={signedIn} notice={signedOutBecause} />;

  const operating = session.role === "admin" ? actingFor : undefined;
  const home: Route = session.role === "admin" && !operating ? { screen: "tenants" } : { screen: "home" };
  // A person who must set up two-factor sign-in first has only their profile (the API refuses everything else).
  const route: Route = session.mustEnrol ? { screen: "profile" } : parseRoute(hash, home);
  const context: DashboardContext = {
    api,
    session,
    tenantId: session.tenantId ?? operating?.tenantId ?? null,
    actingFor: operating,
    actFor: (tenant, to) => {
      saveActingFor(sessionStorage, tenant);
      setActingFor(tenant);
      location.hash = tenant ? (to ?? "#/home") : "#/operator/tenants";
    },
    language,
    t,
    sessionEnded: () => signOutRef.current("signIn.expired"),
    signOut: () => signOutRef.current("signIn.signedOut"),
    refreshPerson: async () => {
      const resumed = await resumePersonSession(api);
      if (resumed) setSession(resumed);
    },
    navigate: (next) => (location.hash = next),
  };
  return (
    <Dashboard.Provider value={context}>
      <Shell route={route} languageSwitch={languageSwitch} onSignOut={() => signOut("signIn.signedOut")}>
        <Screen route={route} />
      </Shell>
    </Dashboard.Provider>
  );
}

function LanguageSwitch({ language, onChoose, label }: { language: Language; onChoose: (language: Language) => void; label: string }) {
  return (
    <fieldset class="language-switch">
      <legend class="visually-hidden">{label}</legend>
      {(["fr", "en"] as const).map((option) => (
        <button type="button" key={option} lang={option} aria-pressed={language === option} data-language={option} onClick={() => onChoose(option)}>
          {option === "fr" ? "Français" : "English"}
        </button>
      ))}
    </fieldset>
  );
}

/** Each screen's name, for the page's title. */
const SCREEN_TITLES: Record<Route["screen"], MessageKey> = {
  home: "nav.home",
  payments: "nav.payments",
  payment: "payment.title",
  links: "nav.links",
  link: "link.title",
  permits: "nav.permits",
  permit: "permit.title",
  webhooks: "nav.webhooks",
  webhook: "webhook.title",
  events: "nav.events",
  money: "nav.money",
  moneyOut: "moneyOut.title",
  reports: "nav.reports",
  routing: "nav.routing",
  allReports: "nav.reports",
  apiKeys: "nav.apiKeys",
  settings: "nav.settings",
  tenants: "nav.tenants",
  stuck: "nav.stuck",
  team: "nav.team",
  auditLog: "nav.auditLog",
  allAuditLog: "nav.auditLog",
  profile: "nav.profile",
  notFound: "notFound.title",
};

function Screen({ route }: { route: Route }) {
  switch (route.screen) {
    case "home":
      return <HomeScreen />;
    case "payments":
      return <PaymentsScreen filters={route.filters ?? ""} />;
    case "payment":
      return <PaymentScreen paymentId={route.paymentId} />;
    case "links":
      return <PaymentLinksScreen />;
    case "link":
      return <PaymentLinkScreen linkId={route.linkId} />;
    case "permits":
      return <PermitsScreen />;
    case "permit":
      return <PermitScreen permitId={route.permitId} />;
    case "webhooks":
      return <WebhooksScreen />;
    case "webhook":
      return <WebhookScreen webhookId={route.webhookId} />;
    case "events":
      return <EventsScreen />;
    case "money":
      return <MoneyScreen />;
    case "moneyOut":
      return <MoneyOutScreen id={route.id} />;
    case "apiKeys":
      return <ApiKeysScreen />;
    case "settings":
      return <SettingsScreen version={route.version} />;
    case "tenants":
      return <TenantsScreen />;
    case "stuck":
      return <StuckPaymentsScreen />;
    case "reports":
      return <ReconciliationScreen scope="tenant" />;
    case "routing":
      return <RoutingScreen />;
    case "allReports":
      return <ReconciliationScreen scope="all" />;
    case "team":
      return <TeamScreen />;
    case "auditLog":
      return <AuditLogScreen scope="shop" />;
    case "allAuditLog":
      return <AuditLogScreen scope="all" />;
    case "profile":
      return <ProfileScreen />;
    case "notFound":
      return <NotFoundScreen />;
  }
}

/** Which navigation entry a route belongs to (a payment's page is under Payments). */
function sectionOf(route: Route): Route["screen"] {
  if (route.screen === "payment") return "payments";
  if (route.screen === "webhook") return "webhooks";
  if (route.screen === "permit") return "permits";
  if (route.screen === "moneyOut") return "money";
  if (route.screen === "link") return "links";
  return route.screen;
}

function Shell({
  route,
  languageSwitch,
  onSignOut,
  children,
}: {
  route: Route;
  languageSwitch: JSX.Element;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  const { api, session, actingFor, actFor, t } = useDashboard();
  const live = session.environment === "live";
  // The shop's name in the header (a tenant reads its own record; an operator's banner names the tenant it acts for).
  const ownTenantId = session.role === "admin" ? null : session.tenantId;
  const shop = useLoad(
    () => (ownTenantId && !session.mustEnrol ? api.tenants.get.query({ tenant_id: ownTenantId }) : Promise.resolve(undefined)),
    [ownTenantId, session.mustEnrol],
  );
  const links = navigationOf(session, actingFor);
  const section = sectionOf(route);
  // A new screen takes the focus, so a keyboard or screen-reader user starts on it, not on the link just used.
  const main = useRef<HTMLElement>(null);
  const screenKey = hashOf(route);
  useEffect(() => {
    if (screenKey) main.current?.focus();
  }, [screenKey]);
  return (
    <div class={`shell env-${session.environment}`} data-environment={session.environment}>
      <header class="topbar">
        <div class="topbar-row">
          <span class="brand">Passerelle</span>
          <span class={`env-badge env-badge-${session.environment}`} data-testid="environment" title={live ? t("env.liveHint") : t("env.sandboxHint")}>
            {live ? t("env.live") : t("env.sandbox")}
          </span>
          <span class="who" data-testid="shop-name">
            {session.role === "admin" ? t("who.operator") : (shop.data?.storeName ?? t("who.tenant", { tenant: session.tenantId ?? "" }))}
          </span>
          <span class="spacer" />
          {languageSwitch}
          <button type="button" class="secondary" onClick={onSignOut}>
            {t("signOut")}
          </button>
        </div>
        <nav aria-label={t("nav.label")}>
          {links.map((link) => (
            <a key={link.label} href={hashOf(link.route)} aria-current={section === link.route.screen ? "page" : undefined}>
              {t(link.label)}
            </a>
          ))}
        </nav>
        {/* The banners are part of the page's header (its landmark), read with it before every screen. */}
        {actingFor && (
          <div class="acting-banner" role="note" data-testid="acting-for">
            <span>{t("acting.banner", { name: actingFor.name, id: actingFor.tenantId })}</span>
            <button type="button" class="secondary" onClick={() => actFor(undefined)}>
              {t("acting.stop")}
            </button>
          </div>
        )}
        {live && (
          <div class="live-banner" role="note" data-testid="live-banner">
            {t("env.liveBanner")}
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1} ref={main}>
        {children}
      </main>
    </div>
  );
}
