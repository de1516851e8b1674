/**
 * The team (issue 30 points 4 and 6): the shop's people and their roles (`people.members`), a role changed
 * (`people.changeRole`), a person removed (`people.removeMember`), an invitation sent (`people.invite`) or revoked
 * (`people.revokeInvitation`). Offered to those who may read the team (`permissions.ts`): the shop's owner and the
 * operator's staff. Its changes are offered only to a role that may make them (the owner, the operator's admin):
 * the operator's support reads the people, their roles and the pending invitations, with nothing to change. The
 * owner's role is the operator's to give or take, so a shop's owner is not offered it.
 */
import { useState } from "preact/hooks";
import { DateTime, ErrorNote, ReadOnlyNote, StatusNote, useAction, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import type { MessageKey } from "../i18n.ts";
import { ListStates, ListTable } from "../lists.tsx";
import { may } from "../permissions.ts";

const SHOP_ROLES = ["owner", "developer", "finance", "viewer"] as const;
type ShopRole = (typeof SHOP_ROLES)[number];

export function TeamScreen() {
  const { api, session, t, tenantId: actingOn } = useDashboard();
  const tenantId = actingOn ?? "";
  const members = useLoad(() => api.people.members.query({ tenant_id: tenantId }), [tenantId]);
  const invitations = useLoad(() => api.people.invitations.query({ tenant_id: tenantId }), [tenantId]);
  const action = useAction();
  const [done, setDone] = useState<string | undefined>();
  // The operator gives and takes the owner's role; a shop's own people the others.
  const byOperator = session.role === "admin";
  // The operator's support reads the team and changes nothing of it.
  const changes = may(session, "team");
  const givable = SHOP_ROLES.filter((role) => byOperator || role !== "owner");
  const roleLabel = (role: string) => t(`role.${role}` as MessageKey);

  const reload = () => {
    members.reload();
    invitations.reload();
  };
  const invite = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const email = String(form.get("email") ?? "").trim();
    const role = String(form.get("role")) as ShopRole;
    const sent = await action.run(() => api.people.invite.mutate({ tenant_id: tenantId, email, role }));
    if (sent) {
      setDone(t("team.invited", { email }));
      formElement.reset();
      reload();
    }
  };
  const changeRole = async (personId: string, email: string, role: ShopRole) => {
    if (await action.run(() => api.people.changeRole.mutate({ tenant_id: tenantId, person_id: personId, role }))) {
      setDone(t("team.roleChanged", { email, role: roleLabel(role) }));
      reload();
    }
  };
  const remove = async (personId: string, email: string) => {
    if (!confirm(t("team.removeConfirm", { email }))) return;
    if (await action.run(() => api.people.removeMember.mutate({ tenant_id: tenantId, person_id: personId }))) reload();
  };

  return (
    <section aria-labelledby="team-title">
      <h1 id="team-title">{t("team.title")}</h1>
      <p class="hint">{t("team.hint")}</p>
      <ReadOnlyNote ability="team" />
      {changes ? (
        <form class="inline-form" onSubmit={invite} data-testid="invite">
          <label>
            {t("team.email")}
            <input name="email" type="email" required maxLength={254} autocomplete="off" />
          </label>
          <label>
            {t("team.role")}
            {/* Viewer first chosen (the least a role may do); `selected`, which a form's reset returns to (a select has no defaultValue). */}
            <select name="role">
              {givable.map((role) => (
                <option key={role} value={role} selected={role === "viewer"}>
                  {roleLabel(role)}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={action.busy}>
            {t("team.invite")}
          </button>
        </form>
      ) : null}
      {done ? <StatusNote>{done}</StatusNote> : null}
      <ErrorNote error={action.error} />
      <ListStates loaded={members} items={(page) => page.data} empty={t("team.none")}>
        {(list) => (
          <ListTable
            testid="team"
            columns={[
              { label: t("team.email") },
              { label: t("team.name"), wide: true },
              { label: t("team.role") },
              { label: t("team.joined"), wide: true },
              ...(changes ? [{ label: t("team.actions") }] : []),
            ]}
          >
            {list.map((person) => {
              // An owner's place is the operator's to change: a shop's owner sees it, and is offered nothing on it.
              const changeable = changes && (byOperator || person.role !== "owner");
              return (
                <tr key={person.id} data-person-id={person.id} data-role={person.role}>
                  <td>{person.email}</td>
                  <td class="wide-only">{person.name ?? "—"}</td>
                  <td>
                    {changeable ? (
                      <select
                        aria-label={t("team.changeRole", { email: person.email })}
                        value={person.role}
                        onChange={(event) => changeRole(person.id, person.email, (event.currentTarget as HTMLSelectElement).value as ShopRole)}
                      >
                        {givable.map((role) => (
                          <option key={role} value={role}>
                            {roleLabel(role)}
                          </option>
                        ))}
                      </select>
                    ) : (
                      <span title={changes ? t("team.ownerByOperator") : undefined}>{roleLabel(person.role)}</span>
                    )}
                  </td>
                  <td class="wide-only">
                    <DateTime iso={person.joinedAt} />
                  </td>
                  {changes ? (
                    <td class="actions">
                      {changeable ? (
                        <button type="button" class="danger" onClick={() => remove(person.id, person.email)}>
                          {t("team.remove")}
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </ListTable>
        )}
      </ListStates>
      <h2>{t("team.invitations")}</h2>
      <ListStates loaded={invitations} items={(page) => page.data} empty={t("team.invitations.none")}>
        {(list) => (
          <ListTable
            testid="invitations"
            columns={[{ label: t("team.email") }, { label: t("team.role") }, { label: t("team.expires") }, ...(changes ? [{ label: t("team.actions") }] : [])]}
          >
            {list.map((invitation) => (
              <tr key={invitation.id} data-invitation-id={invitation.id}>
                <td>{invitation.email}</td>
                <td>{roleLabel(invitation.role)}</td>
                <td>
                  <DateTime iso={invitation.expiresAt} />
                </td>
                {changes ? (
                  <td class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        action.run(async () => {
                          await api.people.revokeInvitation.mutate({ tenant_id: tenantId, invitation_id: invitation.id });
                          reload();
                        })
                      }
                    >
                      {t("team.revoke")}
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
    </section>
  );
}
