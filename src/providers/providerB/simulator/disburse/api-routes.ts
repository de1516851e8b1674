/**
 * The disburse v2 API under `/api/v2/disburse/` (one API, no sandbox path — as at provider B): get-invoice,
 * submit-invoice, check-status and check-balance, behind the same key headers as the v1 API. Every answer is
 * HTTP 200; a refusal says so in `response_code` (`1001` keys, `1002` a malformed body, `1003` an unknown
 * token, `4002` no funds or a callback URL that did not answer, `5000` a `disburse_id` used before).
 */
import { Elysia } from "elysia";
import { z } from "zod";
import { authenticateMerchant } from "../authenticate.ts";
import type { SimulatorContext } from "../context.ts";
import type { MerchantAccount } from "../store.ts";
import { RESPONSE_CODES } from "../wire.ts";
import { balanceAnswer, createDisbursement, disbursementStatus, findDisbursement, submitDisbursement } from "./disbursements.ts";

/** Where the disburse API lives under the simulator. */
export const DISBURSE_PREFIX = "/api/v2/disburse";

const answer = (body: Record<string, unknown>) => Response.json(body, { status: 200 });
const refuse = (code: string, text: string) => answer({ response_code: code, response_text: text, description: text });

const text = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, { error: `${field} is required` });
const alias = z.union([z.string(), z.number()], { error: "account_alias is required" }).transform(String).pipe(text("account_alias"));
const wholeAmount = z
  .union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)], { error: "amount must be a whole number" })
  .refine((value) => Number.isInteger(value) && value >= 200, { error: "amount must be at least 200" });
const httpUrl = text("callback_url").refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
  error: "callback_url must be an http(s) URL",
});
const optionalId = z.string({ error: "disburse_id must be a string" }).trim().min(1).nullish();

const getInvoiceBody = z.looseObject({
  account_alias: alias,
  amount: wholeAmount,
  withdraw_mode: text("withdraw_mode"),
  callback_url: httpUrl,
  disburse_id: optionalId,
});
const submitInvoiceBody = z.looseObject({ disburse_invoice: text("disburse_invoice"), disburse_id: optionalId });
const checkStatusBody = z.looseObject({ disburse_invoice: text("disburse_invoice") });

/** The JSON body checked against `schema`, or the `1002` refusal. */
async function readBody<T extends z.ZodType>(schema: T, request: Request): Promise<{ value: z.output<T> } | { refused: Response }> {
  let json: unknown;
  try {
    json = JSON.parse(await request.text());
  } catch {
    return { refused: refuse(RESPONSE_CODES.invalidRequest, "Invalid request: the body must be JSON") };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  return { refused: refuse(RESPONSE_CODES.invalidRequest, `Invalid request: ${parsed.error.issues[0]?.message ?? "invalid body"}`) };
}

/** Runs `handler` for a request whose key headers name an account; a wrong key is `1001`, in an HTTP 200. */
function merchantRoute(sim: SimulatorContext, handler: (account: MerchantAccount, request: Request) => Response | Promise<Response>) {
  return ({ request }: { request: Request }) => {
    const { account } = authenticateMerchant(sim.store, request.headers);
    return account ? handler(account, request) : refuse(RESPONSE_CODES.invalidKeys, "Invalid Keys");
  };
}

/** The answer of a submit that acted, unless a fault set on the control surface loses it. */
async function submitAnswer(sim: SimulatorContext, body: Record<string, unknown>): Promise<Response> {
  const fault = sim.store.submitFault;
  sim.store.submitFault = null;
  if (fault?.answer === "server_error")
    return new Response("<html><body>502 Bad Gateway</body></html>", { status: 502, headers: { "content-type": "text/html" } });
  if (fault?.answer === "timeout") await Bun.sleep(fault.delayMs);
  return answer(body);
}

/** The disburse routes, as an Elysia plugin. */
export function disburseApiRoutes(sim: SimulatorContext) {
  const noParse = { parse: "none" } as const;
  return new Elysia({ prefix: DISBURSE_PREFIX })
    .post(
      "/get-invoice",
      merchantRoute(sim, async (account, request) => {
        const body = await readBody(getInvoiceBody, request);
        if ("refused" in body) return body.refused;
        const { value } = body;
        const created = await createDisbursement(sim, account, {
          accountAlias: value.account_alias,
          amount: value.amount,
          withdrawMode: value.withdraw_mode,
          callbackUrl: value.callback_url,
          disburseId: value.disburse_id ?? null,
        });
        if (!created.ok) return refuse(created.code, created.text);
        return answer({ response_code: RESPONSE_CODES.success, response_text: "Disburse invoice created", disburse_token: created.value.token });
      }),
      noParse,
    )
    .post(
      "/submit-invoice",
      merchantRoute(sim, async (account, request) => {
        const body = await readBody(submitInvoiceBody, request);
        if ("refused" in body) return body.refused;
        const disbursement = findDisbursement(sim, body.value.disburse_invoice, account);
        if (!disbursement) return refuse(RESPONSE_CODES.notFound, "Disburse invoice not found");
        const submitted = submitDisbursement(sim, disbursement, body.value.disburse_id ?? null);
        if (!submitted.ok) return refuse(submitted.code, submitted.text);
        return submitAnswer(sim, {
          response_code: RESPONSE_CODES.success,
          response_text: "Disbursement submitted",
          description: `${disbursement.amount} XOF to ${disbursement.accountAlias} (${disbursement.withdrawMode})`,
          transaction_id: disbursement.transactionId,
          provider_ref: disbursement.transactionId,
          status: disbursement.status,
        });
      }),
      noParse,
    )
    .post(
      "/check-status",
      merchantRoute(sim, async (account, request) => {
        const body = await readBody(checkStatusBody, request);
        if ("refused" in body) return body.refused;
        const disbursement = findDisbursement(sim, body.value.disburse_invoice, account);
        return disbursement ? answer(disbursementStatus(disbursement)) : refuse(RESPONSE_CODES.notFound, "Disburse invoice not found");
      }),
      noParse,
    )
    .get(
      "/check-balance",
      merchantRoute(sim, (account) => answer(balanceAnswer(account))),
    );
}
