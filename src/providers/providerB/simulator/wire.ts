/**
 * Provider B's wire format as the simulator speaks it: the request bodies (one zod schema each), the
 * `response_code` values, and the shape of a refusal.
 *
 * Refusals are a 4xx status with a JSON body whose `response_code` is not `"00"` — clients must read
 * `response_code` whatever the status (the provider's SDKs only look at the body):
 *
 * | status | response_code | when |
 * |---|---|---|
 * | 401 | 1001 | a key header is missing or does not match an account |
 * | 422 | 1002 | the body is not JSON, or a field is missing or malformed |
 * | 404 | 1003 | no invoice / permit with that token for this account and mode |
 * | 409 | 1004 | the permit is not `active` (charge), or the state change is not allowed |
 * | 422 | 1005 | a charge above the permit's `max_amount` |
 */
import { z } from "zod";

export const RESPONSE_CODES = {
  success: "00",
  invalidKeys: "1001",
  invalidRequest: "1002",
  notFound: "1003",
  permitNotActive: "1004",
  amountExceedsPermit: "1005",
  internal: "9999",
} as const;

/** A provider answer: JSON with the given HTTP status. */
export function providerAnswer(status: number, body: Record<string, unknown>): Response {
  return Response.json(body, { status });
}

/** A refusal as the provider gives it, e.g. `refusal(404, RESPONSE_CODES.notFound, "Invoice Not Found")`. */
export function refusal(status: number, responseCode: string, responseText: string): Response {
  return providerAnswer(status, { response_code: responseCode, response_text: responseText });
}

const isAbsent = (input: unknown) => input === undefined || input === null;

const requiredText = (field: string) =>
  z
    .string({ error: (issue) => (isAbsent(issue.input) ? `${field} is required` : `${field} must be a string`) })
    .trim()
    .min(1, { error: `${field} is required` });

const optionalText = (field: string) => z.string({ error: `${field} must be a string` }).nullish();

// The provider takes amounts as numbers or numeric strings ("5000").
const amount = (field: string) =>
  z
    .union(
      [
        z.number(),
        z
          .string()
          .trim()
          .regex(/^\d+(\.\d+)?$/)
          .transform(Number),
      ],
      {
        error: (issue) => (isAbsent(issue.input) ? `${field} is required` : `${field} must be a number`),
      },
    )
    .refine((value) => Number.isFinite(value) && value > 0, { error: `${field} must be greater than 0` });

const httpUrl = (field: string) =>
  z
    .string({ error: `${field} must be a URL` })
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { error: `${field} must be an http(s) URL` })
    .nullish();

const object = (field: string) => ({
  error: (issue: { input?: unknown }) => (isAbsent(issue.input) ? `${field} is required` : `${field} must be an object`),
});

// Items and taxes are objects keyed `item_N` / `tax_N`, never arrays: refusing arrays catches a client bug.
const keyedBy = (field: string, prefix: string) =>
  z
    .record(z.string().regex(new RegExp(`^${prefix}_\\d+$`)), z.looseObject({}), {
      error: `${field} must be an object keyed ${prefix}_0, ${prefix}_1, … (not an array)`,
    })
    .nullish();

const customData = z.record(z.string(), z.unknown(), { error: "custom_data must be an object" }).nullish();

const customer = (required: { name: boolean; phone: boolean }) =>
  z.looseObject(
    {
      name: required.name ? requiredText("customer.name") : optionalText("customer.name"),
      email: optionalText("customer.email"),
      phone: required.phone ? requiredText("customer.phone") : optionalText("customer.phone"),
    },
    object("customer"),
  );

const actions = z
  .looseObject(
    { cancel_url: httpUrl("actions.cancel_url"), return_url: httpUrl("actions.return_url"), callback_url: httpUrl("actions.callback_url") },
    object("actions"),
  )
  .nullish();

/** `POST …/checkout-invoice/create`: only `invoice.total_amount` and `store.name` are required. */
export const checkoutInvoiceCreateBody = z.looseObject(
  {
    invoice: z.looseObject(
      {
        total_amount: amount("invoice.total_amount"),
        description: optionalText("invoice.description"),
        customer: customer({ name: false, phone: false }).nullish(),
        items: keyedBy("invoice.items", "item"),
        taxes: keyedBy("invoice.taxes", "tax"),
      },
      object("invoice"),
    ),
    store: z.looseObject({ name: requiredText("store.name") }, object("store")),
    custom_data: customData,
    actions,
  },
  object("body"),
);
export type CheckoutInvoiceCreateBody = z.infer<typeof checkoutInvoiceCreateBody>;

/** `POST …/permit/create` (our PERMIT protocol, providers.md). */
export const permitCreateBody = z.looseObject(
  {
    customer: customer({ name: true, phone: true }),
    description: requiredText("description"),
    max_amount: amount("max_amount").nullish(),
    custom_data: customData,
    actions,
  },
  object("body"),
);
export type PermitCreateBody = z.infer<typeof permitCreateBody>;

/** `POST …/permit/charge`. */
export const permitChargeBody = z.looseObject(
  {
    permit_token: requiredText("permit_token"),
    amount: amount("amount"),
    description: optionalText("description"),
    custom_data: customData,
    idempotency_key: optionalText("idempotency_key"),
  },
  object("body"),
);
export type PermitChargeBody = z.infer<typeof permitChargeBody>;

/** `POST …/permit/revoke`. */
export const permitRevokeBody = z.looseObject({ permit_token: requiredText("permit_token") }, object("body"));

/** Reads a JSON body and checks it against `schema`; a failure is the provider's 422 refusal. */
export async function readWireBody<T extends z.ZodType>(
  schema: T,
  request: Request,
): Promise<{ value: z.output<T>; refused?: undefined } | { value?: undefined; refused: Response }> {
  let json: unknown;
  try {
    json = JSON.parse(await request.text());
  } catch {
    return { refused: refusal(422, RESPONSE_CODES.invalidRequest, "Invalid request: the body must be JSON") };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue?.path.join(".") ?? "";
  const message = issue?.message ?? "invalid body";
  const text = path && !message.startsWith(path) ? `${path}: ${message}` : message;
  return { refused: refusal(422, RESPONSE_CODES.invalidRequest, `Invalid request: ${text}`) };
}
