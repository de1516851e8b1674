/**
 * Errors that Bun's HTTP server used to answer itself, with a bare status line and no body, now reach the
 * gateway and come in the contract's shape (src/http/listener.ts, header-limit.ts, body-limit.ts): a head
 * over 16 KiB (431), a body declared or streamed over 64 KiB (413, also past Bun's own 128 MiB limit), and
 * tRPC's early refusals (a batch call) as `application/json`. Over a real socket, bytes as a client sends them.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { connect } from "node:net";
import { MAX_HEADER_BYTES, PARSER_MAX_HEADER_BYTES } from "../../src/http/header-limit.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let tg: TestGateway;
let port: number;
let base: string;
let tenantToken: string;

beforeAll(async () => {
  tg = await startTestGateway();
  base = (await tg.gateway.start({ workers: false })).url!;
  port = Number(new URL(base).port);
  tenantToken = await tg.tenantToken(await tg.insertTenant());
}, 60_000);

afterAll(() => tg?.close(), 30_000);

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (and `body`, written after it) on a fresh connection and reads the one answer until the server closes. */
function raw(head: string, body: Uint8Array | string = ""): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(head);
      if (body.length > 0) socket.write(body);
    });
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error) => (chunks.length > 0 ? socket.destroy() : reject(error)));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body: Buffer.from(text.slice(split + 4), "latin1").toString("utf8") });
    });
  });
}

/** The answer is the contract's error body with `status` and `code`, as JSON, its request id in the header. */
function expectContractError(answer: RawAnswer, status: number, code: string): Record<string, unknown> {
  expect({ status: answer.status, type: answer.headers["content-type"] }).toEqual({ status, type: "application/json" });
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect({ statusCode: body.statusCode, code: body.code, error: typeof body.error, message: typeof body.message }).toEqual({
    statusCode: status,
    code,
    error: "string",
    message: "string",
  });
  expect(body.requestId).toBe(answer.headers["x-request-id"]!);
  return body;
}

const request = (method: string, path: string, fields: string[] = []) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n${fields.map((field) => `${field}\r\n`).join("")}\r\n`;

describe("a request head over the gateway's limit (431)", () => {
  it("is 431 headers_too_large in the contract's shape, on REST, provider webhooks and plain routes alike", async () => {
    const cookie = `cookie: ${"a".repeat(MAX_HEADER_BYTES)}`;
    for (const [method, path] of [
      ["GET", "/payments"],
      ["POST", "/providerA/webhook/sandbox"],
      ["GET", "/health/live"],
      ["GET", "/nowhere"],
    ]) {
      const body = expectContractError(await raw(request(method!, path!, [`authorization: Bearer ${tenantToken}`, cookie])), 431, "headers_too_large");
      expect(body).toMatchObject({ error: "Request Header Fields Too Large", message: `Request line and headers are larger than ${MAX_HEADER_BYTES} bytes` });
    }
    // A long request line counts too.
    expectContractError(await raw(request("GET", `/payments?reference=${"r".repeat(MAX_HEADER_BYTES)}`)), 431, "headers_too_large");
  });

  it("answers on /trpc in tRPC's envelope, JSON, with the contract's body inside", async () => {
    const answer = await raw(request("GET", "/trpc/auth.whoami", [`x-padding: ${"p".repeat(MAX_HEADER_BYTES)}`]));
    expect({ status: answer.status, type: answer.headers["content-type"] }).toEqual({ status: 431, type: "application/json" });
    const { error } = JSON.parse(answer.body) as { error: { data: { httpStatus: number; code: string; httpBody: { code: string; requestId: string } } } };
    expect(error.data).toMatchObject({
      httpStatus: 431,
      code: "BAD_REQUEST",
      httpBody: { code: "headers_too_large", requestId: answer.headers["x-request-id"] },
    });
  });

  it("leaves a head just under the limit alone, and reaches the gateway up to Bun's raised parser limit", async () => {
    const fits = await raw(request("GET", "/health/live", [`x-padding: ${"p".repeat(MAX_HEADER_BYTES - 200)}`]));
    expect(fits.status).toBe(200);
    // Between the gateway's 16 KiB and Bun's default 16 KiB parser limit, up to the raised one: the gateway answers.
    const answer = await raw(request("GET", "/health/live", [`x-padding: ${"p".repeat(PARSER_MAX_HEADER_BYTES - 1024)}`]));
    expectContractError(answer, 431, "headers_too_large");
  });
});

describe("a body over 64 KiB (413)", () => {
  const directPayment = (fields: string[]) =>
    request("POST", "/providerA/direct-payment", [`authorization: Bearer ${tenantToken}`, "content-type: application/json", ...fields]);

  it("is 413 payload_too_large when Content-Length says so, even past Bun's own 128 MiB limit, before the body is sent", async () => {
    for (const length of [64 * 1024 + 1, 200 * 1024 * 1024, 10 ** 15]) {
      const body = expectContractError(await raw(directPayment([`content-length: ${length}`])), 413, "payload_too_large");
      expect(body.message).toBe("Request body is larger than 65536 bytes");
    }
    expectContractError(
      await raw(request("POST", "/providerA/webhook/sandbox", ["content-type: application/json", "content-length: 300000000"])),
      413,
      "payload_too_large",
    );
  });

  it("is 413 for a chunked body once 64 KiB have arrived, on REST and on /trpc", async () => {
    const chunk = `4000\r\n${"x".repeat(0x4000)}\r\n`;
    const chunked = `${chunk.repeat(6)}0\r\n\r\n`;
    expectContractError(await raw(directPayment(["transfer-encoding: chunked"]), chunked), 413, "payload_too_large");
    const trpc = await raw(
      request("POST", "/trpc/payouts.create", [`authorization: Bearer ${tenantToken}`, "content-type: application/json", "transfer-encoding: chunked"]),
      chunked,
    );
    expect({ status: trpc.status, type: trpc.headers["content-type"] }).toEqual({ status: 413, type: "application/json" });
    expect((JSON.parse(trpc.body) as { error: { data: { httpBody: { code: string } } } }).error.data.httpBody.code).toBe("payload_too_large");
  });

  it("still reads a chunked body under the limit", async () => {
    const json = JSON.stringify({ grant_type: "client_credentials", client_id: "key_nope", client_secret: "psk_sandbox_nope" });
    const answer = await raw(
      request("POST", "/auth/token", ["content-type: application/json", "transfer-encoding: chunked"]),
      `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    );
    expect(answer.status).toBe(401); // read and parsed: the credentials are refused, not the body
    expect(JSON.parse(answer.body)).toMatchObject({ code: "unauthorized" });
  });
});

describe("tRPC's own refusals", () => {
  it("are JSON (application/json), a batch call included", async () => {
    for (const [method, path] of [
      ["GET", "/trpc/auth.whoami,auth.whoami?batch=1&input=%7B%7D"],
      ["GET", "/trpc/auth.whoami?batch=1"],
      ["POST", "/trpc/auth.whoami?batch=1"],
      ["POST", "/trpc/auth.whoami"],
      ["GET", "/trpc/nowhere"],
    ] as const) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${tenantToken}`, "content-type": "application/json" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect({ path, status: response.status >= 400, type: response.headers.get("content-type") }).toEqual({ path, status: true, type: "application/json" });
      const { error } = (await response.json()) as { error: { data: { httpBody: { requestId: string } } } };
      expect(error.data.httpBody.requestId).toBe(response.headers.get("x-request-id")!);
    }
  });
});
