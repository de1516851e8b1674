import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";

// docs/verifying-webhooks.md's example receiver, run as written (its one ```ts block) against a real gateway:
// the page cannot drift from what the gateway sends.
const repo = join(import.meta.dir, "../../..");
const page = readFileSync(join(repo, "docs/verifying-webhooks.md"), "utf8");
const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

let tg: TestGateway;
let token: string;
let receiver: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;
let output = "";

const send = (method: string, path: string, body?: unknown) =>
  tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

interface DeliveryPage {
  data: { id: string; eventId: string; state: string; attempts: { status: number | null }[] }[];
}

const deliveryOf = (endpointId: string, eventId: string, attempts: number) =>
  waitUntil(
    async () => {
      const log = (await (await send("GET", `/webhooks/${endpointId}/deliveries`)).json()) as DeliveryPage;
      const delivery = log.data.find((d) => d.eventId === eventId);
      return delivery?.state === "succeeded" && delivery.attempts.length === attempts ? delivery : undefined;
    },
    { what: `the delivery of ${eventId} done after ${attempts} attempt(s)` },
  );

beforeAll(async () => {
  tg = await startTestGateway({ WEBHOOK_RETRY_SCHEDULE: "100ms,100ms" });
  await tg.gateway.start({ http: false, workers: true });
  token = await tg.tenantToken(await tg.insertTenant());
}, 60_000);
afterAll(async () => {
  receiver?.kill();
  await receiver?.exited;
  await tg.close();
}, 30_000);

describe("docs/verifying-webhooks.md", () => {
  it("has one TypeScript example, the receiver", () => {
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toContain('from "standardwebhooks"');
  });

  it("its receiver verifies the gateway's deliveries, skips a repeat, refuses a forgery, and still verifies after a rotation with the old secret", async () => {
    const port = await freePort();
    const endpoint = (await (await send("POST", "/webhooks", { url: `http://127.0.0.1:${port}/passerelle/webhooks` })).json()) as {
      id: string;
      secret: string;
    };
    expect(endpoint.secret).toStartWith("whsec_");

    // Written under node_modules so that `standardwebhooks` resolves from the project's dependencies.
    const dir = join(repo, "node_modules/.cache/passerelle-doc-examples");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `verifying-webhooks-${process.pid}.ts`);
    writeFileSync(file, blocks[0]!);
    receiver = Bun.spawn(["bun", file], {
      env: { PATH: process.env.PATH ?? "", PORT: String(port), PASSERELLE_WEBHOOK_SECRET: endpoint.secret },
      stdout: "pipe",
      stderr: "inherit",
    });
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of receiver!.stdout) output += decoder.decode(chunk, { stream: true });
    })();
    await waitUntil(() => output.includes(`listening on ${port}`), { what: "the example receiver to listen" });

    // A test event: verified, handed on once, answered 204.
    const { eventId } = (await (await send("POST", `/webhooks/${endpoint.id}/test`)).json()) as { eventId: string };
    const delivery = await deliveryOf(endpoint.id, eventId, 1);
    expect(delivery.attempts[0]!.status).toBe(204);
    expect(output).toContain(`received webhook.test ${eventId}`);

    // The same event again (a retry by hand): acknowledged, not handed on twice.
    expect((await send("POST", `/webhooks/deliveries/${delivery.id}/retry`)).status).toBe(200);
    const again = await deliveryOf(endpoint.id, eventId, 2);
    expect(again.attempts[1]!.status).toBe(204);
    expect(output.split(`received webhook.test ${eventId}`).length - 1).toBe(1);

    // A request not signed with the secret: 400, and nothing handed on.
    const forged = JSON.stringify({ id: "evt_forged", type: "payment.completed", data: {} });
    const answer = await fetch(`http://127.0.0.1:${port}/passerelle/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": "evt_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,bm90IGEgc2lnbmF0dXJl",
      },
      body: forged,
    });
    expect(answer.status).toBe(400);
    expect(output).not.toContain("evt_forged");

    // A rotation: for 24 hours the old secret still signs, so the receiver, not yet redeployed, keeps verifying.
    const rotated = (await (await send("POST", `/webhooks/${endpoint.id}/rotate-secret`)).json()) as { secret: string };
    expect(rotated.secret).not.toBe(endpoint.secret);
    const after = (await (await send("POST", `/webhooks/${endpoint.id}/test`)).json()) as { eventId: string };
    expect((await deliveryOf(endpoint.id, after.eventId, 1)).attempts[0]!.status).toBe(204);
    expect(output).toContain(`received webhook.test ${after.eventId}`);
  }, 60_000);
});
