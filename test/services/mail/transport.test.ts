/** How an outbox e-mail leaves without `SMTP_URL`: into the log in development and tests, never in production. */
import { describe, expect, it } from "bun:test";
import { loadConfig } from "../../../src/config.ts";
import { createMailTransport, MailNotConfiguredError } from "../../../src/services/mail/transport.ts";
import { TEST_ENV } from "../../support/gateway.ts";

const email = { id: "eml_01JD3M8Q4ZK2T9XG7B6V5N4C3A", to: "awa@example.com", subject: "Hello", text: "Open http://localhost/dashboard/#/invitation/inv_x" };

describe("createMailTransport without SMTP_URL", () => {
  it("writes the message to the log in development, so a developer can follow its link", async () => {
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const transport = createMailTransport(loadConfig({ ...TEST_ENV, NODE_ENV: "development" }), {
      info: ((fields: Record<string, unknown>, message: string) => lines.push({ fields, message })) as never,
    });
    await transport.send(email);
    expect(lines).toEqual([{ fields: { emailId: email.id, to: email.to, subject: "Hello", text: email.text }, message: "e-mail (no SMTP_URL)" }]);
  });

  it("refuses to send in production, and logs nothing of the message", async () => {
    const lines: unknown[] = [];
    const config = { nodeEnv: "production" as const, mail: { smtpUrl: undefined, from: "Passerelle <no-reply@localhost>" } };
    const transport = createMailTransport(config, { info: ((...args: unknown[]) => lines.push(args)) as never });
    await expect(transport.send(email)).rejects.toBeInstanceOf(MailNotConfiguredError);
    expect(lines).toEqual([]);
  });
});
