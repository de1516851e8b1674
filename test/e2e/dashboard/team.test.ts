/**
 * The team and the audit log in a real browser (issue 30 point 6): the owner invites a person with a role and
 * changes a role on the Team screen; a finance member makes a payment link and a viewer is refused one; the
 * owner's audit log, in French, shows both, the refusal said as such; a viewer is offered neither screen.
 *
 * Skipped, under a name that says so, when Debian's `chromium` is not installed (`.ci/run` installs it).
 */
import { describe, expect, it } from "bun:test";
import { describeWithChromium } from "../../support/browser.ts";
import { waitUntil } from "../../support/wait.ts";
import { type DashboardRig, useDashboardRig } from "./dashboard-rig.ts";

const PASSWORD = "baobab sous la pluie";

/** A person invited with `role` by the operator, joined through the e-mailed link (read from the log). */
async function joinAs(rig: DashboardRig, tenantId: string, email: string, role: string): Promise<void> {
  const invited = await rig.api("POST", `/tenants/${tenantId}/invitations`, { token: await rig.tg.adminToken(), json: { email, role } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const line = await waitUntil(() => rig.tg.logs.find((l) => l.msg === "e-mail (no SMTP_URL)" && l.to === email), { what: `the invitation to ${email}` });
  const token = /#\/invitation\/([A-Za-z0-9_-]+)/.exec(String(line.text))![1]!;
  expect((await rig.api("POST", "/people/invitations/accept", { token: "", json: { token, password: PASSWORD } })).status).toBe(200);
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
});
