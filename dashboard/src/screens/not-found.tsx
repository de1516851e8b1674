/**
 * An address the dashboard does not have.
 */
import { useDashboard } from "../context.ts";

export function NotFoundScreen() {
  const { t } = useDashboard();
  return (
    <section>
      <h1>{t("notFound.title")}</h1>
      <p>
        <a href="#/">{t("notFound.home")}</a>
      </p>
    </section>
  );
}
