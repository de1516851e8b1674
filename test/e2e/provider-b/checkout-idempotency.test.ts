/**
 * `Idempotency-Key` on `POST /providerB/checkout` when provider B fails (issue 13, point 4; contract §9).
 * A checkout is recorded only after provider B answered, and an invoice whose URL never reached anyone
 * cannot be paid: a 502/504 here leaves no payment that could still charge, names none, and is not
 * stored, so the same key runs again — unlike a direct payment whose USSD push may be on the phone
 * (test/e2e/provider-a/idempotency.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { TestDatabase } from "../../support/db.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";

const TIMEOUT_MS = 1_500;

/** What happens to the next invoice creation: answered too late (provider B made it), or a 500. */
let nextCreate: "late" | "fail5xx" | undefined;
let creates = 0;

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let tenantId: string;

const checkoutBody = (description: string) => ({
  amount: 5000,
  description,
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/panier",
  customer: { name: "Awa Diop" },
});

async function checkout(description: string, key: string): Promise<{ status: number; body: Record<string, any>; replayed: string | null }> {
  const response = await gw.call("POST", "/providerB/checkout", tenantId, checkoutBody(description), { "idempotency-key": key });
  return { status: response.status, body: (await response.json()) as Record<string, any>, replayed: response.headers.get("idempotent-replayed") };
}

beforeAll(async () => {
  sim = await startSimulator({
    async around(request, next) {
      if (!new URL(request.url).pathname.endsWith("/checkout-invoice/create")) return next(request);
      creates++;
      const fault = nextCreate;
      nextCreate = undefined;
      if (fault === "fail5xx") return Response.json({ message: "Server error" }, { status: 500 });
      const answer = await next(request);
      if (fault === "late") await Bun.sleep(TIMEOUT_MS * 3);
      return answer;
    },
  });
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database, workers: false, env: { PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) } });
  ({ tenantId } = await gw.tenantWithAccount(sim));
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
  await database?.dispose();
});

describe("POST /providerB/checkout with an Idempotency-Key when provider B fails", () => {
  for (const fault of ["late", "fail5xx"] as const) {
    const expected = fault === "late" ? { status: 504, code: "provider_timeout" } : { status: 502, code: "provider_error" };
    it(`${expected.status} (${fault === "late" ? "the invoice made, its answer too late" : "a 5xx"}): names no payment, is not stored, and the same key runs again`, async () => {
      const description = `Commande ${fault} ${crypto.randomUUID().slice(0, 8)}`;
      const key = `key-${crypto.randomUUID()}`;
      const createsBefore = creates;
      nextCreate = fault;
      const first = await checkout(description, key);
      expect(first.status).toBe(expected.status);
      expect(first.body.code).toBe(expected.code);
      expect(first.body).not.toHaveProperty("paymentId");
      expect(await gw.gateway.deps.db.selectFrom("payments").select("id").where("description", "=", description).execute()).toHaveLength(0);

      const retry = await checkout(description, key);
      expect(retry.status).toBe(200);
      expect(retry.replayed).toBeNull();
      expect(retry.body).toMatchObject({ response_code: "00" });
      const replay = await checkout(description, key);
      expect(replay.replayed).toBe("true");
      expect(replay.body).toEqual(retry.body);
      expect(creates - createsBefore).toBe(2);
    });
  }
});
