/**
 * People in tests (issue 30): a person invited by the operator and joined through the e-mailed link (read from
 * the SMTP sink), and calls made as a browser would, with the session cookie and its CSRF token.
 */
import { expect } from "bun:test";
import type { SmtpSink } from "./smtp-sink.ts";
import { waitUntil } from "./wait.ts";

/** The token of the newest e-mailed link to a page of the dashboard, once `count` such e-mails arrived. */
export async function linkTokenTo(sink: SmtpSink, address: string, page: "invitation" | "reset-password", count = 1): Promise<string> {
  const mails = await waitUntil(
    () => {
      const found = sink.to(address).filter((m) => m.text.includes(`#/${page}/`));
      return found.length >= count ? found : undefined;
    },
    { what: `e-mail ${count} to ${address}`, timeoutMs: 10_000 },
  );
  const match = new RegExp(`/dashboard/#/${page}/([A-Za-z0-9_-]+)$`, "m").exec(mails.at(-1)!.text);
  expect(match).not.toBeNull();
  return match![1]!;
}

/** A signed-in browser: its cookie and CSRF token. */
export interface Browser {
  cookie: string;
  csrfToken: string;
  me: { id: string; tenantId: string; role: string; mustEnrol: boolean; twoFactorEnabled: boolean };
}

/** The cookie a sign-in answer set (name=value only, as a browser sends it back). */
export function cookieOf(response: Response): string {
  const set = response.headers.get("set-cookie");
  expect(set).not.toBeNull();
  return set!.split(";")[0]!;
}
