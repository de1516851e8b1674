/**
 * Signing in: a merchant with an API key (its id and secret, exchanged for a token by `auth.token`; the
 * secret is not kept), an operator with an admin token. Shown too when a session ends, saying why.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { type Api, createApi, messageOf } from "../api.ts";
import type { MessageKey } from "../i18n.ts";
import { type Session, signInWithAdminToken, signInWithApiKey } from "../session.ts";

interface SignInProps {
  api: Api;
  t: (key: MessageKey, values?: Record<string, string | number>) => string;
  languageSwitch: JSX.Element;
  onSignedIn: (session: Session) => void;
  /** Why the last session ended, when it did. */
  notice: MessageKey | undefined;
}

const apiFor = (token: string) => createApi({ token: () => token });

export function SignInScreen({ api, t, languageSwitch, onSignedIn, notice }: SignInProps) {
  const [mode, setMode] = useState<"tenant" | "operator">("tenant");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const session =
        mode === "tenant"
          ? await signInWithApiKey(api, apiFor, String(form.get("keyId") ?? "").trim(), String(form.get("secret") ?? "").trim())
          : await signInWithAdminToken(apiFor, String(form.get("token") ?? "").trim(), t("signIn.notAdmin"));
      onSignedIn(session);
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="sign-in">
      <header class="topbar">
        <div class="topbar-row">
          <span class="brand">Passerelle</span>
          <span class="spacer" />
          {languageSwitch}
        </div>
      </header>
      <main id="main" class="sign-in-card">
        <h1>{t("signIn.title")}</h1>
        {notice && (
          <p class="notice" role="status">
            {t(notice)}
          </p>
        )}
        <div class="tabs" role="tablist">
          <button type="button" role="tab" aria-selected={mode === "tenant"} onClick={() => setMode("tenant")}>
            {t("signIn.asTenant")}
          </button>
          <button type="button" role="tab" aria-selected={mode === "operator"} onClick={() => setMode("operator")}>
            {t("signIn.asOperator")}
          </button>
        </div>
        <form onSubmit={submit} class="stack" aria-label={mode === "tenant" ? t("signIn.asTenant") : t("signIn.asOperator")}>
          {mode === "tenant" ? (
            <>
              <p class="hint">{t("signIn.tenantHint")}</p>
              <label>
                {t("signIn.keyId")}
                <input name="keyId" required autoComplete="username" placeholder="key_…" spellcheck={false} />
              </label>
              <label>
                {t("signIn.secret")}
                <input name="secret" type="password" required autoComplete="current-password" placeholder="psk_…" />
              </label>
            </>
          ) : (
            <>
              <p class="hint">{t("signIn.operatorHint")}</p>
              <label>
                {t("signIn.adminToken")}
                <input name="token" type="password" required autoComplete="off" />
              </label>
            </>
          )}
          {error && (
            <div class="notice notice-error" role="alert">
              <span class="error-message">{error}</span>
            </div>
          )}
          <button type="submit" disabled={busy}>
            {busy ? t("signIn.busy") : t("signIn.submit")}
          </button>
        </form>
      </main>
    </div>
  );
}
