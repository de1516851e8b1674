/**
 * How an outbox e-mail leaves (issue 30): by SMTP through nodemailer when `SMTP_URL` is set; without it, in
 * development and tests, it is written to the log (one `e-mail (no SMTP_URL)` line holding the message, so a
 * developer can follow the link); in production it is not sent and stays in the outbox.
 */
import nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { Config } from "../../config.ts";

/** One message, as the outbox holds it. */
export interface OutgoingEmail {
  id: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailTransport {
  /** Sends one message; rejects when it was not accepted. */
  send(email: OutgoingEmail): Promise<void>;
  close(): void;
}

/** Thrown when no transport may send: production without `SMTP_URL`. */
export class MailNotConfiguredError extends Error {
  override name = "MailNotConfiguredError";
}

/** The transport a configuration asks for. */
export function createMailTransport(config: Pick<Config, "mail" | "nodeEnv">, logger: Pick<Logger, "info">): MailTransport {
  const { smtpUrl, from } = config.mail;
  if (smtpUrl) {
    const smtp = nodemailer.createTransport(smtpUrl, { from });
    return {
      async send(email) {
        // The outbox id as Message-ID: a message sent twice (a retry after a lost answer) is recognisable as one.
        await smtp.sendMail({ to: email.to, subject: email.subject, text: email.text, messageId: `<${email.id}@passerelle>` });
      },
      close: () => smtp.close(),
    };
  }
  return {
    async send(email) {
      if (config.nodeEnv === "production") throw new MailNotConfiguredError("SMTP_URL is not set: the e-mail stays in the outbox");
      logger.info({ emailId: email.id, to: email.to, subject: email.subject, text: email.text }, "e-mail (no SMTP_URL)");
    },
    close() {},
  };
}
