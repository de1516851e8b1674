/**
 * Small pieces every screen uses: loading a procedure's answer, the error and empty states, amounts,
 * dates, state badges, a call's refusal and progress, a status line, a section's head with Refresh, and the
 * copy button of a secret shown once.
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { codeOf, messageOf } from "./api.ts";
import { useDashboard } from "./context.ts";
import { formatAmount, formatDateTime, type MessageKey } from "./i18n.ts";
import { type Ability, may } from "./permissions.ts";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Calls `load` when the component mounts and whenever `keys` change; a later answer replaces an earlier
 * one, and an answer that arrives after a newer call started is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const call = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => call === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => call === latest.current && setState({ data: undefined, error, loading: false }),
    );
  }, [...keys, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { ...state, reload };
}

export interface Action {
  /** The API's refusal of the last run, until the next one starts. */
  error: unknown;
  /** True while a run is under way. */
  busy: boolean;
  /** Runs `action`: the error is cleared first and set to what it throws; resolves true when it succeeded. */
  run: (action: () => Promise<unknown>) => Promise<boolean>;
}

/** A button's or a form's call to the API, its refusal kept for an `ErrorNote` and its progress for `disabled`. */
export function useAction(): Action {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

/** The API's message for a failed call, announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  const { t } = useDashboard();
  return <Refusal error={error} t={t} />;
}

/**
 * A refusal in words: the contract's code says what happened in the viewer's language; the gateway's own message
 * (which field, which limit, an operator's reason) follows it, as the API wrote it. `t` is passed in, so the
 * sign-in screen (outside the signed-in shell) says it the same way.
 */
export function Refusal({ error, t }: { error: unknown; t: (key: MessageKey) => string }) {
  if (error === undefined || error === null) return null;
  const code = codeOf(error);
  // Every code of the contract has an `error.code.<code>` message (a test compares the catalogues with src/errors.ts);
  // a code the dashboard does not know yet comes back as its key from `t`, and the generic title stands instead.
  const key = code ? (`error.code.${code}` as MessageKey) : undefined;
  const worded = key ? t(key) : undefined;
  const sentence = worded !== key ? worded : undefined;
  return (
    <div class="notice notice-error" role="alert" data-code={code}>
      <strong>{sentence ?? t("error.title")}</strong> <span class="error-message">{messageOf(error)}</span>
    </div>
  );
}

/** A provider's name as merchants know it: `providerA` → `Provider A`; another provider's name as it is. */
export function providerLabel(name: string): string {
  const match = /^provider([A-Z])$/.exec(name);
  return match ? `Provider ${match[1]}` : name;
}

/** A short confirmation ("Saved.", "Sent…"), announced to screen readers; nothing when there is none. */
export function StatusNote({ children }: { children: ComponentChildren }) {
  if (children === undefined || children === null || children === false || children === "") return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/**
 * Says, where a screen's changes are not offered, that the person's role does not allow them (`permissions.ts`);
 * nothing when it does.
 */
export function ReadOnlyNote({ ability }: { ability: Ability }) {
  const { session, t } = useDashboard();
  if (may(session, ability)) return null;
  return (
    <p class="hint" data-testid="read-only">
      {t("role.readOnly", { role: t(`role.${session.personRole}` as MessageKey) })}
    </p>
  );
}

/** A section's heading with its Refresh button. */
export function SectionHead({ title, onRefresh }: { title: ComponentChildren; onRefresh: () => void }) {
  const { t } = useDashboard();
  return (
    <div class="section-head">
      <h2>{title}</h2>
      <button type="button" class="secondary" onClick={onRefresh}>
        {t("refresh")}
      </button>
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function Loading() {
  const { t } = useDashboard();
  return (
    <p class="loading" aria-live="polite">
      {t("loading")}
    </p>
  );
}

export function Amount({ amount, currency }: { amount: number; currency: string }) {
  const { language } = useDashboard();
  return <span class="amount">{formatAmount(language, amount, currency)}</span>;
}

export function DateTime({ iso }: { iso: string | null }) {
  const { language } = useDashboard();
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{formatDateTime(language, iso)}</time>;
}

/** A payment's or a delivery's state as a coloured word, in the current language (or as `label` says). */
export function StateBadge({ state, label }: { state: string; label?: string }) {
  const { t } = useDashboard();
  return (
    <span class={`badge badge-${state}`} data-state={state}>
      {label ?? t(`state.${state}` as Parameters<typeof t>[0])}
    </span>
  );
}

/**
 * The first cells of a row of money (a payment, payout, refund, charge, permit): when it was created, its
 * amount, and its state, with `detail` (why it failed) under the badge.
 */
export function CreatedAmountState({
  createdAt,
  amount,
  currency,
  state,
  label,
  detail,
}: {
  createdAt: string;
  amount: number;
  currency: string;
  state: string;
  label?: string;
  detail?: string | null;
}) {
  return (
    <>
      <td>
        <DateTime iso={createdAt} />
      </td>
      <td>
        <Amount amount={amount} currency={currency} />
      </td>
      <td>
        <StateBadge state={state} label={label} />
        {detail ? <div class="muted">{detail}</div> : null}
      </td>
    </>
  );
}

/**
 * A secret shown once, with a button that copies it. The secret lives in this component's props only: once
 * the merchant closes the box it is gone from the page. `note` (what was created, its id) is said above it.
 */
export function SecretOnce({ secret, note, onDone }: { secret: string; note?: string; onDone: () => void }) {
  const { t } = useDashboard();
  const [copied, setCopied] = useState<boolean | "by-hand">(false);
  const shown = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      // The clipboard exists on https and localhost only; elsewhere the secret is selected for copying by hand.
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      const range = document.createRange();
      if (shown.current) range.selectNodeContents(shown.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied("by-hand");
    }
  };
  return (
    <>
      <StatusNote>{note}</StatusNote>
      <div class="notice notice-secret" role="status">
        <p>{t("secret.once")}</p>
        {copied === "by-hand" ? <p class="hint">{t("secret.copyByHand")}</p> : null}
        <code class="secret" data-testid="secret" ref={shown}>
          {secret}
        </code>
        <div class="actions">
          <button type="button" onClick={copy}>
            {copied === true ? t("secret.copied") : t("secret.copy")}
          </button>
          <button type="button" class="secondary" onClick={onDone}>
            {t("secret.done")}
          </button>
        </div>
      </div>
    </>
  );
}
