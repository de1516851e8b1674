/**
 * `POST /providerB/webhook/disburse` — provider B's disbursement callback (the `callback_url` of every get-invoice),
 * its inbound route. Provider B first posts an EMPTY body here when the disbursement is recorded (and
 * refuses get-invoice unless it gets a 2xx): answered 200. A real callback is flat — `status, token,
 * withdraw_mode, amount, updated_at, disburse_id, transaction_id, disburse_tx_id, hash` — as a form, a
 * `data=<json>` field or JSON. Its `hash` (SHA-512 of the master key, as in the IPN) is sometimes left out:
 * when present it must be the one of the account version the payout was made with (401 otherwise); when
 * absent the callback is still followed, since the gateway's intake (`services/ipn/intake.ts`) reads the
 * payout again with check-status and never trusts the body. An id that is not one of our provider B payouts
 * is answered 200 like a known one, so provider B stops retrying. This route only reads the request and
 * describes it; finding the payout and its account version is the intake's.
 */
import { z } from "zod";
import { UnauthorizedError, UnsupportedMediaTypeError } from "../../errors.ts";
import { readTextBody } from "../../http/body-limit.ts";
import { errorBodySchema } from "../../error-body.ts";
import type { InboundRoute, NoticeAuthentication } from "../provider.ts";
import { openProviderBIpnHash, type ProviderBContext } from "./accounts.ts";
import { DISBURSE_CALLBACK_PATH } from "./disburse.ts";
import { IPN_CONTENT_TYPES, type IpnData, IpnBodyError, parseIpnBody, verifyIpnHashWith } from "./ipn.ts";

const received = z.object({ received: z.literal(true) }).meta({ id: "DisburseCallbackReceived" });

/** The callback's fields, or null for provider B's empty probe. @throws {UnsupportedMediaTypeError} */
async function readCallback(request: Request): Promise<IpnData | null> {
  const text = await readTextBody(request);
  if (text.trim() === "") return null;
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const contentType = IPN_CONTENT_TYPES.find((accepted) => accepted === type);
  if (!contentType) throw new UnsupportedMediaTypeError([...IPN_CONTENT_TYPES]);
  try {
    return parseIpnBody(contentType, text);
  } catch (error) {
    // A body that cannot be read names no payout: nothing to follow.
    if (error instanceof IpnBodyError) return {};
    throw error;
  }
}

/**
 * The callback's hash, when it has one, must be the one of the payout's account version; without one the
 * callback is followed anyway (the intake re-reads). `gone` when that version's credentials are gone.
 */
function hashCheck(context: ProviderBContext, hash: unknown): NoticeAuthentication {
  return async (account) => {
    if (hash === undefined || hash === null || hash === "") return "ok";
    if (account.credentialVersion === null || account.tenantId === null) return "gone";
    const expected = await openProviderBIpnHash(context, { tenantId: account.tenantId, environment: account.environment, version: account.credentialVersion });
    if (expected === null) return "gone";
    if (!verifyIpnHashWith(hash, expected)) throw new UnauthorizedError("The callback's hash does not match the merchant account");
    return "ok";
  };
}

/** Reads one callback and hands it to the gateway's intake. @throws {UnauthorizedError} for a hash that is not the account's. */
async function receiveCallback(context: ProviderBContext, request: Request): Promise<void> {
  const data = await readCallback(request);
  if (data === null) return;
  const payoutId = typeof data.disburse_id === "string" ? data.disburse_id.trim() : "";
  await context.gateway.intake({
    about: "payout",
    provider: "providerB",
    scope: null,
    payoutId: payoutId || null,
    authenticate: hashCheck(context, data.hash),
  });
}

export const providerBDisburseRoute: InboundRoute<ProviderBContext> = {
  method: "POST",
  path: DISBURSE_CALLBACK_PATH,
  async handle(context, request) {
    await receiveCallback(context, request);
    return Response.json({ received: true });
  },
  openapi: {
    post: {
      tags: ["providerB"],
      summary: "Provider B's disbursement callback",
      description:
        "Called by provider B, not by tenants: the `callback_url` of every disbursement (payout or refund). " +
        "An empty body (provider B's check when the disbursement is recorded) is answered 200. " +
        "A callback is flat — `status`, `token`, `withdraw_mode`, `amount`, `updated_at`, `disburse_id`, `transaction_id`, `disburse_tx_id`, `hash` — " +
        "as form fields, a `data=<json>` field or JSON. A `hash` that is not the SHA-512 of the master key of the payout's credential version is refused 401; " +
        "without a hash the callback is still followed. The payout named by `disburse_id` is then read again from provider B (check-status) " +
        "and its answer applied: the body itself is never trusted. An id that names none of our payouts is answered 200.",
      requestBody: {
        required: false,
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.record(z.string(), z.string()).meta({ description: "status, token, disburse_id, amount, hash, … (or data=<json>)" }),
          },
          "application/json": { schema: z.record(z.string(), z.unknown()) },
        },
      },
      responses: {
        "200": { description: "Received (or an empty check)", content: { "application/json": { schema: received } } },
        "401": { description: "The hash does not match the merchant account", content: { "application/json": { schema: errorBodySchema } } },
        "415": { description: "Another content type", content: { "application/json": { schema: errorBodySchema } } },
      },
    },
  },
};
