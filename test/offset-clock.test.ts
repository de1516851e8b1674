/**
 * `TEST_CLOCK_OFFSET_FILE` (the fault campaign's `clock-jump`, docs/reliability.md): a gateway started with it
 * runs its clock ahead of the machine's by the milliseconds the file holds, and follows the file when it changes.
 * Seen where a merchant sees the gateway's clock: the time a record was made.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "./support/gateway.ts";
import { waitUntil } from "./support/wait.ts";

const MINUTE = 60_000;
const dir = mkdtempSync(join(tmpdir(), "passerelle-clock-"));
const file = join(dir, "offset");
let gw: TestGateway;

/** A new tenant's `createdAt`, less the machine's time when it was made (ms): how far ahead the gateway's clock is. */
async function aheadBy(admin: string): Promise<number> {
  const before = Date.now();
  const created = await gw.request("/tenants", {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Boutique Horloge" }),
  });
  expect(created.status).toBe(200);
  const { tenant } = (await created.json()) as { tenant: { createdAt: string } };
  return new Date(tenant.createdAt).getTime() - before;
}

beforeAll(async () => {
  writeFileSync(file, String(3 * MINUTE));
  gw = await startTestGateway({ TEST_CLOCK_OFFSET_FILE: file });
});

afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("TEST_CLOCK_OFFSET_FILE", () => {
  it("runs the gateway's clock ahead by the file's milliseconds, and jumps back when the file says 0", async () => {
    const admin = await gw.adminToken();
    const ahead = await aheadBy(admin);
    expect(ahead).toBeGreaterThanOrEqual(3 * MINUTE);
    expect(ahead).toBeLessThan(4 * MINUTE);

    writeFileSync(file, "0");
    const back = await waitUntil(async () => ((await aheadBy(admin)) < MINUTE ? true : undefined), { what: "the clock to jump back", timeoutMs: 20_000 });
    expect(back).toBe(true);
  });

  it("keeps the machine's clock when the file is missing or holds no number", async () => {
    writeFileSync(file, "soon");
    const admin = await gw.adminToken();
    await waitUntil(async () => ((await aheadBy(admin)) < MINUTE ? true : undefined), { what: "the clock to be the machine's", timeoutMs: 20_000 });
    rmSync(file);
    await Bun.sleep(300);
    expect(await aheadBy(admin)).toBeLessThan(MINUTE);
  });
});
