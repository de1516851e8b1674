/**
 * The receiver of the fan-out scenario: answers every POST `200 ok` at once and notes when each arrived,
 * so the harness can time every delivery from its event's commit to its 2xx. Runs in its own process.
 *
 *   bun bench/reference-servers/webhook-receiver.ts <port>
 *
 * - `POST <any path>`: a delivery; noted as `[path, webhook-id, arrival ms]` (wall clock with
 *   sub-millisecond precision, `performance.timeOrigin + performance.now()`, comparable across
 *   processes on one machine).
 * - `GET /stats`: `{ count, receipts }` of everything noted since the last reset; `?count` for the count only.
 * - `POST /__reset`: forgets everything noted.
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

type Receipt = [path: string, webhookId: string, arrivedAtMs: number];
let receipts: Receipt[] = [];
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
    if (request.method === "POST" && url.pathname === "/__reset") {
      receipts = [];
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
