/**
 * A renewal schedule made on an API node whose clock jumped 184 s ahead (the fault campaign's offset clock,
 * `TEST_CLOCK_OFFSET_FILE`), without a `startAt` (issue 28): its first period is due at once — the earlier of
 * the node's clock and the database's — not 184 s later, when the node's clock said it was made. (The fleet
 * campaign waited for such a first period, up to 4 minutes.) A merchant's `startAt` is kept as given.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sweepRenewals } from "../../../src/services/permits/renewals.ts";
import { activePermit, startPermitRig, type PermitRig } from "../../support/permit-rig.ts";
import { schedulePath, startRecordingSimulator, type RecordingSimulator } from "../../support/renewal-rig.ts";
import type { Json } from "../../support/json.ts";

const JUMP_MS = 184_000;
let dir: string;
let rig: PermitRig<RecordingSimulator>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "passerelle-schedule-ahead-"));
  const file = join(dir, "api-ahead");
  writeFileSync(file, String(JUMP_MS));
  rig = await startPermitRig({
    sim: await startRecordingSimulator(),
    env: { TEST_CLOCK_OFFSET_FILE: file },
    workerOptions: { renewalSweepEveryMs: 3_600_000 },
  });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a schedule made, and swept, on a node 184 s ahead", () => {
  it("without startAt: its first charge is due now, not 184 s ahead; with startAt: as given", async () => {
    const { gw, sim } = rig;
    expect(gw.gateway.deps.now().getTime() - Date.now()).toBeGreaterThan(JUMP_MS - 10_000);
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const response = await gw.call("PUT", schedulePath(permitId), tenantId, { amount: 1000, interval: "day", description: "Panier" });
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(200);
    const answeredAt = Date.now();
    expect(Date.parse(String(body.nextChargeAt))).toBeLessThanOrEqual(answeredAt);
    expect(body.startAt).toBe(body.nextChargeAt);

    const other = await activePermit(gw, sim, tenantId);
    const startAt = new Date(Date.now() + 3_600_000).toISOString();
    const given = await gw.call("PUT", schedulePath(other.permitId), tenantId, { amount: 1000, interval: "day", startAt, description: "Plus tard" });
    expect(await given.json()).toMatchObject({ startAt, nextChargeAt: startAt });
  }, 60_000);

  it("a renewal sweep on that node charges nothing before it is due by the database's clock (it was 184 s early)", async () => {
    const { gw, sim } = rig;
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    // Due in 60 s by every clock but this node's, which already reads 124 s past it.
    const startAt = new Date(Date.now() + 60_000).toISOString();
    const set = await gw.call("PUT", schedulePath(permitId), tenantId, { amount: 1000, interval: "day", startAt, description: "Pas encore" });
    expect(set.status).toBe(200);
    expect(gw.gateway.deps.now().getTime()).toBeGreaterThan(Date.parse(startAt));
    // The other tests' schedules out of this sweep's way: what it enqueues is this one's or nothing.
    await gw.gateway.deps.db
      .updateTable("permit_schedules")
      .set({ next_attempt_at: new Date(Date.now() + 86_400_000) })
      .where("permit_id", "<>", permitId)
      .execute();
    const report = await sweepRenewals(gw.gateway.deps);
    expect(report.enqueued).toBe(0);
    const charges = await gw.gateway.deps.db.selectFrom("permit_charges").select("id").where("permit_id", "=", permitId).execute();
    expect(charges).toEqual([]);
  }, 60_000);
});
