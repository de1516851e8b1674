/**
 * The load driver for what wrk cannot do: a separate Bun process that keeps N HTTP/1.1 keep-alive
 * connections busy for a fixed time, each running one *flow* after another — a flow being one request,
 * or several chained requests whose later ones use what the earlier ones answered — and records every
 * flow's latency (first byte sent → last answer read).
 *
 *   bun bench/load/flow-driver.ts <file holding one FlowDriverInput as JSON>
 *
 * Prints one {@link FlowDriverOutput} as JSON on stdout. Flows:
 *
 * - `repeat`: the same request again and again (what wrk does; used where the other row of a pair needs
 *   this driver, so that both rows are measured the same way).
 * - `provider-a-direct-payment`: the three provider A calls the gateway makes for one direct payment,
 *   made straight at the simulator exactly as the gateway's client makes them — `POST /v1/transactions`
 *   (with an `Idempotency-Key`), `POST /v1/transactions/{id}/token`, `POST /v1/{mode}` `{ token }`.
 * - `replay`: a list of prepared request bodies, each sent once (the IPNs); the run ends when the list
 *   is used up or the time is over, and the wall-clock time each one was sent is reported.
 *
 * Like `bun-load-generator.ts` it speaks raw HTTP/1.1 over `Bun.connect` rather than calling `fetch`:
 * on a 2-core machine the driver shares the CPU with the servers, and a cheaper client flatters no one.
 */
import { readFileSync } from "node:fs";
import type { Socket } from "bun";
import { Latencies } from "./latencies.ts";

export interface DriverRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The wire fields of a direct payment, as the gateway's adapter sends them. */
export interface ProviderAPayment {
  description: string;
  amount: number;
  currency: string;
  mode: string;
  customer: { firstname?: string; lastname?: string; email?: string; phone_number: { number: string; country: string } };
}

export type Flow =
  | { flow: "repeat"; request: DriverRequest }
  | { flow: "provider-a-direct-payment"; secretKey: string; payment: ProviderAPayment }
  | {
      flow: "replay";
      request: Omit<DriverRequest, "body">;
      bodies: string[] /** Send body i at start + i/rate s (paced); default: as fast as answers come. */;
      ratePerS?: number;
    };

export interface FlowDriverInput {
  url: string;
  connections: number;
  durationMs: number;
  /** A request unanswered after this long counts as a network error and its connection is redone. */
  timeoutMs: number;
  flow: Flow;
}

export interface FlowDriverOutput {
  /** Flows completed within the time (successful or not). */
  requests: number;
  /** Flows of which a request answered outside 2xx. */
  non2xx: number;
  networkErrors: number;
  durationMs: number;
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; max: number | null; mean: number | null };
  /** Individual HTTP requests sent (a flow of three calls sends three). */
  httpRequests: number;
  /** The first failure seen, to tell what went wrong. */
  firstFailure: string | null;
  /** `replay` only: `[index into bodies, wall-clock ms when sent, HTTP status (0: no answer)]` of every body sent. */
  sent?: [number, number, number][];
}

const CRLFCRLF = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");
const wallNow = () => performance.timeOrigin + performance.now();

interface Parsed {
  status: number;
  body: Buffer;
  /** Bytes of `buf` this response took. */
  end: number;
}

/** The first complete response in `buf`, with its body decoded (content-length or chunked); undefined when incomplete. */
export function parseResponse(buf: Buffer): Parsed | undefined {
  const headerEnd = buf.indexOf(CRLFCRLF);
  if (headerEnd < 0) return undefined;
  const head = buf.toString("latin1", 0, headerEnd);
  const status = Number(head.slice(9, 12));
  const bodyStart = headerEnd + 4;
  if ((status >= 100 && status < 200) || status === 204 || status === 304) return { status, body: Buffer.alloc(0), end: bodyStart };
  const lower = head.toLowerCase();
  const length = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
  if (length) {
    const end = bodyStart + Number(length[1]);
    return buf.length >= end ? { status, body: buf.subarray(bodyStart, end), end } : undefined;
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = buf.indexOf(CRLF, at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(buf.toString("latin1", at, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error("malformed chunk size");
      if (size === 0) {
        const trailerEnd = buf.indexOf(CRLF, lineEnd + 2) === lineEnd + 2 ? lineEnd + 4 : buf.indexOf(CRLFCRLF, lineEnd) + 4;
        if (trailerEnd < 4 || buf.length < trailerEnd) return undefined;
        return { status, body: Buffer.concat(parts), end: trailerEnd };
      }
      if (buf.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  throw new Error(`a response with neither content-length nor chunked encoding (status ${status})`);
}

function encodeRequest(host: string, request: DriverRequest): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${body.length}`);
  else if (request.method !== "GET" && request.method !== "HEAD") lines.push("content-length: 0");
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)]);
}

class NetworkError extends Error {}

/** One keep-alive connection with one request in flight at a time. */
class Connection {
  private socket: Socket<undefined> | undefined;
  private pending: Buffer | undefined;
  private waiter: { resolve: (parsed: Parsed) => void; reject: (error: Error) => void } | undefined;
  sentAt = 0;

  constructor(
    private readonly hostname: string,
    private readonly port: number,
  ) {}

  get busy(): boolean {
    return this.waiter !== undefined;
  }

  private async open(): Promise<Socket<undefined>> {
    const self = this;
    this.pending = undefined;
    const socket = await Bun.connect({
      hostname: this.hostname,
      port: this.port,
      socket: {
        data(_socket, chunk) {
          self.pending = self.pending ? Buffer.concat([self.pending, chunk]) : Buffer.from(chunk);
          let parsed: Parsed | undefined;
          try {
            parsed = parseResponse(self.pending);
          } catch (error) {
            self.fail(new NetworkError(error instanceof Error ? error.message : String(error)));
            return;
          }
          if (!parsed) return;
          self.pending = self.pending.length > parsed.end ? Buffer.from(self.pending.subarray(parsed.end)) : undefined;
          const waiter = self.waiter;
          self.waiter = undefined;
          waiter?.resolve(parsed);
        },
        close() {
          self.fail(new NetworkError("the connection closed"));
        },
        error(_socket, error) {
          self.fail(new NetworkError(error.message));
        },
      },
    });
    this.socket = socket;
    return socket;
  }

  /** Drops the connection; the request in flight, if any, fails. */
  fail(error: Error): void {
    const socket = this.socket;
    this.socket = undefined;
    this.pending = undefined;
    socket?.terminate();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }

  async send(wire: Buffer): Promise<Parsed> {
    let socket = this.socket;
    if (!socket) {
      try {
        socket = await this.open();
      } catch (error) {
        throw new NetworkError(error instanceof Error ? error.message : String(error));
      }
    }
    const open = socket;
    return new Promise<Parsed>((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.sentAt = performance.now();
      open.write(wire);
    });
  }

  close(): void {
    this.socket?.end();
    this.socket = undefined;
  }
}

/**
 * What one flow iteration reports: ok, a bad status (with a description) — network errors throw — and,
 * when it waited for its slot before sending (a paced replay), when it really began.
 */
type Outcome = ({ ok: true } | { ok: false; why: string }) & { begunAt?: number };

type Step = (conn: Connection) => Promise<Outcome>;

const describeFailure = (what: string, parsed: Parsed) => `${what} answered ${parsed.status}: ${parsed.body.toString("utf8").slice(0, 300)}`;

let counter = 0;
const uniqueId = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36).padStart(6, "0")}${Math.random().toString(36).slice(2, 8)}`;

/** Builds the iteration function of `flow`; `onSent` notes replayed bodies. */
function buildFlow(
  input: FlowDriverInput,
  host: string,
  counters: { http: number },
  sent: [number, number, number][] | undefined,
  next: { index: number },
): Step | undefined {
  const flow = input.flow;
  const ok2xx = (status: number) => status >= 200 && status <= 299;
  switch (flow.flow) {
    case "repeat": {
      const wire = encodeRequest(host, flow.request);
      return async (conn) => {
        counters.http++;
        const answer = await conn.send(wire);
        return ok2xx(answer.status) ? { ok: true } : { ok: false, why: describeFailure(`${flow.request.method} ${flow.request.path}`, answer) };
      };
    }
    case "provider-a-direct-payment": {
      const auth = `Bearer ${flow.secretKey}`;
      const p = flow.payment;
      return async (conn) => {
        const paymentId = uniqueId("pay_bench");
        const createBody = JSON.stringify({
          description: p.description,
          amount: p.amount,
          currency: { iso: p.currency },
          mode: p.mode,
          merchant_reference: paymentId,
          custom_metadata: { paymentId },
          customer: p.customer,
        });
        counters.http++;
        const created = await conn.send(
          encodeRequest(host, {
            method: "POST",
            path: "/v1/transactions",
            headers: { authorization: auth, accept: "application/json", "content-type": "application/json", "idempotency-key": paymentId },
            body: createBody,
          }),
        );
        if (!ok2xx(created.status)) return { ok: false, why: describeFailure("POST /v1/transactions", created) };
        const id = (JSON.parse(created.body.toString("utf8")) as { "v1/transaction": { id: number } })["v1/transaction"].id;
        counters.http++;
        const tokenAnswer = await conn.send(
          encodeRequest(host, { method: "POST", path: `/v1/transactions/${id}/token`, headers: { authorization: auth, accept: "application/json" } }),
        );
        if (!ok2xx(tokenAnswer.status)) return { ok: false, why: describeFailure("POST /v1/transactions/{id}/token", tokenAnswer) };
        const { token } = JSON.parse(tokenAnswer.body.toString("utf8")) as { token: string };
        counters.http++;
        const pushed = await conn.send(
          encodeRequest(host, {
            method: "POST",
            path: `/v1/${p.mode}`,
            headers: { authorization: auth, accept: "application/json", "content-type": "application/json", "idempotency-key": paymentId },
            body: JSON.stringify({ token }),
          }),
        );
        return ok2xx(pushed.status) ? { ok: true } : { ok: false, why: describeFailure(`POST /v1/${p.mode}`, pushed) };
      };
    }
    case "replay": {
      const bodies = flow.bodies;
      const rate = flow.ratePerS;
      const origin = performance.now();
      return async (conn) => {
        const index = next.index++;
        if (index >= bodies.length) throw new RanOut();
        if (rate) {
          const wait = origin + (index * 1000) / rate - performance.now();
          if (wait > 0) await Bun.sleep(wait);
        }
        const begunAt = performance.now();
        counters.http++;
        const note: [number, number, number] = [index, wallNow(), 0];
        sent?.push(note);
        const answer = await conn.send(encodeRequest(host, { ...flow.request, body: bodies[index]! }));
        note[2] = answer.status;
        return ok2xx(answer.status)
          ? { ok: true, begunAt }
          : { ok: false, why: describeFailure(`${flow.request.method} ${flow.request.path}`, answer), begunAt };
      };
    }
  }
}

class RanOut extends Error {}

/** Runs the flows described by `input` and resolves with what was measured. */
export async function driveFlows(input: FlowDriverInput): Promise<FlowDriverOutput> {
  const url = new URL(input.url);
  const host = url.host;
  const latencies = new Latencies();
  const counters = { http: 0 };
  const sent: [number, number, number][] | undefined = input.flow.flow === "replay" ? [] : undefined;
  const iterate = buildFlow(input, host, counters, sent, { index: 0 })!;
  let non2xx = 0;
  let networkErrors = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  const deadline = started + input.durationMs;
  let lastEnd = started;
  const connections: Connection[] = [];

  const watchdog = setInterval(() => {
    const now = performance.now();
    for (const conn of connections) if (conn.busy && now - conn.sentAt > input.timeoutMs) conn.fail(new NetworkError(`no answer within ${input.timeoutMs} ms`));
  }, 100);

  const user = async () => {
    const conn = new Connection(url.hostname, Number(url.port || 80));
    connections.push(conn);
    while (performance.now() < deadline) {
      const begun = performance.now();
      try {
        const outcome = await iterate(conn);
        const now = performance.now();
        if (now > deadline) break;
        lastEnd = now;
        latencies.add(now - (outcome.begunAt ?? begun));
        if (!outcome.ok) {
          non2xx++;
          firstFailure ??= outcome.why;
        }
      } catch (error) {
        if (error instanceof RanOut) break;
        if (performance.now() > deadline) break;
        networkErrors++;
        firstFailure ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        conn.fail(error instanceof Error ? error : new Error(String(error)));
        // A refused port must not spin the CPU.
        await Bun.sleep(10);
      }
    }
    conn.close();
  };
  // Requests still unanswered at the deadline are not counted; give them a moment, then cut.
  const cut = setTimeout(() => {
    for (const conn of connections) conn.fail(new NetworkError("cut at the end of the run"));
  }, input.durationMs + 1_000);
  await Promise.all(Array.from({ length: input.connections }, user));
  clearTimeout(cut);
  clearInterval(watchdog);
  // A replay that ran out ends when its last answer came.
  const ranOut = input.flow.flow === "replay" && sent !== undefined && sent.length >= input.flow.bodies.length;
  const durationMs = (ranOut ? Math.min(lastEnd, deadline) : deadline) - started;
  return {
    requests: latencies.count,
    non2xx,
    networkErrors,
    durationMs,
    latencyMs: latencies.summary(),
    httpRequests: counters.http,
    firstFailure,
    ...(sent ? { sent } : {}),
  };
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: bun bench/load/flow-driver.ts <input.json>\n");
    process.exit(2);
  }
  const input = JSON.parse(readFileSync(file, "utf8")) as FlowDriverInput;
  const output = await driveFlows(input);
  process.stdout.write(`${JSON.stringify(output)}\n`);
  process.exit(0);
}
