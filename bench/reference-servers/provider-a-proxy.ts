/**
 * The direct payment's floor (issue 8): the least any proxy in the gateway's place does for one direct
 * payment — take the POST, make the same three provider A calls the gateway's adapter makes (create with
 * an `Idempotency-Key`, token, push) with `fetch` over keep-alive, and answer. No validation, database,
 * queue, auth or webhook handling. Its rate against the simulator-direct reference is what the extra hop
 * alone costs on this machine; the gateway's rate against it is what the gateway adds on top.
 *
 *   PROXY_UPSTREAM=<provider A simulator URL> PROXY_SECRET_KEY=<account key> \
 *     bun bench/reference-servers/provider-a-proxy.ts <port>
 *
 * It prints `listening <url>` once bound and stops on SIGTERM/SIGINT.
 */
import { Elysia } from "elysia";

const port = Number(process.argv[2] ?? "0");
const upstream = process.env.PROXY_UPSTREAM;
const secretKey = process.env.PROXY_SECRET_KEY;
if (!Number.isInteger(port) || port < 0 || port > 65535 || !upstream || !secretKey) {
  process.stderr.write(`provider-a-proxy: usage: PROXY_UPSTREAM=… PROXY_SECRET_KEY=… provider-a-proxy.ts <port> (got '${process.argv[2]}')\n`);
  process.exit(1);
}

/** The body the bench posts (`DIRECT_PAYMENT` in scenarios.ts). */
interface DirectPayment {
  description: string;
  amount: number;
  payment_method: string;
  phone_number: { number: string; country: string };
  firstname?: string;
  lastname?: string;
  email?: string;
}

const auth = `Bearer ${secretKey}`;
let sequence = 0;

async function call<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { authorization: auth, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const response = await fetch(`${upstream}${path}`, { method: "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const app = new Elysia()
  .get("/", () => "ok")
  .post("/providerA/direct-payment", async ({ body }) => {
    const input = body as DirectPayment;
    const paymentId = `pay_floor${process.pid}_${++sequence}`;
    const created = await call<{ "v1/transaction": { id: number } }>(
      "/v1/transactions",
      {
        description: input.description,
        amount: input.amount,
        currency: { iso: "XOF" },
        mode: "mtn_open",
        merchant_reference: paymentId,
        custom_metadata: { paymentId },
        customer: { firstname: input.firstname, lastname: input.lastname, email: input.email, phone_number: input.phone_number },
      },
      paymentId,
    );
    const id = created["v1/transaction"].id;
    const { token } = await call<{ token: string }>(`/v1/transactions/${id}/token`, undefined);
    await call("/v1/mtn_open", { token }, paymentId);
    return { ok: true, transactionId: id, status: "pending", description: input.description, amount: input.amount, paymentId };
  })
  .listen({ port, hostname: "127.0.0.1" });
process.stdout.write(`listening http://127.0.0.1:${app.server?.port}\n`);

const stop = () => {
  void app.stop().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
