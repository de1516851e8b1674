/**
 * The pages an e-mailed link opens (issue 30): `#/invitation/<token>` (join a shop: a new person chooses a
 * password, a person who has one gives it) and `#/reset-password/<token>` (choose a new password). The token is
 * in the address's fragment, which no server sees; once used, the page says so and offers to sign in.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { type Api, messageOf } from "../api.ts";
import type { MessageKey } from "../i18n.ts";
import { CardForm, SignedOutPage, useCardForm } from "../signed-out.tsx";

/** Which link a location hash is, and its token; undefined for any other address. */
export function personLinkOf(hash: string): { page: "invitation" | "reset-password"; token: string } | undefined {
  const match = /^#\/(invitation|reset-password)\/([A-Za-z0-9_-]+)$/.exec(hash);
  return match ? { page: match[1] as "invitation" | "reset-password", token: match[2]! } : undefined;
}

interface PersonLinkProps {
  api: Api;
  link: { page: "invitation" | "reset-password"; token: string };
  t: (key: MessageKey, values?: Record<string, string | number>) => string;
  languageSwitch: JSX.Element;
}

export function PersonLinkScreen({ api, link, t, languageSwitch }: PersonLinkProps) {
  const [done, setDone] = useState(false);
  const invitation = link.page === "invitation";

  const { submit, busy, error } = useCardForm(async (form) => {
    const password = String(form.get("password") ?? "");
    const name = String(form.get("name") ?? "").trim();
    if (invitation) await api.people.acceptInvitation.mutate({ token: link.token, password, ...(name ? { name } : {}) });
    else await api.people.resetPassword.mutate({ token: link.token, password });
    setDone(true);
  });

  return (
    <SignedOutPage title={invitation ? t("link.invitationTitle") : t("link.resetTitle")} languageSwitch={languageSwitch}>
      {done ? (
        <div class="stack">
          <p class="notice" role="status">
            {invitation ? t("link.joined") : t("link.passwordSet")}
          </p>
          <a href="#/">{t("link.signIn")}</a>
        </div>
      ) : (
        <CardForm
          label={invitation ? t("link.invitationTitle") : t("link.resetTitle")}
          hint={invitation ? t("link.invitationHint") : t("link.resetHint")}
          onSubmit={submit}
          refusal={
            error ? (
              <div class="notice notice-error" role="alert">
                <span class="error-message">{messageOf(error)}</span>
              </div>
            ) : null
          }
          busy={busy}
          submitLabel={invitation ? t("link.join") : t("link.setPassword")}
        >
          {invitation && (
            <label>
              {t("link.name")}
              <input name="name" autoComplete="name" maxLength={200} />
            </label>
          )}
          <label>
            {t("link.password")}
            <input name="password" type="password" required autoComplete="new-password" minLength={10} />
          </label>
        </CardForm>
      )}
    </SignedOutPage>
  );
}
