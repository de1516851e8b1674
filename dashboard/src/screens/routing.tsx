/**
 * Wallets and routing, for a shop owner who never read the API reference: the mobile-money wallets its
 * customers can pay with in a country, what the customer does to pay with each and the limits
 * (`routing.paymentMethods`); then, per wallet, the providers a payment tries in order, which the merchant
 * reorders, switches on and off and saves (`routing.get`, `routing.put`) — among the providers that serve
 * that wallet (`serving`), the only ones a list may name — beside each provider's live
 * success rate and circuit (`routing.stats`). A refusal is the API's own message.
 */
import { operatorName } from "../wallets.ts";
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { Amount, Empty, ErrorNote, Loading, providerLabel, ReadOnlyNote, SectionHead, StatusNote, useAction, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { countryName, type MessageKey } from "../i18n.ts";
import { may } from "../permissions.ts";

type RoutingView = Outputs["routing"]["get"];
type Wallet = RoutingView["routes"][number];
type Stats = Outputs["routing"]["stats"];
type Method = Outputs["routing"]["paymentMethods"]["methods"][number];
type Circuit = Stats["circuits"][number]["circuit"];

const walletKey = (wallet: { operator: string; country: string }) => `${wallet.operator}/${wallet.country}`;

export function RoutingScreen() {
  const { api, language, session, t } = useDashboard();
  const routing = useLoad(() => api.routing.get.query({}), []);
  const stats = useLoad(() => api.routing.stats.query({}), []);
  const countries = [...new Set((routing.data?.routes ?? []).map((wallet) => wallet.country))].sort((a, b) =>
    countryName(language, a).localeCompare(countryName(language, b), language),
  );
  return (
    <section aria-labelledby="routing-title">
      <h1 id="routing-title">{t("routing.title")}</h1>
      <p class="hint">{t("routing.hint", { environment: session.environment === "live" ? t("env.live") : t("env.sandbox") })}</p>
      <ReadOnlyNote ability="routing" />
      <ErrorNote error={routing.error} />
      {routing.loading && !routing.data ? <Loading /> : null}
      {routing.data ? <PaymentMethods countries={countries} /> : null}
      {routing.data ? (
        <RouteLists view={routing.data} countries={countries} stats={stats.data} statsError={stats.error} onSaved={routing.reload} onRefresh={stats.reload} />
      ) : null}
    </section>
  );
}

/** What a customer does to pay, in plain words. */
function flowText(t: ReturnType<typeof useDashboard>["t"], method: Method): string {
  if (method.flow === "otp") return method.otpHint ? t("methods.flow.otpHint", { hint: method.otpHint }) : t("methods.flow.otp");
  if (method.flow === "redirect") return t("methods.flow.redirect");
  return t("methods.flow.push");
}

function PaymentMethods({ countries }: { countries: string[] }) {
  const { api, language, t } = useDashboard();
  const [country, setCountry] = useState(() => (countries.includes("bj") ? "bj" : (countries[0] ?? "bj")));
  const methods = useLoad(() => api.routing.paymentMethods.query({ country }), [country]);
  return (
    <div data-testid="payment-methods">
      <h2>{t("methods.title")}</h2>
      <p class="hint">{t("methods.hint")}</p>
      <div class="filters">
        <label>
          {t("methods.country")}
          <select name="methodsCountry" value={country} onChange={(event) => setCountry((event.currentTarget as HTMLSelectElement).value)}>
            {countries.map((code) => (
              <option key={code} value={code}>
                {countryName(language, code)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={methods.error} />
      {methods.loading && !methods.data ? <Loading /> : null}
      {methods.data && methods.data.methods.length === 0 ? (
        <Empty>
          {t("methods.none", { country: countryName(language, country) })} <a href="#/settings">{t("nav.settings")}</a>
        </Empty>
      ) : null}
      {methods.data && methods.data.methods.length > 0 ? (
        <ul class="cards card-grid" data-testid="methods" data-country={methods.data.country}>
          {methods.data.methods.map((method) => (
            <li key={method.operator} class="card" data-operator={method.operator} data-flow={method.flow}>
              <div class="card-head">
                <strong>{operatorName(method.operator)}</strong>
                <span class={`badge badge-flow-${method.flow}`}>{t(`methods.flowName.${method.flow}`)}</span>
              </div>
              <p class="flow-text">{flowText(t, method)}</p>
              <dl class="facts">
                {method.routes.map((route) => (
                  <>
                    <dt key={`${route.provider}-name`}>{t("methods.through", { provider: providerLabel(route.provider) })}</dt>
                    <dd key={`${route.provider}-limits`} data-provider={route.provider}>
                      {route.limits ? (
                        <>
                          {t("methods.from")} <Amount amount={route.limits.minAmount} currency={method.currency} />{" "}
                          {route.limits.maxAmount !== null ? (
                            <>
                              {t("methods.to")} <Amount amount={route.limits.maxAmount} currency={method.currency} />
                            </>
                          ) : (
                            t("methods.noMax")
                          )}
                        </>
                      ) : (
                        t("methods.noLimits")
                      )}
                    </dd>
                  </>
                ))}
              </dl>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

const CIRCUIT_LABELS: Record<Circuit, MessageKey> = {
  closed: "routing.circuit.closed",
  open: "routing.circuit.open",
  halfopen: "routing.circuit.halfopen",
  isolated: "routing.circuit.isolated",
};

function RouteLists({
  view,
  countries,
  stats,
  statsError,
  onSaved,
  onRefresh,
}: {
  view: RoutingView;
  countries: string[];
  stats: Stats | undefined;
  statsError: unknown;
  onSaved: () => void;
  onRefresh: () => void;
}) {
  const { language, t } = useDashboard();
  // A wallet's "Saved." outlives the card it was said on (the card is drawn again from the answer).
  const [notice, setNotice] = useState<{ wallet: string; message: MessageKey } | undefined>();
  return (
    <div data-testid="routing">
      <SectionHead title={t("routing.routes")} onRefresh={onRefresh} />
      <p class="hint">{t("routing.routesHint", { minutes: stats?.windowMinutes ?? 15 })}</p>
      <ErrorNote error={statsError} />
      {view.routes.length === 0 ? <Empty>{t("routing.none")}</Empty> : null}
      {countries.map((country) => (
        <div key={country}>
          <h3>{countryName(language, country)}</h3>
          <ul class="cards card-grid">
            {view.routes
              .filter((wallet) => wallet.country === country)
              .map((wallet) => (
                <RouteCard
                  key={`${walletKey(wallet)}:${wallet.providers.join(",")}:${wallet.configured}`}
                  wallet={wallet}
                  stats={stats}
                  notice={notice?.wallet === walletKey(wallet) ? notice.message : undefined}
                  onSaved={(message) => {
                    setNotice({ wallet: walletKey(wallet), message });
                    onSaved();
                  }}
                />
              ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

interface Choice {
  provider: string;
  enabled: boolean;
}

/** One wallet's route list: its providers in order, each on or off, moved up and down, saved. */
function RouteCard({
  wallet,
  stats,
  notice,
  onSaved,
}: {
  wallet: Wallet;
  stats: Stats | undefined;
  notice: MessageKey | undefined;
  onSaved: (message: MessageKey) => void;
}) {
  const { api, session, t } = useDashboard();
  // A role that may not change the routing reads the list in use only: nothing to switch, move or save.
  const editable = may(session, "routing");
  // The list in use, then the other providers that serve this wallet (the only ones the API takes), switched off.
  const initial: Choice[] = [
    ...wallet.providers.map((provider) => ({ provider, enabled: true })),
    ...wallet.serving.filter((provider) => !wallet.providers.includes(provider)).map((provider) => ({ provider, enabled: false })),
  ];
  const [choices, setChoices] = useState<Choice[]>(editable ? initial : initial.filter((choice) => choice.enabled));
  const action = useAction();
  const busy = action.busy;
  const chosen = choices.filter((choice) => choice.enabled).map((choice) => choice.provider);
  const changed = chosen.join(",") !== wallet.providers.join(",");
  const name = operatorName(wallet.operator);

  const move = (index: number, by: -1 | 1) => {
    const next = [...choices];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    setChoices(next);
  };
  const save = (providers: string[], message: MessageKey) =>
    action.run(async () => {
      await api.routing.put.mutate({ rules: [{ operator: wallet.operator, country: wallet.country, providers }] });
      onSaved(message);
    });

  return (
    <li class="card route" data-operator={wallet.operator} data-country={wallet.country} data-configured={String(wallet.configured)}>
      <div class="card-head">
        <strong>{name}</strong>
        <span class="badge">{wallet.configured ? t("routing.configured") : t("routing.default")}</span>
      </div>
      <ol class="route-providers">
        {choices.map((choice, index) => {
          const label = providerLabel(choice.provider);
          const rate = stats?.routes.find((r) => r.provider === choice.provider && r.operator === wallet.operator && r.country === wallet.country);
          const circuit = stats?.circuits.find((c) => c.provider === choice.provider && c.operator === wallet.operator && c.country === wallet.country);
          return (
            <li key={choice.provider} data-provider={choice.provider} data-enabled={String(choice.enabled)}>
              {editable ? (
                <label class="check">
                  <input
                    type="checkbox"
                    checked={choice.enabled}
                    aria-label={t("routing.use", { provider: label, wallet: name })}
                    onChange={(event) => {
                      const enabled = (event.currentTarget as HTMLInputElement).checked;
                      setChoices(choices.map((other) => (other.provider === choice.provider ? { ...other, enabled } : other)));
                    }}
                  />
                  <span>{label}</span>
                </label>
              ) : (
                <span>{label}</span>
              )}
              <span class="route-health">
                <span class="muted" data-testid="success-rate">
                  {rate && rate.successRate !== null
                    ? t("routing.rate", { rate: Math.round(rate.successRate * 100), succeeded: rate.succeeded, total: rate.succeeded + rate.failed })
                    : t("routing.noRate")}
                </span>{" "}
                {circuit ? (
                  <span class={`badge badge-circuit-${circuit.circuit}`} data-circuit={circuit.circuit}>
                    {t(CIRCUIT_LABELS[circuit.circuit])}
                  </span>
                ) : null}
              </span>
              {editable && choices.length > 1 ? (
                <span class="route-move">
                  <button
                    type="button"
                    class="secondary"
                    disabled={index === 0}
                    aria-label={t("routing.up", { provider: label, wallet: name })}
                    onClick={() => move(index, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    disabled={index === choices.length - 1}
                    aria-label={t("routing.down", { provider: label, wallet: name })}
                    onClick={() => move(index, 1)}
                  >
                    ↓
                  </button>
                </span>
              ) : null}
            </li>
          );
        })}
      </ol>
      {chosen.length === 0 ? <p class="hint">{t("routing.keepOne")}</p> : null}
      {editable ? (
        <div class="actions">
          <button type="button" disabled={busy || !changed || chosen.length === 0} onClick={() => save(chosen, "routing.saved")}>
            {t("routing.save")}
          </button>
          {wallet.configured ? (
            <button type="button" class="secondary" disabled={busy} onClick={() => save([], "routing.reset")}>
              {t("routing.backToDefault")}
            </button>
          ) : null}
        </div>
      ) : null}
      <StatusNote>{notice && !changed ? t(notice) : null}</StatusNote>
      <ErrorNote error={action.error} />
    </li>
  );
}
