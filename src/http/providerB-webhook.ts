/**
 * `POST /providerB/webhook` — provider B's IPN (spec endpoint 5, contract §5), a raw-body route: provider
 * B posts PHP bracket form fields, which no JSON procedure can take. Reads the body once (64 KiB at
 * most), accepts the bracket form, a `data=<json>` field, or JSON (415 otherwise), and hands the parsed
 * data to `receiveIpn` — unless it holds text no string may hold (`hostile-text.ts`), refused as malformed
 * like a body that cannot be read. No bearer token: the hash, checked there, says who sent it.
 */
import { z } from "zod";
import { AppError, PayloadTooLargeError, UnsupportedMediaTypeError, BadRequestError } from "../errors.ts";
import { IPN_CONTENT_TYPES, IpnBodyError, parseIpnBody } from "../providers/providerB/ipn.ts";
import type { Deps } from "../services/deps.ts";
import { receiveIpn, type IpnReceipt } from "../services/ipn/receive-ipn.ts";
import { errorBodySchema } from "./error-body.ts";
import { hostileTextMessages } from "./hostile-text.ts";
import type { RawBodyRoute } from "./raw-body-routes.ts";

const MAX_IPN_BYTES = 64 * 1024;

const received = z.object({ received: z.literal(true) }).meta({ id: "IpnReceived" });

async function readBody(request: Request): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_IPN_BYTES) throw new PayloadTooLargeError(MAX_IPN_BYTES);
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > MAX_IPN_BYTES) throw new PayloadTooLargeError(MAX_IPN_BYTES);
  return new TextDecoder().decode(bytes);
}

/** Reads, checks and receives one IPN: what `receiveIpn` made of it, or the error that refuses it. */
async function receive(deps: Deps, request: Request): Promise<IpnReceipt> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const contentType = IPN_CONTENT_TYPES.find((accepted) => accepted === type);
  if (!contentType) throw new UnsupportedMediaTypeError([...IPN_CONTENT_TYPES]);
  const text = await readBody(request);
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
  return receiveIpn(deps, data);
}

/** The `reason` label of a refused IPN: its error's code (a bounded set), `internal_error` for anything unexpected. */
function refusalReason(error: unknown): string {
  return error instanceof AppError ? error.code : "internal_error";
}

export const providerBWebhookRoute: RawBodyRoute = {
  method: "POST",
  path: "/providerB/webhook",
  async handle(deps, request) {
    let receipt: IpnReceipt;
    try {
      receipt = await receive(deps, request);
    } catch (error) {
      deps.metrics?.ipn("refused", refusalReason(error));
      throw error;
    }
    deps.metrics?.ipn("accepted", receipt.outcome);
    return Response.json({ received: true });
  },
  openapi: {
    post: {
      tags: ["providerB"],
      summary: "Provider B's IPN",
      description:
        "Called by provider B, not by tenants. Form-encoded `data[...]` bracket fields (what provider B sends), a `data=<json>` field, or a JSON body. Verified with the SHA-512 of the master key of the credential version the checkout was made with, stored without its hash, answered at once and processed in the background after confirming with provider B. An unknown token is answered 200 and kept for 7 days; a tokenless probe is answered 200.",
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
