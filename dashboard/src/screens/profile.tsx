/**
 * The signed-in person's own (issue 30 point 6): their password changed (`me.changePassword`: the current one
 * first), their two-factor sign-in set up — a QR code for the authenticator app, confirmed with a first code, the
 * ten recovery codes shown once — or turned off, and their sessions (where, which browser, when; this one marked)
 * ended one by one, or this one signed out. Every person has it, whatever their role; a person whose shop (or the
 * operator's side) requires two-factor sign-in and who has not set it up has only this screen (`app.tsx`).
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { DateTime, ErrorNote, StatusNote, useAction, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import type { MessageKey } from "../i18n.ts";
import { ListStates, ListTable } from "../lists.tsx";

type Me = Outputs["me"]["me"];
type Enrolment = Outputs["me"]["startTwoFactor"];

export function ProfileScreen() {
  const { api, session, t } = useDashboard();
  const me = useLoad(() => api.me.me.query(), []);
  return (
    <section aria-labelledby="profile-title">
      <h1 id="profile-title">{t("profile.title")}</h1>
      {me.data ? <p class="hint">{t("profile.who", { email: me.data.email, role: t(`role.${me.data.role}` as MessageKey) })}</p> : null}
      {session.mustEnrol ? (
        <p class="notice notice-secret" role="note" data-testid="must-enrol">
          {t("profile.mustEnrol")}
        </p>
      ) : null}
      <ErrorNote error={me.error} />
      {me.data ? <TwoFactor me={me.data} onChanged={me.reload} /> : null}
      {session.mustEnrol ? null : (
        <>
          <PasswordForm />
          <Sessions />
        </>
      )}
    </section>
  );
}

/** Two-factor sign-in: set up (QR code, first code, recovery codes once), or on (with the codes left) and turned off. */
function TwoFactor({ me, onChanged }: { me: Me; onChanged: () => void }) {
  const { api, session, t, refreshPerson } = useDashboard();
  const action = useAction();
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>();
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | undefined>();
  const [done, setDone] = useState<string | undefined>();
  // The operator's side and a shop that asks for it keep it on: turning it off is not offered.
  const requiredBy = me.operatorRole ? [t("profile.sessions.operator")] : me.shops.filter((shop) => shop.requireTwoFactor).map((shop) => shop.storeName);

  const start = () => action.run(async () => setEnrolment(await api.me.startTwoFactor.mutate()));
  const confirm = async (event: SubmitEvent) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget as HTMLFormElement).get("code") ?? "").trim();
    await action.run(async () => {
      const confirmed = await api.me.confirmTwoFactor.mutate({ code });
      setEnrolment(undefined);
      setRecoveryCodes(confirmed.recoveryCodes);
    });
  };
  // The codes are gone from the page once the person says they kept them; then who they are is read again (a
  // person who had to set it up first now has the whole dashboard).
  const kept = async () => {
    setRecoveryCodes(undefined);
    onChanged();
    if (session.mustEnrol) await refreshPerson();
  };
  const disable = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const code = String(new FormData(form).get("code") ?? "").trim();
    if (await action.run(() => api.me.disableTwoFactor.mutate({ code }))) {
      form.reset();
      setDone(t("profile.twoFactor.disabled"));
      onChanged();
    }
  };

  return (
    <section aria-labelledby="two-factor-title" data-testid="two-factor">
      <h2 id="two-factor-title">{t("profile.twoFactor.title")}</h2>
      <StatusNote>{done}</StatusNote>
      {recoveryCodes ? (
        <div class="notice notice-secret" role="status" data-testid="recovery-codes">
          <h3>{t("profile.twoFactor.codesTitle")}</h3>
          <p>{t("profile.twoFactor.codesHint")}</p>
          <ol class="recovery-codes">
            {recoveryCodes.map((code) => (
              <li key={code}>
                <code>{code}</code>
              </li>
            ))}
          </ol>
          <button type="button" onClick={kept}>
            {t("profile.twoFactor.codesKept")}
          </button>
        </div>
      ) : enrolment ? (
        <form class="stack" onSubmit={confirm} aria-labelledby="two-factor-title" data-testid="enrolment">
          <p class="hint">{t("profile.twoFactor.scan")}</p>
          <img
            class="two-factor-qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qrSvg)}`}
            width={200}
            height={200}
            alt={t("profile.twoFactor.qr")}
          />
          <p>
            {t("profile.twoFactor.secret")}{" "}
            <code class="secret" data-testid="two-factor-secret">
              {enrolment.secret}
            </code>
          </p>
          <label>
            {t("profile.twoFactor.code")}
            <input name="code" required autoComplete="one-time-code" inputMode="numeric" spellcheck={false} maxLength={20} />
          </label>
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              {t("profile.twoFactor.confirm")}
            </button>
            <button type="button" class="secondary" onClick={() => setEnrolment(undefined)}>
              {t("profile.twoFactor.cancel")}
            </button>
          </div>
        </form>
      ) : me.twoFactorEnabled ? (
        <>
          <p data-testid="two-factor-state" data-enabled="true">
            {t("profile.twoFactor.on", { count: me.recoveryCodesLeft })}
          </p>
          {requiredBy.length > 0 ? (
            <p class="hint">{t("profile.twoFactor.required", { names: requiredBy.join(", ") })}</p>
          ) : (
            <form class="inline-form" onSubmit={disable}>
              <label>
                {t("profile.twoFactor.disableCode")}
                <input name="code" required autoComplete="one-time-code" spellcheck={false} maxLength={20} />
              </label>
              <button type="submit" class="danger" disabled={action.busy}>
                {t("profile.twoFactor.disable")}
              </button>
            </form>
          )}
        </>
      ) : (
        <>
          <p data-testid="two-factor-state" data-enabled="false">
            {t("profile.twoFactor.off")}
          </p>
          <button type="button" onClick={start} disabled={action.busy}>
            {t("profile.twoFactor.start")}
          </button>
        </>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}

/** The password: the current one, then the new one under the rules; the person's other sessions end. */
function PasswordForm() {
  const { api, t } = useDashboard();
  const action = useAction();
  const [done, setDone] = useState<string | undefined>();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    setDone(undefined);
    await action.run(async () => {
      const changed = await api.me.changePassword.mutate({
        currentPassword: String(fields.get("currentPassword") ?? ""),
        newPassword: String(fields.get("newPassword") ?? ""),
      });
      form.reset();
      setDone(t("profile.password.changed", { count: changed.sessionsEnded }));
    });
  };
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">{t("profile.password.title")}</h2>
      <p class="hint" id="password-rules">
        {t("profile.password.hint")}
      </p>
      <form class="inline-form" onSubmit={submit} data-testid="password">
        <label>
          {t("profile.password.current")}
          <input name="currentPassword" type="password" required autoComplete="current-password" maxLength={800} />
        </label>
        <label>
          {t("profile.password.new")}
          <input name="newPassword" type="password" required autoComplete="new-password" minLength={10} maxLength={200} aria-describedby="password-rules" />
        </label>
        <button type="submit" disabled={action.busy}>
          {t("profile.password.submit")}
        </button>
      </form>
      <StatusNote>{done}</StatusNote>
      <ErrorNote error={action.error} />
    </section>
  );
}

/** A browser's name and system from its user agent, as a person recognises it (`Chrome · Linux`). */
export function browserOf(userAgent: string | null): string | undefined {
  if (!userAgent) return undefined;
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /OPR\//.test(userAgent)
      ? "Opera"
      : /Firefox\//.test(userAgent)
        ? "Firefox"
        : /Chrom(e|ium)\//.test(userAgent)
          ? "Chrome"
          : /Safari\//.test(userAgent)
            ? "Safari"
            : undefined;
  const system = /Android/.test(userAgent)
    ? "Android"
    : /iPhone|iPad/.test(userAgent)
      ? "iOS"
      : /Windows/.test(userAgent)
        ? "Windows"
        : /Mac OS X/.test(userAgent)
          ? "macOS"
          : /Linux/.test(userAgent)
            ? "Linux"
            : undefined;
  const named = [browser, system].filter(Boolean).join(" · ");
  return named || userAgent.slice(0, 60);
}

/** The person's live sessions: this one marked (and signed out from here), the others ended one by one. */
function Sessions() {
  const { api, t, signOut } = useDashboard();
  const sessions = useLoad(() => api.me.sessions.query(), []);
  const action = useAction();
  const [done, setDone] = useState<string | undefined>();
  const end = async (id: string) => {
    if (await action.run(() => api.me.endSession.mutate({ session_id: id }))) {
      setDone(t("profile.sessions.ended"));
      sessions.reload();
    }
  };
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">{t("profile.sessions.title")}</h2>
      <p class="hint">{t("profile.sessions.hint")}</p>
      <StatusNote>{done}</StatusNote>
      <ErrorNote error={action.error} />
      <ListStates loaded={sessions} items={(page) => page.data} empty={t("profile.sessions.none")}>
        {(list) => (
          <ListTable
            testid="sessions"
            columns={[
              { label: t("profile.sessions.where") },
              { label: t("profile.sessions.address") },
              { label: t("profile.sessions.started"), wide: true },
              { label: t("profile.sessions.lastSeen") },
              { label: t("profile.sessions.actions") },
            ]}
          >
            {list.map((row) => (
              <tr key={row.id} data-session-id={row.id} data-current={row.current ? "true" : undefined}>
                <td title={row.userAgent ?? undefined}>
                  {browserOf(row.userAgent) ?? t("profile.sessions.unknownBrowser")}
                  {row.current ? (
                    <>
                      {" "}
                      <span class="badge badge-succeeded">{t("profile.sessions.current")}</span>
                    </>
                  ) : null}
                  {row.tenantId === null ? <div class="muted">{t("profile.sessions.operator")}</div> : null}
                </td>
                <td>{row.address}</td>
                <td class="wide-only">
                  <DateTime iso={row.createdAt} />
                </td>
                <td>
                  <DateTime iso={row.lastSeenAt} />
                </td>
                <td class="actions">
                  {row.current ? (
                    <button type="button" class="secondary" onClick={signOut}>
                      {t("profile.signOut")}
                    </button>
                  ) : (
                    <button type="button" class="secondary" disabled={action.busy} onClick={() => end(row.id)}>
                      {t("profile.sessions.end")}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
    </section>
  );
}
