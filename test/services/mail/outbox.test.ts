/**
 * The e-mail outbox (issue 30): a message is sealed at rest, sent once, retried on failure and given up after
 * its last attempt with its body cleared; a pending message whose job was lost is enqueued again by the sweeper.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { MAIL_QUEUE } from "../../../src/jobs/queues.ts";
import { MAX_EMAIL_ATTEMPTS, sendOutboxEmail, sweepOutbox, writeEmail } from "../../../src/services/mail/outbox.ts";
import type { MailTransport, OutgoingEmail } from "../../../src/services/mail/transport.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let clockMs = Date.now();

beforeAll(async () => {
  tg = await startTestGateway({}, { now: () => new Date(clockMs) });
}, 60_000);

afterAll(() => tg?.close(), 30_000);

const recording = (fail: boolean) => {
  const sent: OutgoingEmail[] = [];
  const transport: MailTransport = {
    async send(email) {
      if (fail) throw new Error("421 try again later");
      sent.push(email);
    },
    close() {},
  };
  return { sent, transport };
};

describe("the e-mail outbox", () => {
  it("keeps the body sealed, sends it once and clears it", async () => {
    const deps = tg.gateway.deps;
    const id = await writeEmail(deps, deps.db, { to: "awa@example.com", subject: "Hello", text: "Open http://localhost/dashboard/#/invitation/inv_secret" });
    const row = await deps.db.selectFrom("outbox_emails").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.sealed_body).not.toContain("inv_secret");
    const { sent, transport } = recording(false);
    await sendOutboxEmail(deps, transport, id);
    await sendOutboxEmail(deps, transport, id);
    expect(sent).toEqual([{ id, to: "awa@example.com", subject: "Hello", text: "Open http://localhost/dashboard/#/invitation/inv_secret" }]);
    expect(await deps.db.selectFrom("outbox_emails").select(["status", "sealed_body", "attempts"]).where("id", "=", id).executeTakeFirstOrThrow()).toEqual({
      status: "sent",
      sealed_body: null,
      attempts: 1,
    });
  });

  it("counts failed attempts and gives the message up after the last, its body cleared", async () => {
    const deps = tg.gateway.deps;
    const id = await writeEmail(deps, deps.db, { to: "kofi@example.com", subject: "Hello", text: "a link" });
    const { transport } = recording(true);
    for (let i = 1; i < MAX_EMAIL_ATTEMPTS; i++) await expect(sendOutboxEmail(deps, transport, id)).rejects.toThrow("421 try again later");
    await sendOutboxEmail(deps, transport, id);
    expect(
      await deps.db.selectFrom("outbox_emails").select(["status", "sealed_body", "attempts", "last_error"]).where("id", "=", id).executeTakeFirstOrThrow(),
    ).toEqual({
      status: "failed",
      sealed_body: null,
      attempts: MAX_EMAIL_ATTEMPTS,
      last_error: "421 try again later",
    });
  });

  it("enqueues again a pending message whose job was lost, a minute after it was written", async () => {
    const deps = tg.gateway.deps;
    const id = await writeEmail(deps, deps.db, { to: "lost@example.com", subject: "Hello", text: "a link" });
    expect(await deps.queue.has(MAIL_QUEUE, id)).toBe(false);
    await sweepOutbox(deps);
    expect(await deps.queue.has(MAIL_QUEUE, id)).toBe(false);
    clockMs += 61_000;
    await sweepOutbox(deps);
    expect(await deps.queue.has(MAIL_QUEUE, id)).toBe(true);
  });
});
