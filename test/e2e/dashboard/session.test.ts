/**
 * The dashboard's sessions in a real browser (issue 17 points 2, 4 and 6): a fresh tenant signs in with its API key
 * (French by default for a French browser, switched to English), a wrong secret shows the API's message, the
 * session lives in sessionStorage only and ends with its token, live is marked on every screen, a tenant's
 * session reaches neither the operator's screens nor another tenant's data, and the screens fit a 390 px phone
 * and a keyboard.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

describeWithChromium(
  "browser: the dashboard's sessions",
  () => {
    const rig = useDashboardRig();
    const { api, newTenant, openDashboard, signInWithKey, screenshot } = rig;

    describe("signing in", () => {
      it("a fresh tenant signs in with its API key, sees its empty payments list in French, and switches to English", async () => {
        const tenant = await newTenant("Boutique Awa");
        const page = await openDashboard(["fr-FR", "fr"]);
        expect(await page.locator("html").getAttribute("lang")).toBe("fr");
        await page.getByRole("heading", { name: "Connexion" }).waitFor();
        await signInWithKey(page, tenant.keyId, tenant.secret);

        // The first screen is the home; its navigation leads to the payments.
        await page.getByRole("heading", { name: "Accueil", exact: true }).waitFor();
        await page.getByText("Rien ne demande votre attention.", { exact: false }).or(page.locator('[data-testid="attention"]')).first().waitFor();
        await page.locator('nav a[href="#/payments"]').click();
        await page.getByRole("heading", { name: "Paiements" }).waitFor();
        // The shop's name in the header.
        await page.locator('[data-testid="shop-name"]', { hasText: "Boutique Awa" }).waitFor();
        // A title per screen, and an icon, for the tab and its history.
        // (Set in an effect, just after the screen is drawn.)
        await page.waitForFunction(() => document.title.startsWith("Paiements"), undefined, { timeout: 5_000 }).catch(() => undefined);
        expect(await page.title()).toBe("Paiements · Passerelle — tableau de bord");
        expect(await page.locator('link[rel="icon"]').getAttribute("href")).toStartWith("data:image/svg+xml,");
        expect(await page.locator('[data-testid="environment"]').textContent()).toBe("Bac à sable");
        await page.getByText("Aucun paiement pour l’instant.", { exact: false }).waitFor();
        expect(await page.locator('[data-testid="live-banner"]').count()).toBe(0);
        // The tenant's navigation has no operator screens.
        expect(await page.locator('nav a[href^="#/operator"]').count()).toBe(0);

        // The token is in sessionStorage, the key's secret nowhere, localStorage untouched.
        const storage = await page.evaluate(() => ({ session: sessionStorage.getItem("passerelle.session") ?? "", local: localStorage.length }));
        expect(storage.local).toBe(0);
        expect(JSON.parse(storage.session)).toMatchObject({ role: "tenant", tenantId: tenant.id, environment: "sandbox" });
        expect(storage.session).not.toContain(tenant.secret);
        expect(await page.content()).not.toContain(tenant.secret);

        await page.locator('button[data-language="en"]').click();
        await page.getByRole("heading", { name: "Payments" }).waitFor();
        // The shell sets <html lang> in an effect, just after the screen is drawn in the new language.
        await page.waitForFunction(() => document.documentElement.lang === "en", undefined, { timeout: 5_000 }).catch(() => undefined);
        expect(await page.locator("html").getAttribute("lang")).toBe("en");
        expect(await page.locator('[data-testid="environment"]').textContent()).toBe("Sandbox");
        await page.waitForFunction(() => document.title.startsWith("Payments"), undefined, { timeout: 5_000 }).catch(() => undefined);
        expect(await page.title()).toBe("Payments · Passerelle — dashboard");
        await page.getByText("No payments yet.", { exact: false }).waitFor();
        await screenshot(page, "dashboard-payments-empty");

        // The choice holds across a reload, and so does the session.
        await page.reload();
        await page.getByRole("heading", { name: "Payments" }).waitFor();
        await page.close();
        // Nothing the page runs was refused by its Content-Security-Policy, and nothing threw.
        expect(rig.pageErrors).toEqual([]);
      }, 30_000);

      it("shows the API's message for a wrong secret, and English by default for a browser that prefers it", async () => {
        const tenant = await newTenant("Wrong Secret Shop");
        const page = await openDashboard();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        await page.locator('[role="tab"][data-mode="tenant"]').click();
        await page.locator('input[name="keyId"]').fill(tenant.keyId);
        await page.locator('input[name="secret"]').fill("psk_not-the-secret");
        await page.keyboard.press("Enter");
        const alert = page.getByRole("alert");
        await alert.waitFor();
        expect(await alert.textContent()).toMatch(/invalid|client/i);
        expect(await page.locator('[data-testid="environment"]').count()).toBe(0);

        // A merchant the operator disabled is told so, with its right key.
        const admin = await rig.tg.adminToken();
        expect((await api("PATCH", `/tenants/${tenant.id}`, { token: admin, json: { disabled: true } })).status).toBe(200);
        await page.locator('input[name="secret"]').fill(tenant.secret);
        await page.keyboard.press("Enter");
        await page.getByRole("alert").getByText("This merchant account is disabled", { exact: false }).waitFor();
        expect(await page.locator('[data-testid="environment"]').count()).toBe(0);
        await page.close();
      }, 30_000);

      it("signs out when the token expires", async () => {
        const tenant = await newTenant("Expiring Shop");
        const page = await openDashboard();
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.getByRole("heading", { name: "Home", exact: true }).waitFor();
        // The token's expiry as the page knows it, brought to a second from now. (On a busy machine the reload
        // may take longer than that: the page then signs out as it starts, with the same message.)
        await page.evaluate(() => {
          const session = JSON.parse(sessionStorage.getItem("passerelle.session")!);
          sessionStorage.setItem("passerelle.session", JSON.stringify({ ...session, expiresAt: new Date(Date.now() + 1_000).toISOString() }));
        });
        await page.reload();
        await page.getByText("Your session expired", { exact: false }).waitFor({ timeout: 10_000 });
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        expect(await page.evaluate(() => sessionStorage.getItem("passerelle.session"))).toBeNull();
        // A tab reloaded after its token ended says so too, rather than showing a bare sign-in.
        await signInWithKey(page, tenant.keyId, tenant.secret);
        await page.getByRole("heading", { name: "Home", exact: true }).waitFor();
        await page.evaluate(() => {
          const session = JSON.parse(sessionStorage.getItem("passerelle.session")!);
          sessionStorage.setItem("passerelle.session", JSON.stringify({ ...session, expiresAt: new Date(Date.now() - 1_000).toISOString() }));
        });
        await page.reload();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        expect(await page.getByText("Your session expired", { exact: false }).count()).toBe(1);
        expect(await page.evaluate(() => sessionStorage.getItem("passerelle.session"))).toBeNull();
        await page.close();
      }, 30_000);

      it("marks a live session unmistakably on every screen", async () => {
        const page = await openDashboard();
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.adminToken("live"));
        await page.locator('form button[type="submit"]').click();
        await page.getByRole("heading", { name: "Tenants" }).waitFor();
        expect(await page.locator('[data-testid="environment"]').textContent()).toBe("LIVE");
        expect(await page.locator('[data-testid="live-banner"]').textContent()).toContain("LIVE");
        await page.locator('nav a[href="#/operator/stuck"]').click();
        await page.getByRole("heading", { name: "Stuck payments" }).waitFor();
        expect(await page.locator('[data-testid="live-banner"]').count()).toBe(1);
        await page.close();
      }, 30_000);
    });

    describe("what a tenant's session cannot reach", () => {
      it("gets the API's refusal on the operator's screens and another tenant's endpoint", async () => {
        const mine = await newTenant("Mine");
        const other = await newTenant("Other");
        const otherToken = await rig.tg.tenantToken(other.id);
        const theirs = await api("POST", "/webhooks", { token: otherToken, json: { url: `${rig.receiver.url}/theirs` } });
        expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);

        const page = await openDashboard();
        await signInWithKey(page, mine.keyId, mine.secret);
        await page.getByRole("heading", { name: "Home", exact: true }).waitFor();

        await page.evaluate(() => (location.hash = "#/operator/tenants"));
        const refused = page.getByRole("alert");
        await refused.waitFor();
        expect(await refused.textContent()).toMatch(/admin/i);
        expect(await page.locator('[data-testid="tenants"]').count()).toBe(0);
        expect(await page.content()).not.toContain(other.id);

        await page.evaluate((id) => (location.hash = `#/webhooks/${id}`), theirs.body.id as string);
        await page.getByRole("heading", { name: "Endpoint" }).waitFor();
        const notFound = page.getByRole("alert");
        await notFound.waitFor();
        expect(await notFound.textContent()).toMatch(/not found/i);
        expect(await page.content()).not.toContain(`${rig.receiver.url}/theirs`);

        // Nor does the operator's sign-in take a tenant's token.
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("tab", { name: "Operator (admin token)" }).click();
        await page.locator('input[name="token"]').fill(await rig.tg.tenantToken(mine.id));
        await page.locator('form button[type="submit"]').click();
        expect(await page.getByRole("alert").textContent()).toContain("This token is not an operator's token.");
        await page.close();
      }, 30_000);
    });

    describe("on a phone", () => {
      it("fits a 390 px wide screen without sideways scrolling, and works from the keyboard", async () => {
        const tenant = await newTenant("Petit Écran");
        await rig.newPerson(tenant.id, "petit@ecran.example", "un petit écran suffit");
        const page = await openDashboard();
        await page.setViewportSize({ width: 390, height: 844 });
        // Keyboard only: Tab to the e-mail field, type, Tab to the password, type, Enter.
        for (let i = 0; i < 10; i++) {
          await page.keyboard.press("Tab");
          if (await page.evaluate(() => document.activeElement?.getAttribute("name") === "email")) break;
        }
        await page.keyboard.type("petit@ecran.example");
        await page.keyboard.press("Tab");
        await page.keyboard.type("un petit écran suffit");
        await page.keyboard.press("Enter");
        await page.getByRole("heading", { name: "Home", exact: true }).waitFor();
        for (const hash of ["#/home", "#/payments", "#/permits", "#/money", "#/reports", "#/routing", "#/webhooks", "#/events", "#/api-keys", "#/settings"]) {
          await page.evaluate((next) => (location.hash = next), hash);
          await page.locator("main#main h1").first().waitFor();
          await page.waitForLoadState("networkidle");
          // The new screen has the focus, for a keyboard or screen-reader user.
          expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          expect(width, hash).toBeLessThanOrEqual(390);
        }
        await screenshot(page, "dashboard-phone-settings");
        await page.close();
      }, 30_000);
    });

    it("left no error in any page's console: nothing refused by the Content-Security-Policy, nothing thrown", () => {
      expect(rig.pageErrors).toEqual([]);
    });
  },
  { embeddedPassOnly: true },
);
