/**
 * The team and the audit log in a real browser (issue 30 point 6): the owner invites a person with a role and
 * changes a role on the Team screen; a finance member makes a payment link and a viewer is refused one; the
 * owner's audit log, in French, shows both, the refusal said as such; a viewer is offered neither screen. A person
 * of the operator's support staff, working a shop, is offered its Team screen read-only (its people, their roles
 * and the pending invitations; no invitation, role change, removal nor revocation), in French at 390 px and in
 * English; and no screen it is offered — the operator's, the shop's, a payment's, an endpoint's, a link's — offers
 * it any change (the API refuses support every one: docs/team.md).
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import type { Page } from "playwright-core";
import { totpCode } from "../../../src/services/people/two-factor.ts";
import { describeWithChromium } from "../../support/browser.ts";
import { enrolTwoFactor, signInAs } from "../../support/team.ts";
import { waitUntil } from "../../support/wait.ts";
import { type DashboardRig, useDashboardRig } from "./dashboard-rig.ts";

const PASSWORD = "baobab sous la pluie";
const PHONE = { width: 390, height: 844 };

/** A person invited with `role` by the operator, joined through the e-mailed link (read from the log). */
async function joinAs(rig: DashboardRig, tenantId: string, email: string, role: string): Promise<void> {
  const invited = await rig.api("POST", `/tenants/${tenantId}/invitations`, { token: await rig.tg.adminToken(), json: { email, role } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const line = await waitUntil(() => rig.tg.logs.find((l) => l.msg === "e-mail (no SMTP_URL)" && l.to === email), { what: `the invitation to ${email}` });
  const token = /#\/invitation\/([A-Za-z0-9_-]+)/.exec(String(line.text))![1]!;
  expect((await rig.api("POST", "/people/invitations/accept", { token: "", json: { token, password: PASSWORD } })).status).toBe(200);
}

/**
 * A person of the operator's support staff, invited by the admin token, joined through the e-mailed link, with
 * two-factor sign-in set up (the operator's side requires it) over the API; answers its TOTP secret.
 */
async function supportStaff(rig: DashboardRig, email: string): Promise<string> {
  const invited = await rig.api("POST", "/admin/staff/invitations", { token: await rig.tg.adminToken(), json: { email, role: "support" } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const line = await waitUntil(() => rig.tg.logs.find((l) => l.msg === "e-mail (no SMTP_URL)" && l.to === email), { what: `the invitation to ${email}` });
  const token = /#\/invitation\/([A-Za-z0-9_-]+)/.exec(String(line.text))![1]!;
  expect((await rig.api("POST", "/people/invitations/accept", { token: "", json: { token, password: PASSWORD } })).status).toBe(200);
  return enrolTwoFactor(rig.base, await signInAs(rig.base, email));
}

/** Signs the support staff in, in a fresh page (no other session's cookie), and opens the shop `tenantId` from the Tenants screen. */
async function supportWorking(rig: DashboardRig, email: string, secret: string, tenantId: string, languages: string[]): Promise<Page> {
  await rig.browser.context.clearCookies();
  const page = await rig.openDashboard(languages);
  await page.setViewportSize(PHONE);
  // The code of the next period: the one that confirmed the enrolment is used.
  await rig.signInAsPerson(page, email, PASSWORD, totpCode(secret, Date.now() + 30_000));
  await page.locator(`tr[data-tenant-id="${tenantId}"] button[data-open]`).click();
  await page.locator('[data-testid="acting-for"]').waitFor();
  return page;
}

/**
 * Opens the screen at `hash` and waits until it is shown (the page's title, which names each screen, changed) and
 * its lists have loaded (no "Loading" note left in the page's main part).
 */
async function open(page: Page, hash: string): Promise<void> {
  const before = await page.title();
  await page.evaluate((to) => {
    location.hash = to;
  }, hash);
  await waitUntil(async () => ((await page.title()) !== before ? true : undefined), { what: `the screen at ${hash} shown` });
  await waitUntil(async () => ((await page.locator("main .loading").count()) === 0 ? true : undefined), { what: `the screen at ${hash} loaded` });
}

/**
 * The controls of the page's main part that could change something: every button, field and form, but a list's
 * filters (folded or not) and `allowed` — the reads a screen offers (Refresh, a pager, Download CSV…), named as shown.
 */
async function changesOffered(page: Page, allowed: readonly string[]): Promise<string[]> {
  const controls = await page.locator("main").evaluate((main) =>
    [...main.querySelectorAll("button, input, select, textarea, form")]
      .filter((control) => !control.closest(".filters, .folded, .filters-toggle") && !control.matches(".filters-toggle, [data-open]"))
      .map((control) => {
        // A field is named by its label's words (without a select's options).
        const label = (control as HTMLInputElement).labels?.[0]?.textContent?.replace(control.textContent ?? "", "");
        return `${control.tagName.toLowerCase()} "${(control.getAttribute("aria-label") ?? label ?? control.textContent ?? "").trim()}"`;
      }),
  );
  return controls.filter((control) => !allowed.some((name) => control.endsWith(`"${name}"`)));
}

/** A person's session over the API: its cookie and CSRF token. */
async function sessionOf(rig: DashboardRig, email: string): Promise<Record<string, string>> {
  const response = await fetch(`${rig.base}/people/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const me = (await response.json()) as { csrfToken: string };
  return { cookie: response.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": me.csrfToken, "content-type": "application/json" };
}

describeWithChromium("browser: the team and the audit log", () => {
  const rig = useDashboardRig();

  describe("roles", () => {
    it("the owner invites and changes roles; a finance member's change and a viewer's refusal are in the audit log; a viewer is offered neither screen", async () => {
      const tenant = await rig.newTenant("Boutique Awa");
      await rig.newPerson(tenant.id, "awa@boutique.example", PASSWORD);
      await joinAs(rig, tenant.id, "kofi@boutique.example", "finance");
      await joinAs(rig, tenant.id, "ama@boutique.example", "viewer");

      const owner = await rig.openDashboard(["fr-FR", "fr"]);
      await owner.getByRole("heading", { name: "Connexion" }).waitFor();
      await rig.signInAsPerson(owner, "awa@boutique.example", PASSWORD);
      await owner.getByRole("link", { name: "Équipe" }).click();
      await owner.getByRole("heading", { name: "Équipe" }).waitFor();
      // The owner's own role is not offered to change; the others' are.
      await owner.locator('tr[data-role="owner"]').waitFor();
      expect(await owner.locator('tr[data-role="owner"] select').count()).toBe(0);
      await owner.locator('form[data-testid="invite"] input[name="email"]').fill("yao@boutique.example");
      expect(await owner.locator('form[data-testid="invite"] select[name="role"] option').allTextContents()).toEqual([
        "Développeur",
        "Finance",
        "Lecture seule",
      ]);
      // The least a role may do is chosen until the owner chooses another.
      expect(await owner.locator('form[data-testid="invite"] select[name="role"]').inputValue()).toBe("viewer");
      await owner.locator('form[data-testid="invite"] select[name="role"]').selectOption("developer");
      await owner.locator('form[data-testid="invite"] button[type="submit"]').click();
      await owner.getByRole("cell", { name: "yao@boutique.example" }).waitFor();
      const viewerRow = owner.locator('tr[data-role="viewer"]');
      await viewerRow.locator("select").selectOption("developer");
      await owner.locator('tr[data-role="developer"]').waitFor();
      const people = await rig.api("GET", `/tenants/${tenant.id}/people`, { token: await rig.tg.adminToken() });
      expect(people.body.data.find((p: { email: string }) => p.email === "ama@boutique.example").role).toBe("developer");
      await owner.locator('tr[data-role="developer"] select').selectOption("viewer");
      await owner.locator('tr[data-role="viewer"]').waitFor();

      // A finance member makes a payment link; a viewer is refused one.
      const link = { amount: 1500, description: "Commande 44", returnUrl: "https://boutique.example/merci" };
      const finance = await fetch(`${rig.base}/payment-links`, {
        method: "POST",
        headers: await sessionOf(rig, "kofi@boutique.example"),
        body: JSON.stringify(link),
      });
      expect(finance.status).toBe(200);
      const viewer = await fetch(`${rig.base}/payment-links`, {
        method: "POST",
        headers: await sessionOf(rig, "ama@boutique.example"),
        body: JSON.stringify(link),
      });
      expect(viewer.status).toBe(403);

      await owner.getByRole("link", { name: "Journal d'audit" }).click();
      await owner.getByRole("heading", { name: "Journal d'audit" }).waitFor();
      const rows = owner.locator('tr[data-action="paymentLinks.create"]');
      await waitUntil(async () => ((await rows.count()) === 2 ? true : undefined), { what: "the two entries" });
      expect(await rows.nth(0).getAttribute("data-outcome")).toBe("forbidden");
      expect(await rows.nth(0).textContent()).toContain("Refus de rôle");
      expect(await rows.nth(0).textContent()).toContain("Lecture seule");
      expect(await rows.nth(1).getAttribute("data-outcome")).toBe("success");
      expect(await rows.nth(1).textContent()).toContain("Finance");
      await rig.screenshot(owner, "dashboard-audit-log");

      // The viewer's dashboard (the browser's cookie is the owner's until signed out) offers neither screen.
      await owner.getByRole("button", { name: "Se déconnecter" }).click();
      await rig.signInAsPerson(owner, "ama@boutique.example", PASSWORD);
      await owner.getByRole("link", { name: "Paiements" }).waitFor();
      expect(await owner.getByRole("link", { name: "Équipe" }).count()).toBe(0);
      expect(await owner.getByRole("link", { name: "Journal d'audit" }).count()).toBe(0);
      expect(rig.pageErrors).toEqual([]);
    }, 120_000);
  });

  describe("the operator's support staff", () => {
    it("sees a shop's Team screen read-only: its people, their roles and the pending invitations, nothing to change (French at 390 px, then English)", async () => {
      const tenant = await rig.newTenant("Boutique Efua");
      await rig.newPerson(tenant.id, "efua@boutique.example", PASSWORD);
      await joinAs(rig, tenant.id, "kwame@boutique.example", "finance");
      const pending = await rig.api("POST", `/tenants/${tenant.id}/invitations`, {
        token: await rig.tg.adminToken(),
        json: { email: "abla@boutique.example", role: "viewer" },
      });
      expect(pending.status, JSON.stringify(pending.body)).toBe(200);
      const secret = await supportStaff(rig, "esi@operator.example");

      const page = await supportWorking(rig, "esi@operator.example", secret, tenant.id, ["fr-FR", "fr"]);
      await page.getByRole("link", { name: "Équipe" }).click();
      await page.getByRole("heading", { name: "Équipe" }).waitFor();
      const team = page.locator('section[aria-labelledby="team-title"]');
      await team.locator('tr[data-role="finance"]').waitFor();
      // The people and their roles, in words.
      expect(await team.locator('tr[data-role="owner"]').textContent()).toContain("efua@boutique.example");
      expect(await team.locator('tr[data-role="owner"]').textContent()).toContain("Propriétaire");
      expect(await team.locator('tr[data-role="finance"]').textContent()).toContain("kwame@boutique.example");
      expect(await team.locator('tr[data-role="finance"]').textContent()).toContain("Finance");
      // The pending invitation.
      const invitation = team.locator(`tr[data-invitation-id="${pending.body.id}"]`);
      expect(await invitation.textContent()).toContain("abla@boutique.example");
      expect(await invitation.textContent()).toContain("Lecture seule");
      // Said to be read-only, for its role; nothing to invite, change, remove or revoke.
      expect(await team.locator('[data-testid="read-only"]').textContent()).toContain("Support (lecture seule)");
      expect(await team.locator("form, button, select, input, textarea").count()).toBe(0);
      expect(await page.getByText("Actions", { exact: true }).count()).toBe(0);
      // Nothing scrolls sideways on the phone, whatever the letters of the shop's id in the banner.
      const fits = await page.evaluate(() => ({ scroll: document.scrollingElement!.scrollWidth, inner: innerWidth }));
      expect(fits.scroll).toBeLessThanOrEqual(fits.inner);

      await page.locator('button[data-language="en"]').click();
      await page.getByRole("heading", { name: "Team" }).waitFor();
      expect(await team.locator('[data-testid="read-only"]').textContent()).toContain("Your role (Support (read only)) lets you read this");
      expect(await team.locator('tr[data-role="owner"]').textContent()).toContain("Owner");
      expect(await invitation.textContent()).toContain("Viewer");
      expect(await team.locator("form, button, select, input, textarea").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Invite" }).count()).toBe(0);
      expect(rig.pageErrors).toEqual([]);
    }, 120_000);

    it("is offered no change on any screen it reads: the operator's, a shop's it works, a payment's, an endpoint's, a link's (French at 390 px)", async () => {
      const tenant = await rig.newTenant("Boutique Yaa");
      const token = await rig.tg.tenantToken(tenant.id);
      // A team with a person and a pending invitation, so that the Team screen has rows to offer changes on.
      await rig.newPerson(tenant.id, "yaa@boutique.example", PASSWORD);
      expect((await rig.api("POST", `/tenants/${tenant.id}/invitations`, { token, json: { email: "adjoa@boutique.example", role: "finance" } })).status).toBe(
        200,
      );
      const paymentId = await rig.paidPayment(token);
      const endpoint = await rig.api("POST", "/webhooks", { token, json: { url: `${rig.receiver.url}/yaa` } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
      const link = await rig.api("POST", "/payment-links", {
        token,
        json: { amount: 1500, description: "Commande 45", returnUrl: "https://yaa.example/merci" },
      });
      expect(link.status, JSON.stringify(link.body)).toBe(200);
      const secret = await supportStaff(rig, "kojo@operator.example");
      const page = await supportWorking(rig, "kojo@operator.example", secret, tenant.id, ["fr-FR", "fr"]);

      // What a screen offers to read: its lists' Refresh and pages, the Home's period, a report's CSV, a
      // secret's or an address's copy, a payment's timeline opened.
      // What the screens offer that reads: a list's Refresh, its pages and its deliveries shown, a CSV downloaded,
      // a shop opened, a link's address copied. Anything else is a change, which the API refuses support.
      const reads = [
        "Actualiser",
        "← Précédents",
        "Suivants →",
        "Afficher",
        "Versements (CSV)",
        "Remboursements (CSV)",
        "Mouvements du solde (CSV)",
        "Ouvrir",
        "Copier le lien",
      ];
      const problems: string[] = [];
      // From the Profile (left out below: a person's own settings), so that every screen opened is another.
      await open(page, "#/profile");
      const screens = await page.locator("nav a").evaluateAll((links) => links.map((a) => ({ name: a.textContent!.trim(), href: a.getAttribute("href")! })));
      expect(screens.map((screen) => screen.name)).toContain("Équipe");
      for (const screen of [
        ...screens.filter((screen) => screen.href !== "#/profile"),
        { name: "a payment", href: `#/payments/${paymentId}` },
        { name: "an endpoint", href: `#/webhooks/${endpoint.body.id}` },
        { name: "a link", href: `#/links/${link.body.id}` },
      ]) {
        await open(page, screen.href);
        problems.push(...(await changesOffered(page, reads)).map((control) => `${screen.name} (${screen.href}): ${control}`));
      }
      expect(problems).toEqual([]);
      expect(rig.pageErrors).toEqual([]);
    }, 180_000);
  });
});
