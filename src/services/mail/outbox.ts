/**
 * The e-mail outbox (issue 30): a message is a row written in the same transaction as what it tells of (an
 * invitation, a password reset), then sent by the `mail` queue's job. The body holds a single-use link, so it
 * is sealed at rest and cleared once sent. A job lost (Redis flushed, a restart of the in-process driver) is
 * enqueued again by the sweeper.
 */
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.ts";
import { enqueueEmail } from "../../jobs/queues.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import type { MailTransport } from "./transport.ts";

/** Attempts before a message is given up (`failed`). */
export const MAX_EMAIL_ATTEMPTS = 8;
/** A pending message older than this with no live job is enqueued again by the sweeper. */
const SWEEP_AFTER_MS = 60_000;

const sealContext = (id: string) => ({ tenantId: "outbox", field: `email.${id}` });

/** Writes one message to the outbox inside the caller's transaction; call {@link enqueueEmail} after commit. */
export async function writeEmail(
  deps: Pick<Deps, "keyring" | "now">,
  tx: Kysely<Database> | Transaction<Database>,
  email: { to: string; subject: string; text: string },
): Promise<string> {
  const id = newId("eml");
  await tx
    .insertInto("outbox_emails")
    .values({ id, recipient: email.to, subject: email.subject, sealed_body: await deps.keyring.seal(email.text, sealContext(id)), created_at: deps.now() })
    .execute();
  return id;
}

/**
 * Sends one outbox message, once: a message already sent (or given up) is left alone. A failure is counted
 * and rethrown (the job retries); at the last attempt the message is marked `failed`.
 */
export async function sendOutboxEmail(deps: Pick<Deps, "db" | "keyring" | "now" | "logger">, transport: MailTransport, id: string): Promise<void> {
  const row = await deps.db.selectFrom("outbox_emails").selectAll().where("id", "=", id).executeTakeFirst();
  if (row?.status !== "pending" || row.sealed_body === null) return;
  const text = await deps.keyring.open(row.sealed_body, sealContext(id));
  try {
    await transport.send({ id, to: row.recipient, subject: row.subject, text });
  } catch (err) {
    const attempts = row.attempts + 1;
    const failed = attempts >= MAX_EMAIL_ATTEMPTS;
    // The error's own words only (nodemailer's say what the server answered): never the message's body.
    const message = err instanceof Error ? err.message.slice(0, 500) : "send failed";
    await deps.db
      .updateTable("outbox_emails")
      .set({ attempts, last_error: message, ...(failed ? { status: "failed", sealed_body: null } : {}) })
      .where("id", "=", id)
      .execute();
    if (failed) {
      deps.logger.error({ emailId: id, attempts }, "e-mail given up");
      return;
    }
    throw err;
  }
  await deps.db
    .updateTable("outbox_emails")
    .set((eb) => ({ status: "sent", sealed_body: null, sent_at: deps.now(), attempts: eb("attempts", "+", 1) }))
    .where("id", "=", id)
    .execute();
}

/** Enqueues again the pending messages whose job went missing; the job id makes a live one a no-op. */
export async function sweepOutbox(deps: Pick<Deps, "db" | "queue" | "logger" | "now">): Promise<number> {
  const rows = await deps.db
    .selectFrom("outbox_emails")
    .select("id")
    .where("status", "=", "pending")
    .where("created_at", "<", new Date(deps.now().getTime() - SWEEP_AFTER_MS))
    .orderBy("created_at")
    .limit(500)
    .execute();
  for (const row of rows) await enqueueEmail(deps, row.id);
  return rows.length;
}
