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

describe("a schedule made on an API node 184 s ahead", () => {
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
});
