/**
 * The pay page: reads the link's public face, proposes the wallet its number belongs to (the numbering plan,
 * bundled: no round trip), and follows the wallet's own flow — approve a push with a live status, give the
 * code got by USSD, or open the wallet's page — to a receipt or a clear refusal and the merchant's return URL.
 * Built with DOM calls only (the page's policy forbids writing HTML from strings).
 */
import { detectOperator, NUMBERING_PLAN } from "../../src/services/numbering-plan.ts";
import "./styles.css";
import { COUNTRY_NAMES, type Language, WALLET_NAMES, WORDS } from "./words.ts";

interface Wallet {
  country: string;
  operator: string;
  flow: "push" | "otp" | "redirect";
  otpHint: string | null;
}

interface Link {
  id: string;
  status: "active" | "expired" | "deactivated" | "used";
  shop: string;
  description: string;
  amount: number | null;
  amountMin: number | null;
  amountMax: number | null;
  currency: "XOF" | "GNF";
  returnUrl: string | null;
  environment: "sandbox" | "live";
  wallets: Wallet[];
  /** On a rescue URL (`/pay/rs_…`): the payment it rescues, and whether a try is taken now. */
  rescue: { paymentId: string; open: boolean; operator: string | null; reason: string } | null;
}

interface Payment {
  id: string;
  state: "pending" | "succeeded" | "failed" | "cancelled" | "refunded";
  amount: number;
  currency: string;
  operator: string | null;
  nextAction: { type: string; url?: string; instructions: string } | null;
  completedAt: string | null;
  /** Its rescue page, when its push stalled or failed and a try is taken. */
  rescueUrl: string | null;
}

const POLL_MS = 2000;
const linkId = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const app = document.getElementById("app")!;
let language: Language =
  (navigator.languages ?? [navigator.language])
    .find((l) => /^(fr|en)/i.test(l))
    ?.slice(0, 2)
    .toLowerCase() === "en"
    ? "en"
    : "fr";
let render: () => void = () => {};

type Child = Node | string | null | false | undefined;

/** An element with attributes (a function is a listener) and children. */
function h(tag: string, attributes: Record<string, string | boolean | ((event: Event) => void) | undefined> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") element.addEventListener(name, value);
    else if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  for (const child of children) if (child !== null && child !== false && child !== undefined) element.append(child);
  return element;
}

const t = () => WORDS[language];

function money(amount: number, currency: string): string {
  const digits = new Intl.NumberFormat(language === "fr" ? "fr-FR" : "en-GB").format(amount).replace(/\u202f|\u00a0/g, " ");
  return `${digits} ${currency === "XOF" ? "FCFA" : currency}`;
}

async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  idempotencyKey?: string,
): Promise<{ status: number; body: T & { message?: string | string[] } }> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const response = await fetch(`/pay/${encodeURIComponent(linkId)}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function messageOf(body: { message?: string | string[] }, status: number): string {
  if (status === 429) return t().tooMany;
  return [body.message ?? t().failedToLoad].flat().join(" · ");
}

function screen(link: Link | undefined, ...content: Child[]): void {
  document.documentElement.lang = language;
  document.title = link ? `${t().title} · ${link.shop}` : t().title;
  const header = h(
    "header",
    {},
    h("span", { class: "shop" }, link?.shop ?? ""),
    h(
      "button",
      { type: "button", class: "switch", lang: language === "fr" ? "en" : "fr", click: () => ((language = language === "fr" ? "en" : "fr"), render()) },
      t().switchTo,
    ),
  );
  app.replaceChildren(header, ...content.filter((c): c is Node | string => Boolean(c)));
}

function summary(link: Link): HTMLElement {
  const amount =
    link.amount !== null ? money(link.amount, link.currency) : t().amountBetween(money(link.amountMin!, link.currency), money(link.amountMax!, link.currency));
  return h(
    "section",
    { class: "summary" },
    h("p", { class: "what" }, link.description),
    h("p", { class: "amount" }, amount),
    link.environment === "sandbox" && h("p", { class: "sandbox" }, t().sandbox),
  );
}

function backLink(link: Link): Child {
  return link.returnUrl ? h("a", { class: "back", href: link.returnUrl }, t().back) : null;
}

/**
 * The try's `Idempotency-Key`: one per try, kept while the try has no answer, so a press of Pay again after a lost
 * connection asks for the same try rather than making a second one. (`getRandomValues` works without https too.)
 */
let tryKey: { key: string; body: string } | undefined;

function keyFor(body: string): string {
  if (tryKey?.body !== body) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    tryKey = { key: Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""), body };
  }
  return tryKey.key;
}

/** What the customer types, kept across re-renders (a language switch). */
const form = { number: "", country: "", operator: "", chosen: false, amount: "", otp: "" };

function walletsIn(link: Link, country: string): Wallet[] {
  return link.wallets.filter((w) => w.country === country);
}

/** Proposes the country and wallet of the number typed, unless the customer chose the wallet. */
function detect(link: Link): string | null {
  const found = detectOperator(form.number, form.country || undefined);
  if (found && link.wallets.some((w) => w.country === found.country)) form.country = found.country;
  const wallets = walletsIn(link, form.country);
  const detected = found?.country === form.country && found.operator !== null && wallets.some((w) => w.operator === found.operator) ? found.operator : null;
  if (!form.chosen)
    form.operator = detected ?? (wallets.some((w) => w.operator === form.operator) ? form.operator : wallets.length === 1 ? wallets[0]!.operator : "");
  return detected;
}

function internationalNumber(): string {
  const found = detectOperator(form.number, form.country);
  if (found) return found.international;
  const code = NUMBERING_PLAN[form.country as keyof typeof NUMBERING_PLAN]?.callingCode ?? "";
  const digits = form.number.replace(/\D/g, "");
  return form.number.trim().startsWith("+") ? `+${digits}` : `+${code}${digits}`;
}

function showForm(link: Link, error?: string): void {
  render = () => showForm(link, error);
  const countries = [...new Set(link.wallets.map((w) => w.country))];
  if (!form.country) form.country = countries[0] ?? "";
  const detected = detect(link);
  const wallets = walletsIn(link, form.country);
  const wallet = wallets.find((w) => w.operator === form.operator);
  const hint = h(
    "p",
    { class: "hint", id: "wallet-hint" },
    detected && form.operator === detected ? t().detected(WALLET_NAMES[detected] ?? detected) : t().notDetected,
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    const button = (event.target as HTMLFormElement).querySelector("button[type=submit]") as HTMLButtonElement;
    button.disabled = true;
    const body = {
      operator: form.operator,
      phone: { number: internationalNumber(), country: form.country },
      ...(link.amount === null && { amount: Number(form.amount) }),
      ...(wallet?.flow === "otp" && { otp: form.otp.trim() }),
    };
    const sent = JSON.stringify(body);
    const answer = await api<Payment>("POST", "/payments", body, keyFor(sent)).catch(() => ({ status: 0, body: {} as Payment & { message?: string } }));
    // An answer ends the try: the next press is a new one (a lost connection keeps the key for the same try).
    if (answer.status !== 0) tryKey = undefined;
    if (answer.status !== 200) return showForm(link, messageOf(answer.body, answer.status));
    follow(link, answer.body);
  };
  const onNumber = (event: Event) => {
    form.number = (event.target as HTMLInputElement).value;
    // Shown again when the country, the wallet or what the number says changed (the hint follows the number).
    const before = `${form.country}/${form.operator}/${detected}`;
    const now = detect(link);
    if (`${form.country}/${form.operator}/${now}` !== before) {
      showForm(link);
      const input = document.getElementById("number") as HTMLInputElement;
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }
  };
  const stalled = link.rescue ? (WALLET_NAMES[link.rescue.operator ?? ""] ?? link.rescue.operator ?? "") : "";
  screen(
    link,
    summary(link),
    link.rescue && h("p", { class: "notice", role: "status" }, t().rescueNotice(stalled)),
    h(
      "form",
      { submit, novalidate: true },
      link.amount === null &&
        h(
          "label",
          {},
          t().amount,
          h("input", {
            id: "amount",
            type: "number",
            inputmode: "numeric",
            min: String(link.amountMin),
            max: String(link.amountMax),
            required: true,
            value: form.amount,
            input: (e: Event) => (form.amount = (e.target as HTMLInputElement).value),
          }),
        ),
      h(
        "label",
        {},
        t().number,
        h("input", { id: "number", type: "tel", inputmode: "tel", autocomplete: "tel", required: true, value: form.number, input: onNumber }),
      ),
      countries.length > 1 &&
        h(
          "label",
          {},
          t().country,
          h(
            "select",
            { id: "country", change: (e: Event) => ((form.country = (e.target as HTMLSelectElement).value), (form.chosen = false), showForm(link)) },
            ...countries.map((c) => h("option", { value: c, selected: c === form.country }, COUNTRY_NAMES[language][c] ?? c)),
          ),
        ),
      h(
        "label",
        {},
        t().wallet,
        h(
          "select",
          {
            id: "wallet",
            "aria-describedby": "wallet-hint",
            change: (e: Event) => ((form.operator = (e.target as HTMLSelectElement).value), (form.chosen = true), showForm(link)),
          },
          h("option", { value: "", selected: form.operator === "" }, "—"),
          ...wallets.map((w) => h("option", { value: w.operator, selected: w.operator === form.operator }, WALLET_NAMES[w.operator] ?? w.operator)),
        ),
      ),
      hint,
      wallet?.flow === "otp" &&
        h(
          "label",
          {},
          t().code,
          h("span", { class: "hint" }, t().codeHint(wallet.otpHint ?? "")),
          h("input", {
            id: "otp",
            inputmode: "numeric",
            autocomplete: "one-time-code",
            required: true,
            value: form.otp,
            input: (e: Event) => (form.otp = (e.target as HTMLInputElement).value),
          }),
        ),
      error && h("p", { class: "error", role: "alert" }, error),
      h("button", { type: "submit", class: "primary", disabled: !form.operator }, t().pay),
    ),
  );
}

/** The payment after it was made: the wallet's step, a live status, then the receipt or the refusal. */
function follow(link: Link, payment: Payment): void {
  render = () => follow(link, payment);
  if (payment.state === "succeeded") {
    receipt(link, payment);
    return;
  }
  if (payment.state !== "pending") {
    refused(link, payment.rescueUrl);
    return;
  }
  const action = payment.nextAction;
  const name = WALLET_NAMES[payment.operator ?? ""] ?? payment.operator ?? "";
  screen(
    link,
    summary(link),
    h(
      "section",
      { class: "progress", "aria-live": "polite" },
      action?.type === "open_url" && action.url
        ? h(
            "div",
            {},
            h("a", { class: "primary", href: action.url, target: "_blank", rel: "noopener" }, t().openWallet(name)),
            h("p", { class: "hint" }, t().openWalletHint),
          )
        : h("p", {}, t().approve),
      h("p", { class: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), t().waiting),
      // The push stalled: the payment offers a try again, or another wallet, on its rescue page.
      payment.rescueUrl && h("p", { class: "hint" }, t().rescueOffer),
      payment.rescueUrl && h("a", { class: "secondary", href: payment.rescueUrl }, t().rescueAction),
    ),
  );
  setTimeout(async () => {
    const answer = await api<Payment>("GET", `/payments/${payment.id}`).catch(() => undefined);
    if (answer?.status === 200) follow(link, answer.body);
    else follow(link, payment);
  }, POLL_MS);
}

function receipt(link: Link, payment: Payment): void {
  render = () => receipt(link, payment);
  const when = payment.completedAt ? new Date(payment.completedAt).toLocaleString(language === "fr" ? "fr-FR" : "en-GB") : "";
  screen(
    link,
    h(
      "section",
      { class: "done ok", role: "status" },
      h("h1", {}, t().paid),
      h("p", { class: "amount" }, money(payment.amount, payment.currency)),
      h("p", { class: "what" }, link.description),
      h(
        "dl",
        { class: "receipt", "aria-label": t().receipt },
        h("dt", {}, t().wallet),
        h("dd", {}, WALLET_NAMES[payment.operator ?? ""] ?? payment.operator ?? ""),
        h("dt", {}, t().receiptReference),
        h("dd", { class: "reference" }, payment.id),
        h("dt", {}, t().receiptDate),
        h("dd", {}, when),
      ),
      backLink(link),
    ),
  );
}

function refused(link: Link, rescueUrl: string | null = null): void {
  render = () => refused(link, rescueUrl);
  // A payment that offers a rescue is tried again as itself (its rescue page); a rescue's own page reloads its offer.
  const retry = rescueUrl
    ? h("a", { class: "primary", href: rescueUrl }, t().rescueAction)
    : link.status === "active" &&
      h("button", { type: "button", class: "primary", click: () => (link.rescue ? void start() : showForm(link)) }, link.rescue ? t().rescueAction : t().retry);
  screen(link, h("section", { class: "done ko", role: "alert" }, h("h1", {}, t().refused), h("p", {}, t().refusedHint), retry, backLink(link)));
}

/** A link that takes no payment (or none found): says why, in the language of the moment. */
function closed(link: Link | undefined, why: () => string): void {
  render = () => closed(link, why);
  screen(link, link && summary(link), h("section", { class: "done ko", role: "alert" }, h("p", {}, why())), link && backLink(link));
}

async function start(): Promise<void> {
  const answer = await api<Link>("GET", "/link").catch(() => undefined);
  if (!answer) return closed(undefined, () => t().failedToLoad);
  if (answer.status === 404) return closed(undefined, () => t().notFound);
  if (answer.status !== 200) return closed(undefined, () => messageOf(answer.body, answer.status));
  const link = answer.body;
  if (link.status !== "active") return closed(link, () => t()[link.status as "expired" | "deactivated" | "used"]);
  if (link.rescue && !link.rescue.open) {
    // A try of this payment is under way: follow it.
    const payment = await api<Payment>("GET", `/payments/${link.rescue.paymentId}`).catch(() => undefined);
    if (payment?.status === 200) return follow(link, payment.body);
  }
  showForm(link);
}

void start();
