/**
 * Every screen on a phone and on a desktop, in French and in English (issue 29 points 2 and 7): a merchant
 * with payments (one refunded in part), a payout, a webhook endpoint and a second API key, and an operator
 * signed in for live working that merchant. On each screen axe-core (WCAG 2.0, 2.1 and 2.2, A and AA, and
 * every part of the page inside a landmark) finds nothing; at 390 px nothing scrolls sideways and each list's
 * first row is on the first screen, as a card whose cells are named by their column, a payment id on one line
 * (shortened, whole in its title); the payments' filters folded behind one button, opened from the keyboard.
 *
 * One browser, one page per session, one gateway. Skipped, under a name that says so, when Debian's
 * `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import type { Page } from "playwright-core";
import { axeViolations } from "../../support/axe.ts";
import { describeWithChromium } from "../../support/browser.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 800 };

/** A screen to visit: its address, and whether it is a list whose first row must be on a phone's first screen. */
interface Visit {
  hash: string;
  list?: string;
}

describeWithChromium(
  "browser: every screen on a phone and a desktop, in French and English, checked by axe-core",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    /**
     * Shows `hash` and waits until the new screen is drawn — it takes the focus (app.tsx), so the focus is moved
     * off it first — and has loaded what it shows.
     */
    async function show(page: Page, hash: string): Promise<void> {
      const changed = await page.evaluate((next) => {
        if (location.hash === next) return false;
        (document.activeElement as HTMLElement | null)?.blur();
        location.hash = next;
        return true;
      }, hash);
      await page.waitForFunction(
        (moved) =>
          (!moved || document.activeElement?.id === "main") &&
          document.querySelector("main#main h1") !== null &&
          document.querySelector("main .loading") === null,
        changed,
      );
    }

    /** Visits each screen at each width and in each language, and says what is wrong on any. */
    async function checkEvery(page: Page, visits: Visit[], label: string): Promise<string[]> {
      const problems: string[] = [];
      for (const viewport of [PHONE, DESKTOP]) {
        await page.setViewportSize(viewport);
        for (const language of ["fr", "en"] as const) {
          await page.locator(`button[data-language="${language}"]`).click();
          for (const visit of visits) {
            await show(page, visit.hash);
            const where = `${label} ${visit.hash} ${language} ${viewport.width}px`;
            for (const violation of await axeViolations(page))
              problems.push(`${where}: ${violation.impact} ${violation.id} (${violation.help}) at ${violation.targets.join(", ")}`);
            if (viewport === PHONE) {
              const fits = await page.evaluate(() => ({ scroll: document.scrollingElement!.scrollWidth, inner: innerWidth }));
              if (fits.scroll > fits.inner) problems.push(`${where}: ${fits.scroll} px wide, scrolls sideways`);
              if (visit.list) {
                await page.locator(visit.list).first().waitFor();
                const top = await page.evaluate((selector) => {
                  scrollTo(0, 0);
                  return document.querySelector(selector)!.getBoundingClientRect().top;
                }, visit.list);
                if (top >= viewport.height) problems.push(`${where}: the first row starts at ${Math.round(top)} px, below the first screen`);
              }
            }
          }
        }
      }
      return problems;
    }

    describe("a merchant with money in and out, and the operator", () => {
      it("passes axe-core on every screen, fits a 390 px phone with each list's first row on the first screen", async () => {
        const problems: string[] = [];
        const tenant = await newTenant("Quincaillerie Le Marteau d'Or de Cotonou");
        const token = await rig.tg.tenantToken(tenant.id);
        // A payment the provider A sandbox approves by itself, refunded in part; one failed; a payout; an endpoint; a second key.
        const created = await api("POST", "/payments", {
          token,
          json: { amount: 900, description: "Clous et vis", operator: "mtn", customer: { phone: { number: "+22997000061", country: "bj" } } },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const paymentId = created.body.id as string;
        await waitUntil(async () => (await api("GET", `/payments/${paymentId}`, { token })).body.state === "succeeded", {
          what: "the MTN Benin payment paid",
          timeoutMs: 10_000,
          intervalMs: 200,
        });
        const refund = await api("POST", `/payments/${paymentId}/refunds`, { token, json: { amount: 200, reason: "Vis en trop" } });
        expect(refund.status, JSON.stringify(refund.body)).toBe(200);
        await insertDirectPayment(rig.tg.gateway.deps.db, tenant.id, 9_910_001, {
          payment_method: "mnoB",
          operator: "moov",
          customer: { phone: "+22995000062", country: "bj" },
          state: "failed",
          amount: 1200,
          description: "Peinture",
        });
        const payout = await api("POST", "/payouts", {
          token,
          json: { amount: 300, description: "Fournisseur de clous", recipient: { phone: { number: "+22997000063", country: "bj" }, operator: "mtn" } },
        });
        expect(payout.status, JSON.stringify(payout.body)).toBe(200);
        const endpoint = await api("POST", "/webhooks", { token, json: { url: `${rig.receiver.url}/hooks` } });
        expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
        const key = await api("POST", `/tenants/${tenant.id}/api-keys`, { token, json: { environment: "sandbox" } });
        expect(key.status, JSON.stringify(key.body)).toBe(200);

        // Provider B's keys stored, and a permit asked for (waiting for the customer's approval).
        const keys = (await (await fetch(`${rig.base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
        const stored = await api("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token, json: { ...keys, environment: "sandbox" } });
        expect(stored.status, JSON.stringify(stored.body)).toBe(200);
        const permit = await api("POST", "/providerB/permits", {
          token,
          tenantId: tenant.id,
          json: {
            customer: { name: "Koffi Mensah", phone: "+22997000064" },
            description: "Abonnement mensuel",
            maxAmount: 20_000,
            returnUrl: `${rig.receiver.url}/autorise`,
            cancelUrl: `${rig.receiver.url}/refuse`,
          },
        });
        expect(permit.status, JSON.stringify(permit.body)).toBe(200);

        const page = await openDashboard(["fr-FR", "fr"]);
        // The sign-in screen, both of its tabs, at both widths and in both languages.
        for (const viewport of [PHONE, DESKTOP]) {
          await page.setViewportSize(viewport);
          for (const language of ["fr", "en"] as const) {
            await page.locator(`button[data-language="${language}"]`).click();
            for (const tab of await page.getByRole("tab").all()) {
              await tab.click();
              const where = `sign-in ${await tab.textContent()} ${language} ${viewport.width}px`;
              for (const violation of await axeViolations(page))
                problems.push(`${where}: ${violation.impact} ${violation.id} at ${violation.targets.join(", ")}`);
              const fits = await page.evaluate(() => document.scrollingElement!.scrollWidth <= innerWidth);
              if (!fits) problems.push(`${where}: scrolls sideways`);
            }
            await page.getByRole("tab").first().click();
            // The pages an e-mailed link opens (issue 30): joining a shop, choosing a new password.
            for (const link of ["#/invitation/a11y-token", "#/reset-password/a11y-token", "#/"]) {
              const before = await page.locator("main h1").textContent();
              await page.evaluate((next) => {
                location.hash = next;
              }, link);
              await page.waitForFunction((title) => document.querySelector("main h1")?.textContent !== title, before);
              const where = `${link} ${language} ${viewport.width}px`;
              for (const violation of await axeViolations(page))
                problems.push(`${where}: ${violation.impact} ${violation.id} at ${violation.targets.join(", ")}`);
              if (!(await page.evaluate(() => document.scrollingElement!.scrollWidth <= innerWidth))) problems.push(`${where}: scrolls sideways`);
            }
          }
        }
        await page.locator('button[data-language="fr"]').click();
        await page.setViewportSize(PHONE);
        await signInWithKey(page, tenant.keyId, tenant.secret);
        const merchant: Visit[] = [
          { hash: "#/home" },
          { hash: "#/payments", list: "main table.list tbody tr" },
          { hash: `#/payments/${paymentId}` },
          { hash: "#/permits", list: "main table.list tbody tr" },
          { hash: `#/permits/${permit.body.permitId}` },
          { hash: "#/money", list: '[data-testid="holding-accounts"] > li' },
          { hash: "#/reports", list: "main table.list tbody tr" },
          { hash: "#/routing" },
          { hash: "#/webhooks", list: '[data-testid="endpoints"] > li' },
          { hash: `#/webhooks/${endpoint.body.id}` },
          { hash: "#/events", list: '[data-testid="events"] > li' },
          { hash: "#/api-keys", list: "main table.list tbody tr" },
          { hash: "#/settings" },
          { hash: "#/nowhere" },
        ];
        problems.push(...(await checkEvery(page, merchant, "merchant")));

        // On a phone, in French: a payment is a card, each value named by its column, its id on one line and whole in its title.
        await page.setViewportSize(PHONE);
        await page.locator('button[data-language="fr"]').click();
        await show(page, "#/payments");
        const row = page.locator(`tr[data-payment-id="${paymentId}"]`);
        const idLink = row.getByRole("link");
        expect(await idLink.getAttribute("title")).toBe(paymentId);
        expect(await idLink.textContent()).toBe(paymentId);
        const idBox = await idLink.evaluate((link) => ({
          height: link.getBoundingClientRect().height,
          line: Number.parseFloat(getComputedStyle(link).lineHeight),
        }));
        expect(idBox.height).toBeLessThan(idBox.line * 1.5);
        expect(
          await row.locator("td").evaluateAll((cells) => cells.filter((cell) => getComputedStyle(cell).display !== "none").map((cell) => cell.dataset.label)),
        ).toEqual(["Créé le", "Montant", "État", "Portefeuille", "Identifiant"]);
        await screenshot(page, "dashboard-phone-payments");
        // On a desktop the same list is a table: its head row shown, every column there.
        await page.setViewportSize(DESKTOP);
        expect(await page.locator('table[data-testid="payments"]').evaluate((table) => getComputedStyle(table).display)).toBe("table");
        expect(await page.getByRole("columnheader").allTextContents()).toEqual([
          "Créé le",
          "Montant",
          "État",
          "Portefeuille",
          "Fournisseur",
          "Description",
          "Client",
          "Identifiant",
        ]);
        expect(await page.getByRole("button", { name: "Filtres", exact: true }).count()).toBe(0);
        expect(await page.locator('select[name="state"]').isVisible()).toBe(true);
        await page.setViewportSize(PHONE);
        // The filters folded behind one button, opened from the keyboard; a state chosen narrows the list.
        const toggle = page.getByRole("button", { name: "Filtres" });
        expect(await toggle.getAttribute("aria-expanded")).toBe("false");
        expect(await page.locator('select[name="state"]').isVisible()).toBe(false);
        await toggle.focus();
        await page.keyboard.press("Enter");
        expect(await toggle.getAttribute("aria-expanded")).toBe("true");
        await page.locator('select[name="state"]').focus();
        await page.locator('select[name="state"]').selectOption("failed");
        await page.getByRole("button", { name: "Filtrer", exact: true }).focus();
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => location.hash === "#/payments?state=failed");
        // The succeeded payment leaves the list; the failed one stays, alone.
        await row.waitFor({ state: "detached" });
        expect(await page.locator("tr[data-payment-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-state")))).toEqual(["failed"]);
        await show(page, "#/api-keys");
        await screenshot(page, "dashboard-phone-api-keys");
        await page.close();

        // The operator, signed in for live (its red banner), then working the merchant (the banner naming it).
        const operator = await openDashboard(["fr-FR", "fr"]);
        operator.on("dialog", (dialog) => void dialog.accept());
        await operator.setViewportSize(PHONE);
        await operator.getByRole("tab", { name: "Opérateur (jeton admin)" }).click();
        await operator.locator('input[name="token"]').fill(await rig.tg.adminToken("live"));
        await operator.locator('form button[type="submit"]').click();
        await operator.locator('[data-testid="live-banner"]').waitFor();
        const operatorScreens: Visit[] = [
          { hash: "#/operator/tenants", list: "main table.list tbody tr" },
          { hash: "#/operator/stuck" },
          { hash: "#/operator/reports" },
        ];
        problems.push(...(await checkEvery(operator, operatorScreens, "operator")));
        await operator.setViewportSize(PHONE);
        await operator.locator('button[data-language="fr"]').click();
        await show(operator, "#/operator/tenants");
        await operator.locator(`tr[data-tenant-id="${tenant.id}"]`).getByRole("button", { name: "Ouvrir" }).click();
        await operator.locator('[data-testid="acting-for"]').waitFor();
        problems.push(
          ...(await checkEvery(operator, [{ hash: "#/home" }, { hash: "#/payments" }, { hash: "#/reports" }, { hash: "#/settings" }], "operator for a tenant")),
        );
        await operator.setViewportSize(PHONE);
        await operator.locator('button[data-language="fr"]').click();
        await show(operator, "#/operator/tenants");
        await screenshot(operator, "dashboard-phone-tenants");
        await operator.close();

        expect(problems).toEqual([]);
      }, 120_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
