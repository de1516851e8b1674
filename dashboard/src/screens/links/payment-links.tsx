/**
 * Payment links (issue 31 point 4): create a link — a fixed amount or one the customer chooses, single-use or
 * reusable, an expiry, a return page — then its QR code, its address with a Copy button and its ready-to-send
 * messages (WhatsApp, SMS, the phone's own share sheet); the list of the shop's links, and each link with its
 * payments (`paymentLinks.create`, `.list`, `.get`, `.deactivate`). As cards: a 390 px phone scrolls down only.
 */
import { useRef, useState } from "preact/hooks";
import type { Outputs } from "../../api.ts";
import { Amount, DateTime, ErrorNote, Loading, ReadOnlyNote, SectionHead, StateBadge, useAction, useLoad } from "../../components.tsx";
import { may } from "../../permissions.ts";
import { useDashboard } from "../../context.ts";
import { formatAmount, formatDateTime, type MessageKey } from "../../i18n.ts";
import { cursorOf, ListStates, Pager, usePages } from "../../lists.tsx";
import { walletName } from "../../wallets.ts";
import "./payment-links.css";

type Link = Outputs["paymentLinks"]["list"]["data"][number];
type LinkDetail = Outputs["paymentLinks"]["get"];

/** `#/links/pl_…`: the address of one link's screen. */
export function linkHash(id: string): string {
  return `#/links/${encodeURIComponent(id)}`;
}

/** A link's amount in words: fixed, or the bounds the customer chooses between. */
function LinkAmount({ link }: { link: Pick<Link, "amount" | "amountMin" | "amountMax" | "currency"> }) {
  const { language, t } = useDashboard();
  if (link.amount !== null) return <Amount amount={link.amount} currency={link.currency} />;
  return (
    <span class="amount">
      {t("links.between", { min: formatAmount(language, link.amountMin ?? 0, link.currency), max: formatAmount(language, link.amountMax ?? 0, link.currency) })}
    </span>
  );
}

function LinkStatus({ status }: { status: Link["status"] }) {
  const { t } = useDashboard();
  return (
    <StateBadge state={status === "active" ? "active" : status === "used" ? "succeeded" : "cancelled"} label={t(`links.status.${status}` as MessageKey)} />
  );
}

/** The list of the shop's links, newest first, and the form that makes one. */
export function PaymentLinksScreen() {
  const { api, session, t, navigate } = useDashboard();
  const links = usePages((cursor) => api.paymentLinks.list.query({ limit: 20, ...cursorOf(cursor) }), []);
  const [chosen, setChosen] = useState(false);
  const action = useAction();

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const whole = (name: string) => Number(text(name));
    const expires = text("expiresAt");
    const returnUrl = text("returnUrl");
    await action.run(async () => {
      const link = await api.paymentLinks.create.mutate({
        description: text("description"),
        amount: chosen ? { min: whole("amountMin"), max: whole("amountMax") } : whole("amount"),
        reusable: form.get("reusable") === "on",
        ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
        ...(returnUrl ? { returnUrl } : {}),
      });
      navigate(linkHash(link.id));
    });
  };

  return (
    <section aria-labelledby="links-title">
      <h1 id="links-title">{t("links.title")}</h1>
      <p class="hint">{t("links.hint")}</p>
      <ReadOnlyNote ability="money" />
      {may(session, "money") ? (
        <>
          <h2>{t("links.create")}</h2>
          <form class="stack card" onSubmit={create} data-testid="link-form">
            <label>
              {t("links.description")}
              <input name="description" required maxLength={255} />
            </label>
            <fieldset>
              <legend>{t("links.amountKind")}</legend>
              <label class="check">
                <input type="radio" name="amountKind" value="fixed" checked={!chosen} onChange={() => setChosen(false)} /> {t("links.amountFixed")}
              </label>
              <label class="check">
                <input type="radio" name="amountKind" value="chosen" checked={chosen} onChange={() => setChosen(true)} /> {t("links.amountChosen")}
              </label>
            </fieldset>
            {chosen ? (
              <div class="link-bounds">
                <label>
                  {t("links.amountMin")}
                  <input name="amountMin" type="number" inputMode="numeric" min={1} step={1} required />
                </label>
                <label>
                  {t("links.amountMax")}
                  <input name="amountMax" type="number" inputMode="numeric" min={1} step={1} required />
                </label>
              </div>
            ) : (
              <label>
                {t("links.amount")}
                <input name="amount" type="number" inputMode="numeric" min={1} step={1} required />
              </label>
            )}
            <label class="check">
              <input type="checkbox" name="reusable" /> {t("links.reusable")}
            </label>
            <label>
              {t("links.expiresAt")}
              <input name="expiresAt" type="datetime-local" />
            </label>
            <label>
              {t("links.returnUrl")}
              <input name="returnUrl" type="url" placeholder="https://" spellcheck={false} />
            </label>
            <ErrorNote error={action.error} />
            <button type="submit" disabled={action.busy}>
              {t("links.createSubmit")}
            </button>
          </form>
        </>
      ) : null}
      <SectionHead title={t("links.list")} onRefresh={links.reload} />
      <ListStates loaded={links} items={(page) => page.data} empty={t("links.none")}>
        {(list) => (
          <ul class="cards" data-testid="links">
            {list.map((link) => (
              <li key={link.id} class="card" data-link-id={link.id}>
                <div class="card-head">
                  <a href={linkHash(link.id)}>{link.description}</a>
                  <LinkStatus status={link.status} />
                </div>
                <div>
                  <LinkAmount link={link} /> · {link.reusable ? t("links.reusableYes") : t("links.reusableNo")}
                </div>
                <div class="muted">
                  {t("links.paidCount", { count: link.paidCount })} · <DateTime iso={link.createdAt} />
                </div>
                <div class="muted mono">{link.id}</div>
              </li>
            ))}
          </ul>
        )}
      </ListStates>
      <Pager pages={links} />
    </section>
  );
}

/** One link: its QR code, its address to copy, its messages to send, its payments; deactivate it. */
export function PaymentLinkScreen({ linkId }: { linkId: string }) {
  const { api, session, t } = useDashboard();
  const link = useLoad(() => api.paymentLinks.get.query({ link_id: linkId }), [linkId]);
  const action = useAction();
  const deactivate = async () => {
    if (!confirm(t("link.deactivateConfirm"))) return;
    if (await action.run(() => api.paymentLinks.update.mutate({ link_id: linkId, active: false }))) link.reload();
  };
  return (
    <section aria-labelledby="link-title">
      <p>
        <a href="#/links">{t("link.back")}</a>
      </p>
      <h1 id="link-title">{link.data ? link.data.description : t("link.title")}</h1>
      <ErrorNote error={link.error} />
      {link.loading && !link.data ? <Loading /> : null}
      {link.data ? (
        <>
          <LinkSummary link={link.data} />
          {link.data.status === "active" ? <ShareLink link={link.data} /> : null}
          <ErrorNote error={action.error} />
          {link.data.status === "active" && may(session, "money") ? (
            <button type="button" class="danger" onClick={deactivate} disabled={action.busy}>
              {t("link.deactivate")}
            </button>
          ) : null}
          <LinkPayments link={link.data} onRefresh={link.reload} />
        </>
      ) : null}
    </section>
  );
}

function LinkSummary({ link }: { link: LinkDetail }) {
  const { language, t } = useDashboard();
  return (
    <div class="card">
      <div class="card-head">
        <LinkAmount link={link} />
        <LinkStatus status={link.status} />
      </div>
      <div class="muted">
        {link.reusable ? t("links.reusableYes") : t("links.reusableNo")} · {t("links.paidCount", { count: link.paidCount })} ·{" "}
        {link.expiresAt ? t("link.expires", { date: formatDateTime(language, link.expiresAt) }) : t("link.noExpiry")}
      </div>
      <div class="muted mono">{link.id}</div>
    </div>
  );
}

/** The QR code, the address with Copy, and the messages ready to send — in the dashboard's language. */
function ShareLink({ link }: { link: LinkDetail }) {
  const { language, t } = useDashboard();
  const [copied, setCopied] = useState<boolean | "by-hand">(false);
  const shown = useRef<HTMLElement>(null);
  const message = link.share.sms[language];
  const copy = async () => {
    try {
      // The clipboard exists on https and localhost only; elsewhere the address is selected for copying by hand.
      await navigator.clipboard.writeText(link.url);
      setCopied(true);
    } catch {
      const range = document.createRange();
      if (shown.current) range.selectNodeContents(shown.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied("by-hand");
    }
  };
  const canShare = typeof navigator.share === "function";
  return (
    <div class="card link-share" data-testid="link-share">
      <img class="link-qr" src={link.qr.png} width={200} height={200} alt={t("link.qr", { id: link.id })} />
      <div class="stack">
        <div>
          <div class="muted">{t("link.url")}</div>
          <code class="mono link-url" data-testid="link-url" ref={shown}>
            {link.url}
          </code>
        </div>
        {copied === "by-hand" ? <p class="hint">{t("link.copyByHand")}</p> : null}
        <div class="actions">
          <button type="button" onClick={copy}>
            {copied === true ? t("link.copied") : t("link.copy")}
          </button>
          <a class="button secondary" href={link.qr.png} download={`${link.id}.png`}>
            {t("link.qrDownload")}
          </a>
        </div>
        <h2>{t("link.share")}</h2>
        <div class="actions">
          <a class="button" href={link.share.whatsapp[language].url} target="_blank" rel="noopener noreferrer" data-testid="share-whatsapp">
            {t("link.whatsapp")}
          </a>
          <a class="button secondary" href={`sms:?&body=${encodeURIComponent(message)}`} data-testid="share-sms">
            {t("link.sms")}
          </a>
          {canShare ? (
            <button
              type="button"
              class="secondary"
              onClick={() => navigator.share({ title: link.description, text: message, url: link.url }).catch(() => undefined)}
            >
              {t("link.shareOther")}
            </button>
          ) : null}
        </div>
        <div>
          <div class="muted">{t("link.message")}</div>
          <p class="link-message">{message}</p>
        </div>
      </div>
    </div>
  );
}

function LinkPayments({ link, onRefresh }: { link: LinkDetail; onRefresh: () => void }) {
  const { language, t } = useDashboard();
  return (
    <>
      <SectionHead title={t("link.payments")} onRefresh={onRefresh} />
      {link.payments.length === 0 ? (
        <p class="empty">{t("link.noPayments")}</p>
      ) : (
        <ul class="cards" data-testid="link-payments">
          {link.payments.map((payment) => (
            <li key={payment.id} class="card" data-payment-id={payment.id}>
              <div class="card-head">
                <a href={`#/payments/${encodeURIComponent(payment.id)}`} class="mono">
                  {payment.id}
                </a>
                <StateBadge state={payment.state} />
              </div>
              <div>
                <Amount amount={payment.amount} currency={payment.currency} /> ·{" "}
                {walletName(language, payment.operator ?? null, payment.customer?.country) ?? payment.provider}
              </div>
              <div class="muted">
                <DateTime iso={payment.createdAt} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
