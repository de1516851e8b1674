/**
 * What the permit tests share over real HTTP: a gateway with its database and webhook receiver around a
 * provider B simulator ({@link startPermitRig}), a permit request body, and permits made through the API —
 * pending ({@link createPermit}) or authorised by the customer and learnt by IPN ({@link activePermit}).
 */
import { expect } from "bun:test";
import type { TestDatabase } from "./db.ts";
import { createTestDatabase, startRigGateway, type RigGateway, type RigOptions, type SimulatorServer } from "./provider-b-rig.ts";
import { waitUntil } from "./wait.ts";
import { startReceiver, type WebhookReceiver } from "./webhook-receiver.ts";
import type { Json } from "./json.ts";

/** A valid `POST /providerB/permits` body (a boolean in customData, which must come back a boolean); `over` replaces top-level fields. */
export const permitBody = (over: Json = {}): Json => ({
  customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
  description: "Abonnement mensuel",
  maxAmount: 20_000,
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/annule",
  customData: { plan: "gold", seats: 3, trial: false },
  ...over,
});

/** The customer's (or provider B's) side of a permit at the simulator: `authorize`, `decline`, `expire`, `fail-next`… */
export function permitControl(sim: Pick<SimulatorServer, "url">, token: string, verb: string): Promise<Response> {
  return fetch(`${sim.url}/_sim/permits/${token}/${verb}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
}

/** Creates a permit through the API (expecting 200) and answers its body: pending, with `permitId` and `token`. */
export async function createPermit(gw: RigGateway, tenantId: string, over: Json = {}, headers: Record<string, string> = {}): Promise<Json> {
  const response = await gw.call("POST", "/providerB/permits", tenantId, permitBody(over), headers);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Json;
}

/** Creates a permit through the API and has the customer authorise it; resolves once it is `active`. */
export async function activePermit(
  gw: RigGateway,
  sim: Pick<SimulatorServer, "url">,
  tenantId: string,
  over: Json = {},
): Promise<{ permitId: string; token: string }> {
  const created = await createPermit(gw, tenantId, over, { "idempotency-key": crypto.randomUUID() });
  expect(created.status, JSON.stringify(created)).toBe("pending");
  expect((await permitControl(sim, created.token, "authorize")).status).toBe(200);
  await waitUntil(async () => ((await (await gw.call("GET", `/providerB/permits/${created.permitId}`, tenantId)).json()) as Json).status === "active", {
    what: "the permit to become active",
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  return { permitId: created.permitId, token: created.token };
}

export interface PermitRig<S extends SimulatorServer> {
  sim: S;
  database: TestDatabase;
  receiver: WebhookReceiver;
  gw: RigGateway;
  /** Closes the gateway, then stops the simulator and the receiver and drops the database. */
  stop(): Promise<void>;
}

/**
 * A fresh database, a webhook receiver and a rig gateway (workers on) in front of `sim`, which the rig
 * stops with the rest.
 *
 * @example
 * ```ts
 * beforeAll(async () => void ({ sim, database, gw, receiver } = rig = await startPermitRig({ sim: await startSimulator() })), 60_000);
 * afterAll(() => rig?.stop());
 * ```
 */
export async function startPermitRig<S extends SimulatorServer>(options: Omit<RigOptions, "sim" | "database"> & { sim: S }): Promise<PermitRig<S>> {
  const { sim } = options;
  const database = await createTestDatabase();
  const receiver = await startReceiver();
  const gw = await startRigGateway({ ...options, database });
  return {
    sim,
    database,
    receiver,
    gw,
    async stop() {
      await gw.close();
      await sim.stop();
      await receiver.stop();
      await database.dispose();
    },
  };
}
