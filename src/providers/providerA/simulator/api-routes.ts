/**
 * The provider's API under `/v1` (providers.md, "Provider A"): bearer secret key, JSON both ways, the
 * three calls of a direct payment (create, token, push per mode) and the reads. Refusals are thrown as
 * `ProviderAError`; `app.ts` turns them into the provider's error shape.
 */
import { Elysia } from "elysia";
import type { SimulatorContext } from "./context.ts";
import type { Ledger, SimAccount } from "./ledger.ts";
import { parseWith, readJson } from "./request-body.ts";
import { playSandboxOutcome } from "./sandbox-outcome.ts";
import { renderTransaction } from "./render.ts";
import { createTransactionSchema, isWireMode, ProviderAError, sendNowSchema, transactionIdFrom, WIRE_MODE_COUNTRIES } from "./wire.ts";

const transactionAnswer = (trx: Parameters<typeof renderTransaction>[0]) => Response.json({ "v1/transaction": renderTransaction(trx) });

/** The account whose secret key the `Authorization` header carries; a 401 in the provider's shape otherwise. */
export function accountFromAuthorization(ledger: Ledger, header: string | undefined): SimAccount {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  const account = match ? ledger.accountByKey(match[1]!) : undefined;
  if (!account) throw new ProviderAError(401, "Invalid or missing API key: send `Authorization: Bearer <secret key>`");
  return account;
}

/** The `/v1` routes of one simulator, authenticated by the account's secret key. */
export function apiRoutes(ctx: SimulatorContext) {
  const { ledger } = ctx;

  /** The caller's transaction; another account's is as absent as a missing one. */
  function ownTransaction(account: SimAccount, rawId: string) {
    const id = transactionIdFrom(rawId);
    const trx = id === undefined ? undefined : ledger.transactionOf(account, id);
    if (!trx) throw new ProviderAError(404, `Transaction ${rawId} not found`);
    return trx;
  }

  return new Elysia({ name: "simulator-providerA-api", prefix: "/v1" })
    .resolve(({ headers }) => ({ account: accountFromAuthorization(ledger, headers.authorization) }))
    .post(
      "/transactions",
      async ({ account, request }) => {
        const input = parseWith(createTransactionSchema, await readJson(request), "Transaction could not be created");
        return transactionAnswer(ledger.createTransaction(account, input, request.headers.get("idempotency-key")));
      },
      { parse: "none" },
    )
    .get("/transactions/merchant/:reference", ({ account, params }) => {
      const trx = ledger.transactionByMerchantReference(account, params.reference);
      if (!trx) throw new ProviderAError(404, `Transaction with merchant reference ${params.reference} not found`);
      return transactionAnswer(trx);
    })
    .get("/transactions/:id", ({ account, params }) => transactionAnswer(ownTransaction(account, params.id)))
    .post(
      "/transactions/:id/token",
      ({ account, params, request }) => {
        const trx = ownTransaction(account, params.id);
        if (trx.status !== "pending") throw new ProviderAError(422, `Transaction ${trx.id} is already ${trx.status}`);
        return Response.json({ token: ledger.tokenFor(trx), url: `${ctx.linkBase(request)}/console#trx-${trx.id}` });
      },
      { parse: "none" },
    )
    .post(
      "/:mode",
      async ({ account, params, request }) => {
        const mode = params.mode;
        if (!isWireMode(mode)) throw new ProviderAError(404, `Unknown payment mode '${mode}'`);
        const input = parseWith(sendNowSchema, await readJson(request), "The payment request could not be sent");
        const trx = ledger.transactionByToken(account, input.token);
        if (!trx) throw new ProviderAError(422, "The payment request could not be sent", { token: ["is invalid"] });
        // The answer is undocumented (providers.md): clients treat it as opaque and read the transaction.
        const answer = Response.json({ message: "The payment request was sent to the customer's phone", reference: trx.reference });
        // A repeated push (a client retrying) answers the same and sends nothing to the phone again.
        if (trx.push?.mode === mode) return answer;
        if (trx.push) throw new ProviderAError(422, `A payment request was already sent for transaction ${trx.id} with mode ${trx.push.mode}`);
        if (trx.status !== "pending") throw new ProviderAError(422, `Transaction ${trx.id} is already ${trx.status}`);
        const phone = input.phone_number ?? trx.customer?.phone;
        if (!phone) throw new ProviderAError(422, "The payment request could not be sent", { phone_number: ["is required"] });
        if (phone.country.toLowerCase() !== WIRE_MODE_COUNTRIES[mode])
          throw new ProviderAError(422, "The payment request could not be sent", {
            phone_number: [`country ${phone.country} is not served by mode ${mode}`],
          });
        ledger.recordPush(trx, mode, phone);
        playSandboxOutcome(ctx, trx);
        return answer;
      },
      { parse: "none" },
    );
}
