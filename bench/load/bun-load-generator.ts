/**
 * The fallback load generator, for machines without `wrk`: a separate Bun process that keeps N HTTP/1.1
 * keep-alive connections busy for a fixed time, one request in flight per connection, and records every
 * request's latency.
 *
 *   bun bench/load/bun-load-generator.ts '<LoadGeneratorInput as JSON>'
 *
 * Prints one {@link LoadGeneratorOutput} as JSON on stdout. It speaks HTTP/1.1 over `Bun.connect`
 * instead of calling `fetch`: on a 2-core machine the generator shares the CPU with the server, and a
 * fetch loop reached ~58k requests/s against the bare Elysia route where wrk reached ~89k, which would
 * flatter every ratio. Responses are framed by `content-length` or `transfer-encoding: chunked`; a
 * response with neither is read until the server closes the connection.
 */
import type { Socket } from "bun";
import { Latencies } from "./latencies.ts";

export interface LoadGeneratorInput {
  url: string;
  connections: number;
  durationMs: number;
  /** A request still unanswered after this long counts as a network error and its connection is redone. */
  timeoutMs: number;
  request: { method: string; path: string; headers: Record<string, string>; body?: string };
}

export interface LoadGeneratorOutput {
  requests: number;
  non2xx: number;
  networkErrors: number;
  durationMs: number;
  /** Null when no request completed. */
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; max: number | null; mean: number | null };
}

const CRLFCRLF = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");

/** Where the first complete response in `buf` ends, and its status; undefined when more bytes are needed. */
export function frameResponse(buf: Buffer, closed: boolean): { status: number; end: number } | undefined {
  const headerEnd = buf.indexOf(CRLFCRLF);
  if (headerEnd < 0) return undefined;
  const head = buf.toString("latin1", 0, headerEnd);
  const status = Number(head.slice(9, 12));
  const bodyStart = headerEnd + 4;
  // 1xx, 204 and 304 have no body whatever the headers say.
  if ((status >= 100 && status < 200) || status === 204 || status === 304) return { status, end: bodyStart };
  const lower = head.toLowerCase();
  const length = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
  if (length) {
    const end = bodyStart + Number(length[1]);
    return buf.length >= end ? { status, end } : undefined;
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
    let at = bodyStart;
    for (;;) {
      const lineEnd = buf.indexOf(CRLF, at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(buf.toString("latin1", at, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error("malformed chunk size");
      if (size === 0) {
        // Optional trailers, then an empty line.
        const trailerEnd = buf.indexOf(CRLF, lineEnd + 2) === lineEnd + 2 ? lineEnd + 4 : buf.indexOf(CRLFCRLF, lineEnd) + 4;
        if (trailerEnd < 4 || buf.length < trailerEnd) return undefined;
        return { status, end: trailerEnd };
      }
      at = lineEnd + 2 + size + 2;
      if (buf.length < at) return undefined;
    }
  }
  return closed ? { status, end: buf.length } : undefined;
}

function encodeRequest(url: URL, request: LoadGeneratorInput["request"]): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)]);
}

interface Connection {
  pending: Buffer | undefined;
  sentAt: number;
  inFlight: boolean;
}

/** Runs the load described by `input` and resolves with what was measured. */
export async function generateLoad(input: LoadGeneratorInput): Promise<LoadGeneratorOutput> {
  const url = new URL(input.url);
  const wire = encodeRequest(url, input.request);
  const latencies = new Latencies();
  let non2xx = 0;
  let networkErrors = 0;
  const started = performance.now();
  const deadline = started + input.durationMs;
  const sockets = new Set<Socket<Connection>>();
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let open = 0;

  const send = (socket: Socket<Connection>) => {
    socket.data.sentAt = performance.now();
    socket.data.inFlight = true;
    socket.write(wire);
  };
  const connect = (): void => {
    if (performance.now() >= deadline) return;
    open++;
    void Bun.connect<Connection>({
      hostname: url.hostname,
      port: Number(url.port || 80),
      data: { pending: undefined, sentAt: 0, inFlight: false },
      socket: {
        open(socket) {
          sockets.add(socket);
          send(socket);
        },
        data(socket, chunk) {
          const c = socket.data;
          let buf = c.pending ? Buffer.concat([c.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          for (;;) {
            const frame = frameResponse(buf, false);
            if (!frame) break;
            const now = performance.now();
            if (now <= deadline) {
              latencies.add(now - c.sentAt);
              if (frame.status < 200 || frame.status > 299) non2xx++;
            }
            c.inFlight = false;
            buf = buf.subarray(frame.end);
            if (now >= deadline) {
              socket.end();
              return;
            }
            send(socket);
          }
          c.pending = buf.length > 0 ? Buffer.from(buf) : undefined;
        },
        close(socket) {
          const c = socket.data;
          if (c.inFlight && c.pending) {
            const frame = frameResponse(c.pending, true);
            if (frame && performance.now() <= deadline) {
              latencies.add(performance.now() - c.sentAt);
              if (frame.status < 200 || frame.status > 299) non2xx++;
              c.inFlight = false;
            }
          }
          if (c.inFlight && performance.now() < deadline) networkErrors++;
          sockets.delete(socket);
          closed();
        },
        error(socket) {
          socket.end();
        },
      },
    }).catch(() => {
      if (performance.now() < deadline) networkErrors++;
      closed();
    });
  };
  const closed = () => {
    open--;
    // Reconnect after a short pause so a refused port does not spin the CPU.
    if (performance.now() < deadline) setTimeout(connect, 10);
    else if (open === 0) finish();
  };

  const watchdog = setInterval(() => {
    const now = performance.now();
    for (const socket of sockets) {
      if (socket.data.inFlight && now - socket.data.sentAt > input.timeoutMs) socket.terminate();
    }
    if (now >= deadline) for (const socket of sockets) if (!socket.data.inFlight) socket.end();
  }, 100);
  const stopAt = setTimeout(() => {
    // Requests still in flight at the deadline are not counted; give them a moment, then cut.
    setTimeout(() => {
      for (const socket of sockets) socket.terminate();
      if (open <= 0) finish();
    }, 1_000);
  }, input.durationMs);

  for (let i = 0; i < input.connections; i++) connect();
  await finished;
  clearInterval(watchdog);
  clearTimeout(stopAt);
  const elapsed = Math.min(performance.now(), deadline) - started;
  return { requests: latencies.count, non2xx, networkErrors, durationMs: elapsed, latencyMs: latencies.summary() };
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? "null") as LoadGeneratorInput | null;
  if (!input) {
    process.stderr.write("usage: bun bench/load/bun-load-generator.ts '<json>'\n");
    process.exit(2);
  }
  const output = await generateLoad(input);
  process.stdout.write(`${JSON.stringify(output)}\n`);
}
