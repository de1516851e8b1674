import { afterEach, describe, expect, it } from "bun:test";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";
import { MAX_ORPHANS, ORPHAN_RATE, sweepOrphans } from "../../../src/services/ipn/orphans.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

// An IPN for a token no checkout of ours has (yet): kept as an orphan — at most MAX_ORPHANS at a time,
// for 7 days, at most ORPHAN_RATE — and answered 200 either way so the provider stops retrying.

let tg: TestGateway | undefined;
afterEach(async () => {
  await tg?.close();
  tg = undefined;
}, 30_000);

const hash = "ab".repeat(64);

function postUnknownIpn(gateway: TestGateway, token: string): Promise<Response> {
  return gateway.request("/providerB/webhook", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: encodePhpForm({ data: { response_code: "00", status: "completed", hash, mode: "test", invoice: { token, total_amount: "5000" } } }),
  });
}

async function orphanTokens(gateway: TestGateway): Promise<string[]> {
  const rows = await gateway.gateway.deps.db.selectFrom("ipn_messages").select("token").where("state", "=", "orphan").execute();
  return rows.map((row) => row.token);
}

describe("orphan IPNs", () => {
  it("keeps at most the rate's burst of unknown-token IPNs at once, answering every one 200", async () => {
    tg = await startTestGateway();
    const statuses: number[] = [];
    const started = performance.now();
    const sent = ORPHAN_RATE.burst * 2;
    const gateway = tg;
    const answers = await Promise.all(Array.from({ length: sent }, (_, i) => postUnknownIpn(gateway, `test_rate${String(i).padStart(4, "0")}`)));
    statuses.push(...answers.map((answer) => answer.status));
    const seconds = (performance.now() - started) / 1000;
    expect(new Set(statuses)).toEqual(new Set([200]));
    const kept = await orphanTokens(tg);
    // The burst at once, plus what the bucket refilled while the IPNs were being sent.
    expect(kept.length).toBeGreaterThanOrEqual(ORPHAN_RATE.burst);
    expect(kept.length).toBeLessThanOrEqual(ORPHAN_RATE.burst + Math.ceil(seconds * ORPHAN_RATE.rps) + 1);
  });

  it("stops keeping orphans at the cap, and still answers 200", async () => {
    tg = await startTestGateway();
    const db = tg.gateway.deps.db;
    const expires = new Date(Date.now() + 86_400_000);
    const rows = Array.from({ length: MAX_ORPHANS }, (_, i) => ({
      provider: "providerB" as const,
      subject: "checkout" as const,
      token: `test_capfill${i}`,
      body: {},
      body_digest: `digest-${i}`,
      hash_digest: "x",
      state: "orphan" as const,
      expires_at: expires,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await db
        .insertInto("ipn_messages")
        .values(rows.slice(i, i + 250))
        .execute();
    expect((await postUnknownIpn(tg, "test_overthecap")).status).toBe(200);
    const kept = await orphanTokens(tg);
    expect(kept.length).toBe(MAX_ORPHANS);
    expect(kept).not.toContain("test_overthecap");
    const dropped = tg.logs.find((line) => line.msg === "orphan IPN dropped: over the cap or the rate");
    expect(dropped).toMatchObject({ rateLimited: false });
  }, 30_000);

  it("forgets orphans after 7 days", async () => {
    tg = await startTestGateway();
    expect((await postUnknownIpn(tg, "test_fresh0001")).status).toBe(200);
    const db = tg.gateway.deps.db;
    const row = await db.selectFrom("ipn_messages").select(["id", "expires_at"]).where("token", "=", "test_fresh0001").executeTakeFirstOrThrow();
    expect(row.expires_at!.getTime() - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(await sweepOrphans(tg.gateway.deps)).toMatchObject({ expired: 0 });
    expect(await orphanTokens(tg)).toEqual(["test_fresh0001"]);

    const eightDaysLater = new Date(Date.now() + 8 * 86_400_000);
    expect(await sweepOrphans({ ...tg.gateway.deps, now: () => eightDaysLater })).toMatchObject({ expired: 1 });
    expect(await orphanTokens(tg)).toEqual([]);
  });
});
