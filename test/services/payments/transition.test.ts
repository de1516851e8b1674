// The payment's one writer (issue 26 point 5): every state change of a payment goes through
// src/services/payments/transition.ts, which keeps the order of states and records the move's event with it.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Glob } from "bun";
import { ulid } from "ulid";
import type { Payment } from "../../../src/db/schema.ts";
import { lockPaymentRow, type PaymentMove, writeMove, writeMoveIfUnchanged } from "../../../src/services/payments/transition.ts";
import { createTestDatabase, insertDirectPayment, type TestDatabase } from "../../support/db.ts";

let database: TestDatabase;
let nextTransactionId = 7001;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.dispose();
});

async function newPayment(): Promise<Payment> {
  const tenantId = `ten_${ulid()}`;
  await database.db.insertInto("tenants").values({ id: tenantId, name: "Writer", store_name: "Writer Store" }).execute();
  const now = new Date();
  return insertDirectPayment(database.db, tenantId, nextTransactionId++, {
    credential_version: null,
    customer: { phone: "+22997000000", country: "bj" },
    callback_url: null,
    created_at: now,
    updated_at: now,
  });
}

const completed: PaymentMove = {
  changes: { state: "succeeded" },
  event: (after) => ({ type: "payment.completed", data: { paymentId: after.id, state: after.state } }),
};

function moveIn(paymentId: string, move: PaymentMove) {
  return database.db.transaction().execute(async (tx) => writeMove(tx, new Date(), await lockPaymentRow(tx, paymentId), move));
}

async function eventsOf(paymentId: string) {
  return database.db.selectFrom("events").select(["type", "data"]).where("payment_id", "=", paymentId).orderBy("created_at").execute();
}

describe("the payment's one writer", () => {
  it("writes a move with its event, computed from the row as it is after", async () => {
    const payment = await newPayment();
    const written = await moveIn(payment.id, completed);
    expect(written.row.state).toBe("succeeded");
    expect(written.event?.type).toBe("payment.completed");
    expect(await eventsOf(payment.id)).toEqual([{ type: "payment.completed", data: { paymentId: payment.id, state: "succeeded" } }]);
  });

  it("records no event when the state does not move (a provider's word on a pending payment)", async () => {
    const payment = await newPayment();
    const written = await moveIn(payment.id, { changes: { provider_status: "PENDING_USER" }, event: completed.event });
    expect(written.row.provider_status).toBe("PENDING_USER");
    expect(written.event).toBeNull();
    expect(await eventsOf(payment.id)).toEqual([]);
  });

  it("refuses a move the order of states forbids, and writes none of it", async () => {
    const payment = await newPayment();
    await moveIn(payment.id, { changes: { state: "failed", failure_code: "declined" }, event: () => null });
    // failed and cancelled only replace pending; nothing goes back to pending.
    await expect(moveIn(payment.id, { changes: { state: "cancelled" }, event: () => null })).rejects.toThrow("cannot move from failed to cancelled");
    await expect(moveIn(payment.id, { changes: { state: "pending", failure_code: null }, event: () => null })).rejects.toThrow(
      "cannot move from failed to pending",
    );
    const row = await database.db.selectFrom("payments").selectAll().where("id", "=", payment.id).executeTakeFirstOrThrow();
    expect(row.state).toBe("failed");
    expect(row.failure_code).toBe("declined");
    // A late success still wins over failed.
    expect((await moveIn(payment.id, completed)).row.state).toBe("succeeded");
  });

  it("writes a guarded move only while the row holds what its caller read", async () => {
    const payment = await newPayment();
    const first = await database.db.transaction().execute((tx) => writeMoveIfUnchanged(tx, new Date(), payment, completed));
    expect(first?.row.state).toBe("succeeded");
    // The same decision taken on the same (now stale) read writes nothing the second time: one move, one event.
    const second = await database.db.transaction().execute((tx) => writeMoveIfUnchanged(tx, new Date(), payment, completed));
    expect(second).toBeUndefined();
    expect((await eventsOf(payment.id)).map((event) => event.type)).toEqual(["payment.completed"]);
  });

  it("is the only code that sets a payment's state", async () => {
    // Every `updateTable("payments")` outside the writer: its `.set(…)` up to the statement's first `.where(` names no `state`.
    const offenders: string[] = [];
    for await (const path of new Glob("src/**/*.ts").scan(".")) {
      if (path.endsWith("services/payments/transition.ts") || path.includes("/migrations/")) continue;
      const text = await Bun.file(path).text();
      for (const match of text.matchAll(/updateTable\("payments"\)([\s\S]*?)\.where\(/g)) {
        if (/\bstate\s*:/.test(match[1]!)) offenders.push(`${path}: ${match[0].slice(0, 80).replaceAll(/\s+/g, " ")}`);
      }
      if (/update\s+payments\s+set[^;`]*\bstate\s*=/i.test(text)) offenders.push(`${path}: raw SQL`);
    }
    expect(offenders).toEqual([]);
  });
});
