/**
 * Signing in: a person with e-mail, password and two-factor code (a session cookie the page never sees), an
 * operator with an admin token; outside production only, a developer with an API key (its id and secret,
 * exchanged for a token by `auth.token`; the secret is not kept). Shown too when a session ends, saying why.
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Api, createApi } from "../api.ts";
import { Refusal } from "../components.tsx";
import { CardForm, SignedOutPage, useCardForm } from "../signed-out.tsx";
import type { MessageKey } from "../i18n.ts";
import { type Session, signInAsPerson, signInWithAdminToken, signInWithApiKey } from "../session.ts";

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
  const [mode, setMode] = useState<"person" | "tenant" | "operator">("person");
  // Signing in with an API key is for development: the gateway says whether it offers it.
  const [apiKeyOffered, setApiKeyOffered] = useState(false);
  useEffect(() => {
    void api.me.signInOptions
      .query()
      .then((options) => setApiKeyOffered(options.apiKey))
      .catch(() => undefined);
  }, [api]);
  const { submit, busy, error } = useCardForm(async (form) => {
    const field = (name: string) => String(form.get(name) ?? "").trim();
    const session =
      mode === "person"
        ? await signInAsPerson(api, { email: field("email"), password: String(form.get("password") ?? ""), code: field("code") })
        : mode === "tenant"
          ? await signInWithApiKey(api, apiFor, field("keyId"), field("secret"))
          : await signInWithAdminToken(apiFor, field("token"), t("signIn.notAdmin"));
    onSignedIn(session);
  });

  return (
    <SignedOutPage title={t("signIn.title")} languageSwitch={languageSwitch}>
      {notice && (
        <p class="notice" role="status">
          {t(notice)}
        </p>
      )}
      <div class="tabs" role="tablist">
        <button type="button" role="tab" data-mode="person" aria-selected={mode === "person"} onClick={() => setMode("person")}>
          {t("signIn.asPerson")}
        </button>
        {apiKeyOffered && (
          <button type="button" role="tab" data-mode="tenant" aria-selected={mode === "tenant"} onClick={() => setMode("tenant")}>
            {t("signIn.asTenant")}
          </button>
        )}
        <button type="button" role="tab" data-mode="operator" aria-selected={mode === "operator"} onClick={() => setMode("operator")}>
          {t("signIn.asOperator")}
        </button>
      </div>
      <CardForm
        label={mode === "person" ? t("signIn.asPerson") : mode === "tenant" ? t("signIn.asTenant") : t("signIn.asOperator")}
        hint={mode === "person" ? t("signIn.personHint") : mode === "tenant" ? t("signIn.tenantHint") : t("signIn.operatorHint")}
        onSubmit={submit}
        // A refused sign-in is not an ended session: "unauthorized" reads as a refusal here.
        refusal={<Refusal error={error} t={(key) => t(key === "error.code.unauthorized" ? "signIn.refused" : key)} />}
        busy={busy}
        submitLabel={busy ? t("signIn.busy") : t("signIn.submit")}
      >
        {mode === "person" ? (
          <>
            <label>
              {t("signIn.email")}
              <input name="email" type="email" required autoComplete="username" spellcheck={false} />
            </label>
            <label>
              {t("signIn.password")}
              <input name="password" type="password" required autoComplete="current-password" />
            </label>
            <label>
              {t("signIn.code")}
              <input name="code" autoComplete="one-time-code" inputMode="numeric" spellcheck={false} placeholder="123456" />
            </label>
          </>
        ) : mode === "tenant" ? (
          <>
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
          <label>
            {t("signIn.adminToken")}
            <input name="token" type="password" required autoComplete="off" />
          </label>
        )}
      </CardForm>
    </SignedOutPage>
  );
}
