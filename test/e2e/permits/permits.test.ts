/**
 * Provider B PERMIT over real HTTP (issue 7, contract §5): `POST/GET /providerB/permits`,
 * `GET/DELETE /providerB/permits/{permit_id}`, the permit IPN at `POST /providerB/webhook`, and the permit
 * events through the webhook engine — against the standalone provider B simulator. Charges are in
 * `permit-charges.test.ts`. Only 127.0.0.1 is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { mintToken } from "../../../src/mod.ts";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";
import { revokePermit } from "../../../src/services/permits/revoke-permit.ts";
import { expectIsolated } from "../../support/isolation.ts";
import type { TestGateway } from "../../support/gateway.ts";
import { createPermit as createPermitOf, permitBody, permitControl, startPermitRig, type PermitRig } from "../../support/permit-rig.ts";
import { addWebhookEndpoint, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import type { WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";
import { validateGatewayResponse } from "../../support/openapi-validation.ts";

let rig: PermitRig<SimulatorServer>;
let sim: SimulatorServer;
let gw: RigGateway;
let receiver: WebhookReceiver;

async function json(response: Response): Promise<Json> {
  const text = await response.text();
  return text ? (JSON.parse(text) as Json) : {};
}

const createPermit = (tenantId: string, over: Json = {}, headers: Record<string, string> = {}) => createPermitOf(gw, tenantId, over, headers);

const simControl = (token: string, verb: string) => permitControl(sim, token, verb);

async function permitOf(tenantId: string, permitId: string): Promise<Json> {
  return json(await gw.call("GET", `/providerB/permits/${permitId}`, tenantId));
}

async function waitForStatus(tenantId: string, permitId: string, status: string): Promise<Json> {
  return waitUntil(
    async () => {
      const permit = await permitOf(tenantId, permitId);
      return permit.status === status ? permit : undefined;
    },
    { what: `permit ${permitId} ${status}`, timeoutMs: 8_000, intervalMs: 50 },
  );
}

async function eventsOfPermit(permitId: string) {
  const rows = await gw.gateway.deps.db.selectFrom("events").selectAll().orderBy("id").execute();
  return rows.filter((row) => row.data.permitId === permitId);
}

/** The permit IPN provider B would send now (its confirm answer, form-encoded). */
async function permitIpnBody(keys: Json, token: string): Promise<string> {
  const confirm = await fetch(`${sim.url}/sandbox-api/v1/permit/confirm/${token}`, {
    headers: { "PAYDUNYA-MASTER-KEY": keys.masterKey, "PAYDUNYA-PRIVATE-KEY": keys.privateKey, "PAYDUNYA-TOKEN": keys.token },
  });
  return encodePhpForm({ data: (await confirm.json()) as Json });
}

/**
 * The rig's gateway in the shape `expectIsolated` takes. Permit routes require `x-tenant-id`, so, like a
 * well-behaved client, a tenant call without it sends the token's own tenant (the helper's own headers win).
 */
function isolationGateway(): TestGateway {
  const tenantOf = (init: RequestInit | undefined): string | undefined => {
    const auth = new Headers(init?.headers).get("authorization") ?? "";
    const payload = auth.split(".")[1];
    return payload ? (JSON.parse(Buffer.from(payload, "base64url").toString()) as Json).tenant_id : undefined;
  };
  return {
    gateway: gw.gateway,
    database: rig.database,
    config: gw.config,
    logs: gw.logs,
    async request(path, init) {
      const headers = new Headers(init?.headers);
      const tenantId = tenantOf(init);
      if (!headers.has("x-tenant-id") && tenantId) headers.set("x-tenant-id", tenantId);
      const request = new Request(`http://localhost${path}`, { ...init, headers });
      const response = await gw.gateway.fetch(request);
      await validateGatewayResponse(request.method, request.url, response);
      return response;
    },
    adminToken: (environment = "sandbox") => mintToken(gw.config.jwt, { sub: "operator", role: "admin", environment }),
    tenantToken: (tenantId, environment = "sandbox") => mintToken(gw.config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment }),
    insertTenant: () => Promise.reject(new Error("not used")),
    close: () => Promise.resolve(),
  };
}

beforeAll(async () => {
  ({ sim, gw, receiver } = rig = await startPermitRig({ sim: await startSimulator(), workerOptions: { sweepEveryMs: 60_000 } }));
}, 60_000);

afterAll(() => rig?.stop());

describe("POST /providerB/permits", () => {
  it("creates the permit at provider B and records it pending with the credential version", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const created = await createPermit(tenantId);
    expect(created.permitId).toMatch(/^prm_[0-9A-Z]{26}$/);
    expect(created.status).toBe("pending");
    expect(created.authorizationUrl).toBe(`${sim.url}/permit/authorize/${created.token}`);
    const permit = await permitOf(tenantId, created.permitId);
    expect(permit).toMatchObject({
      permitId: created.permitId,
      status: "pending",
      token: created.token,
      maxAmount: 20_000,
      currency: "XOF",
      customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
      customData: { plan: "gold", seats: 3, trial: false },
      environment: "sandbox",
      activatedAt: null,
      endedAt: null,
    });
    const row = await gw.gateway.deps.db.selectFrom("permits").selectAll().where("id", "=", created.permitId).executeTakeFirstOrThrow();
    expect(row.credential_version).toBe(1);
    expect(row.provider_account).toMatch(/^pcr_/);
    // Provider B holds the same permit, with our id in its custom data.
    const page = await fetch(created.authorizationUrl);
    expect(await page.text()).toContain("Abonnement mensuel");
  });

  it("replays the first answer for the same Idempotency-Key", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const first = await gw.call("POST", "/providerB/permits", tenantId, permitBody(), { "idempotency-key": "permit-1" });
    const again = await gw.call("POST", "/providerB/permits", tenantId, permitBody(), { "idempotency-key": "permit-1" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
    const rows = await gw.gateway.deps.db.selectFrom("permits").select("id").where("tenant_id", "=", tenantId).execute();
    expect(rows).toHaveLength(1);
  });

  it("rejects invalid bodies with one message per violation", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const response = await gw.call("POST", "/providerB/permits", tenantId, {
      customer: { name: "", phone: "770000000", email: "nope" },
      description: "",
      maxAmount: 0,
      returnUrl: "ftp://x",
      cancelUrl: "not a url",
      customData: { nested: { no: 1 } },
    });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.code).toBe("validation_failed");
    const text = (body.message as string[]).join("\n");
    for (const path of ["customer.name", "customer.phone", "customer.email", "description", "maxAmount", "returnUrl", "cancelUrl", "customData.nested"])
      expect(text, path).toContain(path);
    const missing = await json(await gw.call("POST", "/providerB/permits", tenantId, { description: "x" }));
    expect(missing.message.join("\n")).toContain("customer");
    const tooMuch = await json(await gw.call("POST", "/providerB/permits", tenantId, permitBody({ maxAmount: 10_000_001 })));
    expect(tooMuch).toMatchObject({ statusCode: 400, message: ["maxAmount must not be greater than 10000000"] });
  });

  it("answers 424 naming the environment when the tenant has no provider B credentials there", async () => {
    const created = await fetch(`${gw.url}/tenants`, {
      method: "POST",
      headers: { authorization: `Bearer ${await gw.adminToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Nue" }),
    });
    const { tenant } = (await created.json()) as Json;
    const response = await gw.call("POST", "/providerB/permits", tenant.id, permitBody());
    expect(response.status).toBe(424);
    const body = await json(response);
    expect(body.code).toBe("not_configured");
    expect(body.message).toContain("sandbox");
  });

  it("requires x-tenant-id (400) and a bearer token (401) on every permit route", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await createPermit(tenantId);
    const token = await gw.tenantToken(tenantId);
    const routes: [string, string, unknown?][] = [
      ["POST", "/providerB/permits", permitBody()],
      ["GET", "/providerB/permits"],
      ["GET", `/providerB/permits/${permitId}`],
      ["DELETE", `/providerB/permits/${permitId}`],
      ["POST", `/providerB/permits/${permitId}/charges`, { amount: 100, description: "x" }],
      ["GET", `/providerB/permits/${permitId}/charges`],
    ];
    for (const [method, path, body] of routes) {
      const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
      const send = (extra: Record<string, string>) =>
        fetch(`${gw.url}${path}`, { method, headers: { ...headers, ...extra }, body: body === undefined ? undefined : JSON.stringify(body) });
      const noTenant = await send({ authorization: `Bearer ${token}` });
      expect(noTenant.status, `${method} ${path}`).toBe(400);
      expect((await json(noTenant)).message).toBe("x-tenant-id header is required");
      expect((await send({ "x-tenant-id": tenantId })).status, `${method} ${path}`).toBe(401);
    }
    expect((await permitOf(tenantId, permitId)).status).toBe("pending");
  });
});

describe("GET /providerB/permits", () => {
  it("lists the tenant's permits newest first, filtered by status, in pages", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const a = await createPermit(tenantId);
    const b = await createPermit(tenantId);
    const c = await createPermit(tenantId);
    await simControl(b.token, "authorize");
    await waitForStatus(tenantId, b.permitId, "active");
    void keys;
    const all = await json(await gw.call("GET", "/providerB/permits", tenantId));
    expect(all.data.map((p: Json) => p.permitId)).toEqual([c.permitId, b.permitId, a.permitId]);
    const active = await json(await gw.call("GET", "/providerB/permits?status=active", tenantId));
    expect(active.data.map((p: Json) => p.permitId)).toEqual([b.permitId]);
    const first = await json(await gw.call("GET", "/providerB/permits?limit=2", tenantId));
    expect(first.data).toHaveLength(2);
    const second = await json(await gw.call("GET", `/providerB/permits?limit=2&cursor=${first.nextCursor}`, tenantId));
    expect(second).toEqual({ data: [expect.objectContaining({ permitId: a.permitId })], nextCursor: null });
    expect((await gw.call("GET", "/providerB/permits?status=nope", tenantId)).status).toBe(400);
  });
});

describe("the permit's life: authorise, decline, revoke, expire — with events", () => {
  it("authorising on provider B's side sends the IPN: the permit becomes active and permit.activated is delivered", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const secret = await addWebhookEndpoint(gw, tenantId, `${receiver.url}/activated`);
    const { permitId, token } = await createPermit(tenantId);
    expect((await simControl(token, "authorize")).status).toBe(200);
    const permit = await waitForStatus(tenantId, permitId, "active");
    expect(permit.activatedAt).not.toBeNull();
    expect(permit.paymentMethod).toBeTruthy();
    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/activated"), { what: "permit.activated delivered", timeoutMs: 8_000 });
    const event = new Webhook(secret).verify(receipt.body, receipt.headers) as Json;
    expect(event).toMatchObject({
      type: "permit.activated",
      tenantId,
      environment: "sandbox",
      data: {
        permitId,
        chargeId: null,
        paymentId: null,
        amount: null,
        currency: "XOF",
        status: "active",
        failReason: null,
        customData: { plan: "gold", seats: 3, trial: false },
      },
    });
    const ipn = await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("permit_id", "=", permitId).executeTakeFirstOrThrow();
    expect(ipn).toMatchObject({ subject: "permit", state: "processed", tenant_id: tenantId });
    expect(JSON.stringify(ipn.body)).not.toContain("hash");
  });

  it("declining makes it declined with permit.declined; a later authorise is refused and changes nothing", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(tenantId);
    await simControl(token, "decline");
    const permit = await waitForStatus(tenantId, permitId, "declined");
    expect(permit.endedAt).not.toBeNull();
    expect((await simControl(token, "authorize")).status).toBe(409);
    await Bun.sleep(200);
    expect((await eventsOfPermit(permitId)).map((e) => e.type)).toEqual(["permit.declined"]);
    const charge = await gw.call("POST", `/providerB/permits/${permitId}/charges`, tenantId, { amount: 100, description: "x" });
    expect(charge.status).toBe(409);
    expect((await json(charge)).code).toBe("permit_not_active");
  });

  it("DELETE revokes at provider B and locally, once: permit.revoked, and the revoke IPN changes nothing", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const secret = await addWebhookEndpoint(gw, tenantId, `${receiver.url}/revoked`);
    const { permitId, token } = await createPermit(tenantId);
    await simControl(token, "authorize");
    await waitForStatus(tenantId, permitId, "active");
    const revoked = await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId);
    const body = await json(revoked);
    expect(revoked.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ permitId, status: "revoked" });
    expect(body.endedAt).not.toBeNull();
    // Provider B says revoked too.
    const atProvider = await fetch(`${sim.url}/sandbox-api/v1/permit/confirm/${token}`, {
      headers: { "PAYDUNYA-MASTER-KEY": keys.masterKey, "PAYDUNYA-PRIVATE-KEY": keys.privateKey, "PAYDUNYA-TOKEN": keys.token },
    });
    expect(((await atProvider.json()) as Json).status).toBe("revoked");
    // The revoke IPN arrives and is processed without a second event.
    await waitUntil(
      async () =>
        (await gw.gateway.deps.db.selectFrom("ipn_messages").select("state").where("permit_id", "=", permitId).execute()).filter((r) => r.state === "processed")
          .length === 2,
      { what: "the authorise and revoke IPNs processed", timeoutMs: 8_000 },
    );
    // Again: an ended permit answers as it is.
    expect(await json(await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId))).toMatchObject({ status: "revoked", endedAt: body.endedAt });
    expect((await eventsOfPermit(permitId)).map((e) => e.type)).toEqual(["permit.activated", "permit.revoked"]);
    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/revoked" && r.body.includes("permit.revoked")), {
      what: "permit.revoked",
      timeoutMs: 8_000,
    });
    expect(new Webhook(secret).verify(receipt.body, receipt.headers)).toMatchObject({ type: "permit.revoked", data: { permitId, status: "revoked" } });
    const charge = await gw.call("POST", `/providerB/permits/${permitId}/charges`, tenantId, { amount: 100, description: "x" });
    expect(charge.status).toBe(409);
  });

  it("a permit expired at provider B becomes expired, reported as permit.revoked with status expired", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(tenantId);
    await simControl(token, "authorize");
    await waitForStatus(tenantId, permitId, "active");
    await simControl(token, "expire");
    await waitForStatus(tenantId, permitId, "expired");
    const events = await eventsOfPermit(permitId);
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ["permit.activated", "active"],
      ["permit.revoked", "expired"],
    ]);
    // DELETE of an expired permit answers it as it is, without calling provider B.
    expect(await json(await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId))).toMatchObject({ status: "expired" });
  });

  it("DELETE of a permit provider B already expired learns the end from provider B's confirm", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(tenantId);
    await simControl(token, "authorize");
    await waitForStatus(tenantId, permitId, "active");
    // The expire IPN cannot arrive while the gateway is down: only the revocation's refusal tells us.
    await gw.down();
    try {
      await simControl(token, "expire");
      const answer = await revokePermit(gw.gateway.deps, { tenantId, environment: "sandbox" }, permitId);
      expect(answer.status).toBe("expired");
    } finally {
      gw.up();
    }
    expect((await eventsOfPermit(permitId)).map((e) => [e.type, e.data.status])).toEqual([
      ["permit.activated", "active"],
      ["permit.revoked", "expired"],
    ]);
  });
});

describe("permit IPNs", () => {
  it("the same permit IPN 20 times at once records one activation and one event", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    // The gateway is down while provider B sends its own IPN: only ours arrive.
    const { permitId, token } = await createPermit(tenantId);
    await gw.down();
    await simControl(token, "authorize");
    gw.up();
    const body = await permitIpnBody(keys, token);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${gw.url}/providerB/webhook`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    await waitForStatus(tenantId, permitId, "active");
    await Bun.sleep(300);
    expect((await eventsOfPermit(permitId)).map((e) => e.type)).toEqual(["permit.activated"]);
    const stored = await gw.gateway.deps.db.selectFrom("ipn_messages").select("id").where("permit_id", "=", permitId).execute();
    expect(stored.length).toBeLessThanOrEqual(2); // ours, and provider B's own retry if it got through
  });

  it("refuses a permit IPN with a wrong hash (401) and keeps an unknown token as an orphan", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(tenantId);
    const forged = encodePhpForm({ data: { permit: { token }, status: "active", hash: "0".repeat(128) } });
    const refused = await fetch(`${gw.url}/providerB/webhook`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: forged,
    });
    expect(refused.status).toBe(401);
    expect((await permitOf(tenantId, permitId)).status).toBe("pending");
    const unknown = encodePhpForm({ data: { permit: { token: "test_unknown_permit" }, status: "active", hash: "a".repeat(128) } });
    const kept = await fetch(`${gw.url}/providerB/webhook`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: unknown,
    });
    expect(kept.status).toBe(200);
    const orphan = await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("token", "=", "test_unknown_permit").executeTakeFirstOrThrow();
    expect(orphan).toMatchObject({ subject: "permit", state: "orphan", permit_id: null });
    void keys;
  });

  it("an IPN whose confirm does not match the permit changes nothing and is rejected", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(tenantId);
    // Our record says another max_amount than provider B's: the confirm is refused as a mismatch.
    await gw.gateway.deps.db.updateTable("permits").set({ max_amount: 99 }).where("id", "=", permitId).execute();
    await simControl(token, "authorize");
    const ipn = await waitUntil(
      async () => {
        const row = await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("permit_id", "=", permitId).executeTakeFirst();
        return row?.state === "rejected" ? row : undefined;
      },
      { what: "the rejected IPN", timeoutMs: 8_000 },
    );
    expect(ipn.last_error).toContain("max_amount");
    expect((await permitOf(tenantId, permitId)).status).toBe("pending");
    expect(gw.logs.some((l) => l.alert === "providerB_permit_confirm_mismatch" && l.permitId === permitId)).toBe(true);
  });
});

describe("isolation", () => {
  it("another tenant's or environment's permit is 404 on every permit route", async () => {
    const owner = await gw.tenantWithAccount(sim);
    const other = await gw.tenantWithAccount(sim);
    const admin = await gw.adminToken();
    const patch = await fetch(`${gw.url}/tenants/${owner.tenantId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ liveEnabled: true }),
    });
    expect(patch.status).toBe(200);
    const { permitId, token } = await createPermit(owner.tenantId);
    await simControl(token, "authorize");
    await waitForStatus(owner.tenantId, permitId, "active");
    const charged = await json(await gw.call("POST", `/providerB/permits/${permitId}/charges`, owner.tenantId, { amount: 1000, description: "Mai" }));
    expect(charged.status).toBe("succeeded");
    const object = await permitOf(owner.tenantId, permitId);
    await expectIsolated(isolationGateway(), {
      owner: owner.tenantId,
      other: other.tenantId,
      environment: "sandbox",
      requests: [
        { path: `/providerB/permits/${permitId}` },
        { path: `/providerB/permits/${permitId}/charges` },
        { method: "POST", path: `/providerB/permits/${permitId}/charges`, body: { amount: 1000, description: "Juin" } },
        { method: "DELETE", path: `/providerB/permits/${permitId}` },
      ],
      object: { ...object, charge: charged },
      readBack: `/providerB/permits/${permitId}`,
    });
    // The lists: nothing of the owner's shows to the other tenant.
    const list = await json(await gw.call("GET", "/providerB/permits", other.tenantId));
    expect(list.data).toEqual([]);
    const charges = await json(await gw.call("GET", `/providerB/permits/${permitId}/charges`, owner.tenantId));
    expect(charges.data.map((c: Json) => c.chargeId)).toEqual([charged.chargeId]);
    expect((await permitOf(owner.tenantId, permitId)).status).toBe("active");
  });
});
