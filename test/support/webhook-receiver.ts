/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request it gets and
 * answers what the test tells it to (a status, a slow answer, a request held until released). Waiting
 * for what it received: `waitUntil` in `wait.ts`.
 *
 * Every delivery it gets (a request with `webhook-id`) is checked against the OpenAPI document's `webhooks`
 * section (`openapi-validation.ts`): `stop()` throws when one did not match, failing the test.
 */
import { webhookDeliveryProblems } from "./openapi-validation.ts";

/** One request the receiver got. */
export interface Receipt {
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** The status answered; null while the answer is pending (or never came: held, connection dropped). */
  status: number | null;
}

/** Decides the answer to one request; `index` counts the requests with the same path and `webhook-id`, from 0. */
export type Responder = (receipt: Receipt, index: number) => Response | Promise<Response>;

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  receipts: Receipt[];
  /** Replaces the answer for the requests to come. */
  respondWith(responder: Responder): void;
  /** The receipts of one event (`webhook-id`), optionally at one path. */
  receiptsOf(webhookId: string, path?: string): Receipt[];
  /** Answered requests with a 2xx status, by `<path> <webhook-id>`. */
  successesByTarget(): Map<string, number>;
  /** Stops the server; throws if a delivery did not match the OpenAPI document. */
  stop(): Promise<void>;
}

const ok: Responder = () => new Response("ok");

/**
 * Starts a receiver on 127.0.0.1 (a free port, or `port`). `syntheticEvents`: the test records events with
 * made-up `data` (it tests delivery, not payloads), so their bodies are not checked against the document.
 *
 * @example
 * ```ts
 * const receiver = await startReceiver();
 * receiver.respondWith((_, index) => new Response(null, { status: index === 0 ? 503 : 200 }));
 * ```
 */
export async function startReceiver(options: { port?: number; respond?: Responder; syntheticEvents?: true } = {}): Promise<WebhookReceiver> {
  let responder = options.respond ?? ok;
  const receipts: Receipt[] = [];
  const seen = new Map<string, number>();
  const problems: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 30,
    async fetch(request) {
      const receipt: Receipt = {
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        receivedAt: Date.now(),
        status: null,
      };
      receipts.push(receipt);
      if (receipt.headers["webhook-id"] !== undefined && !options.syntheticEvents)
        problems.push(...(await webhookDeliveryProblems(receipt.headers, receipt.body)));
      const id = `${receipt.path} ${receipt.headers["webhook-id"] ?? ""}`;
      const index = seen.get(id) ?? 0;
      seen.set(id, index + 1);
      const response = await responder(receipt, index);
      receipt.status = response.status;
      return response;
    },
  });
  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    receipts,
    respondWith(next) {
      responder = next;
    },
    receiptsOf(webhookId, path) {
      return receipts.filter((r) => r.headers["webhook-id"] === webhookId && (path === undefined || r.path === path));
    },
    successesByTarget() {
      const counts = new Map<string, number>();
      for (const r of receipts) {
        if (r.status === null || r.status < 200 || r.status >= 300) continue;
        const key = `${r.path} ${r.headers["webhook-id"]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return counts;
    },
    async stop() {
      await server.stop(true);
      if (problems.length > 0) throw new Error(`webhook deliveries that do not match the OpenAPI document's webhooks section:\n- ${problems.join("\n- ")}`);
    },
  };
}
