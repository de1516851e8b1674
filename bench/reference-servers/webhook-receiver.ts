/**
 * The receiver of the fan-out scenario: answers every POST `200 ok` at once and notes when each arrived,
 * so the harness can time every delivery from its event's commit to its 2xx. Runs in its own process.
 *
 *   bun bench/reference-servers/webhook-receiver.ts <port>
 *
 * - `POST <any path>`: a delivery; noted as `[path, webhook-id, arrival ms]` (wall clock with
 *   sub-millisecond precision, `performance.timeOrigin + performance.now()`, comparable across
 *   processes on one machine).
 * - `POST /subject/<any>`: a delivery too, noted with a fourth field: the JSON body's
 *   `data.providerTransactionId` (the provider B token a `payment.completed` is about), so the harness can
 *   time an IPN to the tenant's webhook.
 * - `POST /sink/<any>`: kept aside, body and all, not noted as a delivery: where the bench points the
 *   gateway's `PUBLIC_BASE_URL`, so the IPNs the provider B simulator sends land here (`GET /sink`).
 * - `POST /discard/<any>`: answered 200 and only counted (`GET /sink?count` shows it): where provider A
 *   webhooks of the simulator-direct reference go, so the simulator does the same work in both rows.
 * - `GET /stats`: `{ count, receipts }` of everything noted since the last reset; `?count` for the count only.
 * - `GET /sink`: `{ count, discarded, bodies }` of what the sink kept since its reset; `?count` without bodies.
 * - `POST /__reset`: forgets everything noted; `POST /__reset-sink`: forgets what the sink kept.
 * - `GET /`: 200, to tell it is up.
 *
 * It prints `listening <url>` once bound and stops on SIGTERM/SIGINT.
 */
export {};

const port = Number(process.argv[2] ?? "0");
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`webhook-receiver: bad port '${process.argv[2]}'\n`);
  process.exit(1);
}

type Receipt = [path: string, webhookId: string, arrivedAtMs: number, subject?: string];
let receipts: Receipt[] = [];
let sunk: string[] = [];
let discarded = 0;
const wallNow = () => performance.timeOrigin + performance.now();

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  async fetch(request) {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/") return new Response("ok");
    if (request.method === "GET" && url.pathname === "/stats") {
      return url.searchParams.has("count") ? Response.json({ count: receipts.length }) : Response.json({ count: receipts.length, receipts });
    }
    if (request.method === "GET" && url.pathname === "/sink") {
      return url.searchParams.has("count") ? Response.json({ count: sunk.length, discarded }) : Response.json({ count: sunk.length, discarded, bodies: sunk });
    }
    if (request.method === "POST" && url.pathname === "/__reset") {
      receipts = [];
      return new Response("ok");
    }
    if (request.method === "POST" && url.pathname === "/__reset-sink") {
      sunk = [];
      discarded = 0;
      return new Response("ok");
    }
    if (url.pathname.startsWith("/sink/")) {
      sunk.push(await request.text());
      return new Response("ok");
    }
    if (url.pathname.startsWith("/discard/")) {
      await request.arrayBuffer();
      discarded++;
      return new Response("ok");
    }
    if (url.pathname.startsWith("/subject/")) {
      const text = await request.text();
      const arrived = wallNow();
      let subject = "";
      try {
        subject = String((JSON.parse(text) as { data?: { providerTransactionId?: unknown } }).data?.providerTransactionId ?? "");
      } catch {}
      receipts.push([url.pathname, request.headers.get("webhook-id") ?? "", arrived, subject]);
      return new Response("ok");
    }
    // Read the body as a receiver would before answering.
    await request.arrayBuffer();
    receipts.push([url.pathname, request.headers.get("webhook-id") ?? "", wallNow()]);
    return new Response("ok");
  },
});
process.stdout.write(`listening http://127.0.0.1:${server.port}\n`);

const stop = () => {
  void server.stop(true).finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
