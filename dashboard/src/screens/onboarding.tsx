/**
 * A new merchant's checklist on the Home (issue 29 point 4): its provider keys, a test payment, a webhook
 * endpoint, then live — each step ticked from the merchant's own data (`reports.onboarding`), with a link to
 * where it is done, shown until every step is.
 */
import { useDashboard } from "../context.ts";
import { useLoad } from "../components.tsx";
import { may } from "../permissions.ts";

/**
 * Where each step is done, its link's words, and what a person must be allowed to do there (live is the
 * operator's to give: no link). A person whose role cannot take a step is not sent to it: the step is listed
 * without its link.
 */
const STEP_LINKS = {
  credentials: { href: "#/settings", label: "onboarding.credentials.link", ability: "credentials" },
  testPayment: { href: "#/payments", label: "onboarding.testPayment.link", ability: "money" },
  webhook: { href: "#/webhooks", label: "onboarding.webhook.link", ability: "webhooks" },
  live: undefined,
} as const;

export function OnboardingChecklist() {
  const { api, t, session } = useDashboard();
  const progress = useLoad(() => api.reports.onboarding.query({}), []);
  const data = progress.data;
  // Nothing to show once done, or while it cannot be read (the Home's own figures say what went wrong).
  if (!data || data.done) return null;
  const next = data.steps.find((step) => !step.done)?.step;
  const count = data.steps.filter((step) => step.done).length;
  return (
    <section class="card onboarding" aria-labelledby="onboarding-title" data-testid="onboarding">
      <h2 id="onboarding-title">{t("onboarding.title")}</h2>
      <p class="hint">{t("onboarding.progress", { done: count, total: data.steps.length })}</p>
      <ol class="checklist">
        {data.steps.map(({ step, done }) => {
          const link = STEP_LINKS[step];
          return (
            <li key={step} data-step={step} data-done={done} aria-current={step === next ? "step" : undefined}>
              <span class={done ? "tick done" : "tick"} aria-hidden="true">
                {done ? "✓" : "○"}
              </span>{" "}
              <span>
                <strong>{t(`onboarding.${step}`)}</strong> <span class="visually-hidden">{done ? t("onboarding.done") : t("onboarding.todo")}</span>
                <br />
                <span class="muted">{t(`onboarding.${step}.hint`)}</span>{" "}
                {!done && link && may(session, link.ability) ? <a href={link.href}>{t(link.label)}</a> : null}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
