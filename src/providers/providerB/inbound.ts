/**
 * `POST /providerB/webhook` — provider B's IPN (spec endpoint 5, contract §5), its inbound route: provider
 * B posts PHP bracket form fields, which no JSON procedure can take. Reads the body once (the body limit,
 * `http/body-limit.ts`), accepts the bracket form, a `data=<json>` field, or JSON (415 otherwise), finds
 * the token it names and hands the notice — its data without the hash, the hash kept opaque — to the
 * gateway's one intake (`context.gateway.intake`, `services/ipn/intake.ts`), unless it holds text no string may hold
 * (`hostile-text.ts`), refused as malformed like a body that cannot be read. No bearer token: the hash,
 * checked through the port's `signatures`, says who sent it.
 */
import { z } from "zod";
import { AppError, BadRequestError, UnsupportedMediaTypeError } from "../../errors.ts";
import { readTextBody } from "../../http/body-limit.ts";
import { errorBodySchema } from "../../error-body.ts";
import { hostileTextMessages } from "../../http/hostile-text.ts";
import type { InboundRoute, IntakeReceipt, JsonValue } from "../provider.ts";
import type { ProviderBContext } from "./accounts.ts";
import { IPN_CONTENT_TYPES, IpnBodyError, ipnSubject, parseIpnBody, withoutHash } from "./ipn.ts";

/** The path provider B posts IPNs to (the `callback_url` of every invoice and permit). */
export const IPN_ROUTE_PATH = "/providerB/webhook";

const received = z.object({ received: z.literal(true) }).meta({ id: "IpnReceived" });

/** Reads, checks and hands over one IPN: what the intake made of it, or the error that refuses it. */
async function receive(context: ProviderBContext, request: Request): Promise<IntakeReceipt> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const contentType = IPN_CONTENT_TYPES.find((accepted) => accepted === type);
  if (!contentType) throw new UnsupportedMediaTypeError([...IPN_CONTENT_TYPES]);
  const text = await readTextBody(request);
  let data: ReturnType<typeof parseIpnBody>;
  try {
    data = parseIpnBody(contentType, text);
  } catch (error) {
    if (error instanceof IpnBodyError) throw new BadRequestError(error.message);
    throw error;
  }
  // A NUL or an unpaired surrogate could not be stored (PostgreSQL refuses both): malformed, like bad JSON.
  const hostile = hostileTextMessages({ data });
  if (hostile.length > 0) throw new BadRequestError(`The IPN is malformed: ${hostile.join("; ")}`);
  return context.gateway.intake({
    about: "token",
    provider: "providerB",
    subject: ipnSubject(data),
    body: withoutHash(data) as Record<string, JsonValue>,
    signature: data.hash,
  });
}

/** The `reason` label of a refused IPN: its error's code (a bounded set), `internal_error` for anything unexpected. */
function refusalReason(error: unknown): string {
  return error instanceof AppError ? error.code : "internal_error";
}

export const providerBInboundRoute: InboundRoute<ProviderBContext> = {
  method: "POST",
  path: IPN_ROUTE_PATH,
  async handle(context, request) {
    let receipt: IntakeReceipt;
    try {
      receipt = await receive(context, request);
    } catch (error) {
      context.metrics?.ipn("refused", refusalReason(error));
      throw error;
    }
    context.metrics?.ipn("accepted", receipt.outcome);
    return Response.json({ received: true });
  },
  openapi: {
    post: {
      tags: ["providerB"],
      summary: "Provider B's IPN",
      description:
        "Called by provider B, not by tenants. Form-encoded `data[...]` bracket fields (what provider B sends), a `data=<json>` field, or a JSON body. " +
        "Verified with the SHA-512 of the master key of the credential version the checkout was made with, stored without its hash, " +
        "answered at once and processed in the background after confirming with provider B. " +
        "An unknown token is answered 200 and kept for 7 days; a tokenless probe is answered 200.",
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.record(z.string(), z.string()).meta({ description: "data[response_code], data[hash], data[invoice][token], data[status], …" }),
          },
          "application/json": { schema: z.object({ data: z.record(z.string(), z.unknown()) }) },
        },
      },
      responses: {
        "200": { description: "Received", content: { "application/json": { schema: received } } },
        "401": { description: "The hash does not match the merchant account", content: { "application/json": { schema: errorBodySchema } } },
        "415": { description: "Another content type", content: { "application/json": { schema: errorBodySchema } } },
        "429": { description: "Too many IPNs with a wrong hash", content: { "application/json": { schema: errorBodySchema } } },
      },
    },
  },
};
