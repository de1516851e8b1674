/**
 * Never twice, on the real servers (issue 15, point 3): a `passerelle worker` process SIGKILLed between the
 * steps of a provider B payout — after its get-invoice and before its submit — and a fresh worker settles it
 * from the provider: exactly one disbursement at the provider for the one request, and ours `sent` once.
 * (Provider A's are worker-killed-provider-a-*.test.ts; the rig is test/support/worker-killed-rig.ts.)
 */
import { describe, expect, it } from "bun:test";
import { type Body, onServers, SKIP_NOTE, workerKilledRig } from "../../support/worker-killed-rig.ts";
import { waitUntil } from "../../support/wait.ts";

const rig = workerKilledRig();

describe("a worker killed between the steps of a payout", () => {
  it.skipIf(!onServers)(
    `provider B: killed after get-invoice, before the submit reached the provider; one disbursement, submitted once${SKIP_NOTE}`,
    async () => {
      await rig.startWorker();
      const tenantId = await rig.tenantWithBalance(1);
      const keys = await rig.simB.account();
      await fetch(`${rig.simB.url}/_sim/accounts/${keys.masterKey}/balances`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ SN: 50_000 }),
      });
      const stored = await rig.call(tenantId, "PUT", `/tenants/${tenantId}/credentials/providerB`, { environment: "sandbox", ...keys });
      expect(stored.status).toBe(200);
      rig.arm({ when: "before", path: /submit-invoice$/ });
      const submitsBefore = rig.sendingCalls.length;
      const created = await rig.call(tenantId, "POST", "/payouts", {
        amount: 700,
        description: "Killed mid-way",
        recipient: { phone: { number: "+221770000001", country: "sn" }, operator: "wave" },
      });
      expect(created.status).toBe(200);
      expect(created.body.provider).toBe("providerB");
      await waitUntil(() => rig.workerKilled(), { what: "the worker killed at the submit call", timeoutMs: 20_000, intervalMs: 50 });
      // The token was recorded before the submit was sent.
      const row = await rig.db.db.selectFrom("payouts").selectAll().where("id", "=", created.body.id).executeTakeFirstOrThrow();
      expect(row.provider_payout_id).not.toBeNull();
      await rig.startWorker();
      const settled = await rig.settledPayout(tenantId, created.body.id);
      expect(settled).toMatchObject({ state: "sent", providerPayoutId: row.provider_payout_id });
      expect(rig.sendingCalls.length - submitsBefore).toBe(2);
      const disbursements = ((await (await fetch(`${rig.simB.url}/_sim/disbursements`)).json()) as { disbursements: Body[] }).disbursements;
      const ours = disbursements.filter((d) => d.disburse_id === created.body.id);
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({ status: "success", submits: 1 });
      await rig.killWorker();
    },
    180_000,
  );
});
