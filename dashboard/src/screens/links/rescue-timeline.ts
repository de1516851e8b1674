/**
 * A payment's rescue in its timeline (issue 31 point 4): the offer (`payment.rescue_available`, with the rescue link
 * to send to the customer) and each try the customer made there (an attempt marked `rescue`), in words.
 */
import type { Outputs } from "../../api.ts";
import { providerLabel } from "../../components.tsx";
import type { useDashboard } from "../../context.ts";
import type { MessageKey } from "../../i18n.ts";
import { operatorName } from "../../wallets.ts";

type Attempt = Outputs["payments"]["get"]["attempts"][number];
type Event = Outputs["events"]["list"]["data"][number];
type Translate = ReturnType<typeof useDashboard>["t"];

/** A rescue try's line (undefined for an attempt of the payment's own plan). */
export function rescueTryLabel(attempt: Attempt, t: Translate): string | undefined {
  if (!attempt.rescue) return undefined;
  return t("timeline.rescueTry", {
    attempt: attempt.attempt,
    wallet: attempt.operator ? operatorName(attempt.operator) : "—",
    provider: providerLabel(attempt.provider),
    outcome: t(`timeline.rescueOutcome.${attempt.outcome}` as MessageKey),
  });
}

/** A rescue offer's line and its link (undefined for any other event). */
export function rescueOffer(event: Event, t: Translate): { label: string; url: string } | undefined {
  if (event.type !== "payment.rescue_available") return undefined;
  const reason = String(event.data.reason ?? "");
  const why = reason === "no_answer" ? t("timeline.rescueReason.no_answer") : t("timeline.rescueReason.other", { code: reason });
  return { label: t("timeline.rescueOffered", { reason: why }), url: String(event.data.rescueUrl ?? "") };
}
