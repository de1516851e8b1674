/**
 * axe-core in the browser tests: the engine injected into a page (its minified source evaluated there, once
 * per document: the dashboard's Content-Security-Policy refuses an inline script tag, not what the test
 * driver evaluates) and run over the whole document with the WCAG 2.0, 2.1 and 2.2 A and AA rules, plus
 * `region` (everything inside a landmark), which axe files under its best practices.
 */
import { readFile } from "node:fs/promises";
import type { AxeResults, ElementContext, RunOptions } from "axe-core";
import type { Page } from "playwright-core";

/** The WCAG rule sets run: 2.0, 2.1 and 2.2, levels A and AA (axe has no 2.2 A tag of its own: 2.2 added AA rules). */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] as const;

/** One rule broken, as the test reports it: the rule, its impact, and where (a few CSS selectors). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let source: string | undefined;

/** The violations axe finds on the page as it is now (none: an empty list). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  source ??= await readFile(require.resolve("axe-core/axe.min.js"), "utf8");
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(source);
  return page.evaluate(
    async (tags) => {
      // The engine just evaluated in the page.
      const { axe } = window as unknown as { axe: { run(context: ElementContext, options: RunOptions): Promise<AxeResults> } };
      const results = await axe.run(document, { runOnly: { type: "tag", values: tags }, rules: { region: { enabled: true } }, resultTypes: ["violations"] });
      return results.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact ?? null,
        help: violation.help,
        targets: violation.nodes.slice(0, 5).map((node) => node.target.map(String).join(" ")),
      }));
    },
    [...AXE_TAGS],
  );
}
