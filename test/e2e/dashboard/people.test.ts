/**
 * A person signs in to the dashboard (issue 30 point 3), in a real browser: e-mail, password and two-factor code
 * for a session cookie the page cannot read; nothing of it (no API secret, no token) is kept in the tab's storage;
 * a reload stays signed in; the shop's screens work through the cookie and its CSRF token; signing out ends the
 * session at the gateway. A developer's API-key sign-in is offered outside production only.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { totpCode } from "../../../src/services/people/two-factor.ts";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { useDashboardRig } from "./dashboard-rig.ts";

describeWithChromium(
  "browser: a person's sign-in",
  () => {
    const rig = useDashboardRig();
    const { newTenant, newPerson, openDashboard, signInAsPerson } = rig;

    describe("e-mail, password and code", () => {
      it("signs in with a cookie the page cannot read, keeps nothing in the tab, stays signed in on reload, and signs out at the gateway", async () => {
        const tenant = await newTenant("Boutique Awa");
        await newPerson(tenant.id, "awa@boutique.example", "baobab sous la pluie");
        const page = await openDashboard();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        // The developer's tab is offered here (NODE_ENV=test), after the person's, which is the default.
        await page.locator('[role="tab"][data-mode="tenant"]').waitFor();
        expect(await page.locator('[role="tab"][aria-selected="true"]').getAttribute("data-mode")).toBe("person");

        await page.locator('input[name="email"]').fill("awa@boutique.example");
        await page.locator('input[name="password"]').fill("not the password");
        await page.locator('form button[type="submit"]').click();
        expect(await page.getByRole("alert").textContent()).toContain("Wrong e-mail address or password");

        await signInAsPerson(page, "awa@boutique.example", "baobab sous la pluie");
        await page.getByText("Boutique Awa").first().waitFor();
        const cookies = await page.context().cookies();
        const session = cookies.find((c) => c.name === "passerelle_session")!;
        expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict" });
        expect(await page.evaluate(() => document.cookie)).not.toContain("passerelle_session");
        const stored = await page.evaluate(() => JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage } }));
        expect(stored).not.toContain("psk_");
        expect(stored).not.toContain(session.value);
        expect(stored).not.toContain("passerelle.session");

        // A change through the cookie, the page sending its CSRF token: an API key created on the API keys screen.
        await page.goto(`${rig.base}/dashboard#/api-keys`);
        await page.locator('form.inline-form input[name="name"]').fill("Caisse");
        await page.locator('form.inline-form button[type="submit"]').click();
        await page.getByRole("cell", { name: "Caisse" }).waitFor();
        const keys = await rig.api("GET", `/tenants/${tenant.id}/api-keys`, { token: await rig.tg.adminToken() });
        expect(keys.body.data.map((k: { name: string | null }) => k.name)).toContain("Caisse");

        await page.reload();
        await page.locator('[data-testid="environment"]').waitFor();
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        const ended = await rig.tg.gateway.deps.db.selectFrom("sessions").select("ended_at").execute();
        await page.reload();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        expect(ended.every((s) => s.ended_at !== null)).toBe(true);
        expect(rig.pageErrors).toEqual([]);
      }, 60_000);

      it("opens the e-mailed links: an invitation sets the password (a common one refused), a reset link sets a new one", async () => {
        const tenant = await newTenant("Maquis Ama");
        const admin = await rig.tg.adminToken();
        const mailedLink = async (to: string, page: string, count: number) => {
          const lines = await waitUntil(
            () => {
              const found = rig.tg.logs.filter((l) => l.msg === "e-mail (no SMTP_URL)" && l.to === to && String(l.text).includes(`#/${page}/`));
              return found.length >= count ? found : undefined;
            },
            { what: `e-mail ${count} to ${to}` },
          );
          return new RegExp(`(https?://\\S+/dashboard/#/${page}/[A-Za-z0-9_-]+)$`, "m").exec(String(lines.at(-1)!.text))![1]!;
        };
        expect(
          (await rig.api("POST", `/tenants/${tenant.id}/invitations`, { token: admin, json: { email: "ama@maquis.example", role: "owner" } })).status,
        ).toBe(200);
        const invitation = await mailedLink("ama@maquis.example", "invitation", 1);
        expect(invitation).toStartWith(`${rig.base}/dashboard/#/invitation/`);

        const page = await openDashboard();
        await page.goto(invitation);
        await page.getByRole("heading", { name: "Join the shop" }).waitFor();
        await page.locator('input[name="name"]').fill("Ama Koffi");
        await page.locator('input[name="password"]').fill("password1234");
        await page.locator('form button[type="submit"]').click();
        expect(await page.getByRole("alert").textContent()).toContain("common");
        await page.locator('input[name="password"]').fill("attiéké et alloco");
        await page.locator('form button[type="submit"]').click();
        await page.getByRole("status").getByText("You belong to the shop now").waitFor();
        await page.getByRole("link", { name: "Sign in" }).click();
        await signInAsPerson(page, "ama@maquis.example", "attiéké et alloco");
        await page.getByText("Maquis Ama").first().waitFor();

        expect((await rig.api("POST", "/people/password-reset", { token: "", json: { email: "ama@maquis.example" } })).status).toBe(200);
        const reset = await mailedLink("ama@maquis.example", "reset-password", 1);
        const other = await openDashboard();
        await other.goto(reset);
        await other.getByRole("heading", { name: "Choose a new password" }).waitFor();
        await other.locator('input[name="password"]').fill("le marché de Treichville");
        await other.locator('form button[type="submit"]').click();
        await other.getByRole("status").getByText("Your password is set").waitFor();
        // The new password ended the first page's session.
        await page.reload();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
        await signInAsPerson(page, "ama@maquis.example", "le marché de Treichville");
        // The browser's pages share their cookies: signed out for the next test.
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
      }, 60_000);

      it("asks for the two-factor code of a person who set it up", async () => {
        const tenant = await newTenant("Chez Kofi");
        await newPerson(tenant.id, "kofi@chez.example", "le fleuve Niger coule");
        // Kofi set up two-factor sign-in (through the API, as the dashboard's settings would).
        const signIn = await fetch(`${rig.base}/people/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "kofi@chez.example", password: "le fleuve Niger coule" }),
        });
        const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
        const { csrfToken } = (await signIn.json()) as { csrfToken: string };
        const headers = { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" };
        const { secret } = (await (await fetch(`${rig.base}/people/me/two-factor`, { method: "POST", headers, body: "{}" })).json()) as { secret: string };
        const confirmed = await fetch(`${rig.base}/people/me/two-factor/confirm`, {
          method: "POST",
          headers,
          body: JSON.stringify({ code: totpCode(secret, Date.now()) }),
        });
        expect(confirmed.status).toBe(200);

        const page = await openDashboard();
        await page.locator('input[name="email"]').fill("kofi@chez.example");
        await page.locator('input[name="password"]').fill("le fleuve Niger coule");
        await page.locator('form button[type="submit"]').click();
        expect(await page.getByRole("alert").textContent()).toContain("two-factor code");
        // The next step's code: the one that confirmed the enrolment works no more.
        await signInAsPerson(page, "kofi@chez.example", "le fleuve Niger coule", totpCode(secret, Date.now() + 30_000));
        await page.getByText("Chez Kofi").first().waitFor();
      }, 60_000);
    });
  },
  { embeddedPassOnly: true },
);
