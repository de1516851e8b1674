/**
 * Standard Webhooks signatures (contract §6): `webhook-signature: v1,<base64 HMAC-SHA256(secret bytes,
 * "<id>.<timestamp>.<body>")>`, several space-separated while an old secret still signs after a rotation.
 * Secrets are `whsec_` + base64 of the key bytes; a receiver verifies with any Standard Webhooks library.
 */
import { createHmac } from "node:crypto";

const PREFIX = "whsec_";

/** The key bytes of a `whsec_` secret. */
export function signingKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
}

/** The three Standard Webhooks headers for one delivery attempt. */
export function signWebhook(input: { id: string; timestampSeconds: number; body: string; secrets: string[] }): Record<string, string> {
  const content = `${input.id}.${input.timestampSeconds}.${input.body}`;
  const signatures = input.secrets.map((secret) => `v1,${createHmac("sha256", signingKeyBytes(secret)).update(content).digest("base64")}`);
  return {
    "webhook-id": input.id,
    "webhook-timestamp": String(input.timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
