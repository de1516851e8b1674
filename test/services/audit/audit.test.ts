/**
 * The money invariants (issue 24 point 5): each is broken by SQL on a database of its own and the audit
 * names it; `passerelle audit` prints one line per violation and exits 1, or says there is none and exits 0.
 * On the test's driver (PGlite or PostgreSQL); the command runs against the same database (a PGlite data
 * directory, or the real server's database by URL).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql, type Kysely } from "kysely";
import { openDatabase, type DatabaseHandle } from "../../../src/db/connect.ts";
import { migrateToLatest } from "../../../src/db/migrate.ts";
import type { Database } from "../../../src/db/schema.ts";
import { audit, INVARIANTS } from "../../../src/services/audit/audit.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import { createTestDatabase, insertDirectPayment, type TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { startRigGateway, startSimulator } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import type { Registry } from "prom-client";

const ROOT = join(import.meta.dir, "..", "..", "..");

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  // This file breaks every invariant on purpose.
  database.audited = false;
}, 60_000);

afterAll(() => database?.dispose());

async function tenant(db: Kysely<Database>, id: string): Promise<void> {
  await db.insertInto("tenants").values({ id, name: id, store_name: id }).execute();
}

/** A ledger leg, written as the gateway would not. */
async function leg(
  db: Kysely<Database>,
  tenantId: string,
  journal: string,
  account: string,
  amount: number,
  holding: string,
  subject = journal.split(".")[0]!,
) {
  await db
    .insertInto("ledger_entries")
    .values({
      tenant_id: tenantId,
      environment: "sandbox",
      currency: "XOF",
      journal,
      account,
      amount,
      kind: subject.startsWith("pay_") ? "payment" : "payout",
      subject_id: subject,
      provider: holding.split(":")[1]!,
      holding,
    })
    .execute();
}

/** A payout row of `tenantId` on the pooled provider A account. */
async function payout(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  fields: { state?: "pending" | "sent" | "failed"; amount?: number; paymentId?: string } = {},
) {
  await db
    .insertInto("payouts")
    .values({
      id,
      tenant_id: tenantId,
      environment: "sandbox",
      purpose: fields.paymentId ? "refund" : "payout",
      payment_id: fields.paymentId ?? null,
      provider: "providerA",
      provider_account: "service",
      operator: "mtn",
      country: "bj",
      phone_number: "97000001",
      recipient: {},
      amount: fields.amount ?? 100,
      currency: "XOF",
      description: "test",
      state: fields.state ?? "pending",
    })
    .execute();
}

describe("the audit", () => {
  it("finds nothing on a sound ledger, and names each invariant broken by SQL", async () => {
    const { db } = database;
    await tenant(db, "ten_sound");
    // A paid payment credited by the trigger, a payout reserved and sent: sound.
    const paid = await insertDirectPayment(db, "ten_sound", 1, { state: "succeeded", amount: 900 });
    await payout(db, "ten_sound", "po_sound", { state: "sent", amount: 400 });
    await leg(db, "ten_sound", "po_sound.reserved", "available", -400, "pooled:providerA");
    await leg(db, "ten_sound", "po_sound.reserved", "pending", 400, "pooled:providerA");
    await leg(db, "ten_sound", "po_sound.sent", "pending", -400, "pooled:providerA");
    await leg(db, "ten_sound", "po_sound.sent", "provider:providerA", 400, "pooled:providerA");
    expect(paid.state).toBe("succeeded");
    expect(await audit({ db })).toEqual([]);

    await tenant(db, "ten_bad");
    // journal_unbalanced: one leg alone; and a journal split across two holdings.
    await leg(db, "ten_bad", "po_lone.reserved", "available", -5, "pooled:providerA");
    await leg(db, "ten_bad", "po_split.reserved", "available", -7, "pooled:providerA");
    await leg(db, "ten_bad", "po_split.reserved", "pending", 7, "own:providerB");
    // tenant_pooled_negative and pooled_account_negative: 2000 out of the pooled account, 700 in.
    await payout(db, "ten_bad", "po_over", { state: "sent", amount: 2000 });
    await leg(db, "ten_bad", "po_over.reserved", "available", -2000, "pooled:providerA");
    await leg(db, "ten_bad", "po_over.reserved", "pending", 2000, "pooled:providerA");
    await leg(db, "ten_bad", "po_over.sent", "pending", -2000, "pooled:providerA");
    await leg(db, "ten_bad", "po_over.sent", "provider:providerA", 2000, "pooled:providerA");
    // refunds_exceed_payment: 600 refunded of a 500 payment.
    const refunded = await insertDirectPayment(db, "ten_bad", 2, { state: "succeeded", amount: 500 });
    await payout(db, "ten_bad", "rf_over", { state: "pending", amount: 600, paymentId: refunded.id });
    // collection_repeated: a paid payment whose credit is missing; two providers pushed for one payment.
    const uncredited = await insertDirectPayment(db, "ten_bad", 3, { state: "pending", amount: 300 });
    await sql`alter table payments disable trigger payments_ledger_update`.execute(db);
    await db.updateTable("payments").set({ state: "succeeded" }).where("id", "=", uncredited.id).execute();
    await sql`alter table payments enable trigger payments_ledger_update`.execute(db);
    for (const attempt of [1, 2])
      await db
        .insertInto("payment_attempts")
        .values({
          payment_id: uncredited.id,
          attempt,
          provider: attempt === 1 ? "providerA" : "providerB",
          provider_account: "service",
          credential_version: null,
          outcome: "started",
          provider_transaction_id: null,
          error: null,
          reason: "test",
        })
        .execute();
    // state_moved_backwards: a payment collected then failed; a payout sent then back to pending.
    const backwards = await insertDirectPayment(db, "ten_bad", 4, { state: "succeeded", amount: 200 });
    await sql`alter table payments disable trigger payments_ledger_update`.execute(db);
    await db.updateTable("payments").set({ state: "failed" }).where("id", "=", backwards.id).execute();
    await sql`alter table payments enable trigger payments_ledger_update`.execute(db);
    await payout(db, "ten_bad", "po_back", { state: "pending", amount: 50 });
    await leg(db, "ten_bad", "po_back.sent", "pending", -50, "own:providerB");
    await leg(db, "ten_bad", "po_back.sent", "provider:providerB", 50, "own:providerB");

    // collection_repeated: one Idempotency-Key of a tenant that answered two paid payments (by `id` on one path,
    // by `paymentId` on another).
    const paidTwiceA = await insertDirectPayment(db, "ten_bad", 5, { state: "succeeded", amount: 100 });
    const paidTwiceB = await insertDirectPayment(db, "ten_bad", 6, { state: "succeeded", amount: 100 });
    for (const [path, body] of [
      ["/payments", { id: paidTwiceA.id }],
      ["/checkouts", { paymentId: paidTwiceB.id }],
    ] as const)
      await db
        .insertInto("idempotency_keys")
        .values({
          tenant_id: "ten_bad",
          environment: "sandbox",
          method: "POST",
          path,
          key: "same-key",
          request_hash: "h",
          state: "done",
          locked_until: new Date(),
          expires_at: new Date(Date.now() + 86_400_000),
          response_status: 201,
          response_body: body,
        })
        .execute();
    // state_moved_backwards: a refund released (failed) by its ledger yet sent.
    await payout(db, "ten_bad", "rf_released", { state: "sent", amount: 40, paymentId: paidTwiceA.id });
    await leg(db, "ten_bad", "rf_released.released", "pending", -40, "pooled:providerA");
    await leg(db, "ten_bad", "rf_released.released", "available", 40, "pooled:providerA");

    const found = await audit({ db });
    const by = (invariant: string) => found.filter((v) => v.invariant === invariant).map((v) => v.subject);
    expect(by("journal_unbalanced").sort()).toEqual(["po_lone.reserved", "po_split.reserved"]);
    expect(by("tenant_pooled_negative")).toEqual(["ten_bad pooled:providerA XOF"]);
    expect(by("refunds_exceed_payment")).toEqual([refunded.id]);
    expect(by("collection_repeated").sort()).toEqual([uncredited.id, uncredited.id, "ten_bad same-key"].sort());
    expect(by("state_moved_backwards").sort()).toEqual([backwards.id, "po_back", "rf_released"].sort());
    expect(found.every((v) => v.environment === "sandbox" && v.message.length > 0)).toBe(true);
    expect(found.filter((v) => !INVARIANTS.includes(v.invariant))).toEqual([]);
    // The pooled account as a whole: ten_sound's 500 and ten_bad's 700 in, less ten_bad's 2012 out.
    expect(by("pooled_account_negative")).toEqual(["pooled:providerA XOF"]);
    expect(await audit({ db }, { environment: "live" })).toEqual([]);
  });
});

describe("passerelle audit", () => {
  let handle: DatabaseHandle;
  let env: Record<string, string>;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (process.env.DATABASE_URL) {
      const named = await createNamedServerDatabase(process.env.DATABASE_URL);
      // The command's violations are this file's doing.
      named.audited = false;
      handle = await openDatabase({ driver: "postgres", url: named.url, max: 2 });
      env = { DATABASE_URL: named.url };
      dispose = async () => {
        await handle.close();
        await named.dispose();
      };
    } else {
      const dir = mkdtempSync(join(tmpdir(), "passerelle-audit-"));
      handle = await openDatabase({ driver: "pglite", dataDir: join(dir, "pglite") });
      await migrateToLatest(handle.db);
      env = { DATA_DIR: dir };
      dispose = async () => {
        await handle.close().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      };
    }
  }, 60_000);

  afterAll(() => dispose?.());

  async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const child = Bun.spawn(["bun", join(ROOT, "src/main.ts"), "audit", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...TEST_ENV, LOG_LEVEL: "error", REDIS_URL: "", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { code, stdout, stderr };
  }

  it("exits 0 on a sound database, and 1 with one line per violation", async () => {
    // A PGlite data directory is one process's at a time: the command opens it while the test has it closed.
    if (!process.env.DATABASE_URL) await handle.close();
    const clean = await run("--no-providers");
    expect(clean).toMatchObject({ code: 0, stdout: "audit: no violation\n" });

    if (!process.env.DATABASE_URL) handle = await openDatabase({ driver: "pglite", dataDir: join(env.DATA_DIR!, "pglite") });
    await tenant(handle.db, "ten_cli");
    await leg(handle.db, "ten_cli", "po_cli.reserved", "available", -5, "pooled:providerA");
    if (!process.env.DATABASE_URL) await handle.close();

    const broken = await run("--no-providers", "--env", "sandbox");
    expect(broken.code).toBe(1);
    const lines = broken.stdout.trim().split("\n");
    expect(lines).toContain(
      "sandbox journal_unbalanced po_cli.reserved: journal po_cli.reserved sums to -5 over 1 tenant(s), 1 currency(ies) and 1 holding(s)",
    );
    expect(lines.every((line) => line.startsWith("sandbox "))).toBe(true);
    expect(broken.stderr).toContain("audit found");
    expect((await run("--env", "staging")).code).toBe(2);
    expect((await run("--no-providers", "--env", "live")).code).toBe(0);
  }, 180_000);
});

describe("the periodic audit", () => {
  it("runs with the sweeper and sets the invariant and pooled-account gauges", async () => {
    const sim = await startSimulator();
    const own = await createTestDatabase();
    own.audited = false;
    const gw = await startRigGateway({ sim, database: own, workerOptions: { sweepEveryMs: 100 }, env: { AUDIT_EVERY_MS: "1" } });
    try {
      await tenant(own.db, "ten_gauge");
      await leg(own.db, "ten_gauge", "po_gauge.reserved", "available", -5, "pooled:providerA");
      await leg(own.db, "ten_gauge", "po_gauge.reserved", "pending", 2, "pooled:providerA");
      const registry = (gw.gateway.deps.metrics as unknown as { registry: Registry }).registry;
      const exposition = await waitUntil(
        async () => {
          const text = await registry.metrics();
          return text.includes('passerelle_invariant_violations{invariant="journal_unbalanced",environment="sandbox"} 1') ? text : undefined;
        },
        { what: "the periodic audit's gauges", timeoutMs: 10_000, intervalMs: 100 },
      );
      expect(exposition).toContain('passerelle_invariant_violations{invariant="refunds_exceed_payment",environment="sandbox"} 0');
      expect(exposition).toContain('passerelle_invariant_violations{invariant="pooled_account_negative",environment="sandbox"} 1');
      // The pooled account holds −3 in the ledger; the provider's balance could not be read (no provider A here): no difference.
      expect(exposition).toContain('passerelle_pooled_account_held{provider="providerA",environment="sandbox",currency="XOF"} -3');
      expect(gw.logs.some((line) => line.invariant === "journal_unbalanced" && line.level === 40)).toBe(true);
    } finally {
      await gw.close();
      await sim.stop();
      await own.dispose();
    }
  }, 30_000);
});
