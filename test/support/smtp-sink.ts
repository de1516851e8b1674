/**
 * A local SMTP sink for tests (`smtp-server`, on 127.0.0.1 and a free port): it accepts every message and keeps
 * it, so a test reads what the gateway e-mailed — its recipient, subject and text (quoted-printable undone).
 */
import { SMTPServer } from "smtp-server";

export interface SunkEmail {
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  messages: SunkEmail[];
  /** Messages to one address. */
  to(address: string): SunkEmail[];
  close(): Promise<void>;
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

/** Parses the one text part nodemailer writes for a `text` message. */
function parse(raw: string, to: string[]): SunkEmail {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1] ?? "";
  const encoding = header("Content-Transfer-Encoding").toLowerCase();
  const text = encoding === "quoted-printable" ? decodeQuotedPrintable(body) : encoding === "base64" ? Buffer.from(body, "base64").toString("utf8") : body;
  return { to, subject: header("Subject"), text: text.replace(/\r\n/g, "\n").trimEnd(), raw };
}

/** Starts a sink; `close()` stops it. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SunkEmail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        messages.push(
          parse(
            Buffer.concat(chunks).toString("latin1"),
            session.envelope.rcptTo.map((r) => r.address),
          ),
        );
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.server.address() as { port: number }).port));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((m) => m.to.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
