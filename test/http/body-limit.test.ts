import { describe, expect, it } from "bun:test";
import { PayloadTooLargeError } from "../../src/errors.ts";
import { MAX_BODY_BYTES, readRawBody, readTextBody } from "../../src/http/body-limit.ts";

const post = (body: BodyInit, headers: Record<string, string> = {}) => new Request("http://gateway.test/x", { method: "POST", body, headers });

/** A body sent in chunks with no Content-Length, as a chunked upload arrives. */
function streamed(bytes: number): Request {
  const chunk = new Uint8Array(1024).fill(0x61);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      sent += part.length;
      controller.enqueue(part);
    },
  });
  // @ts-expect-error Bun accepts duplex for streamed request bodies
  return new Request("http://gateway.test/x", { method: "POST", body: stream, duplex: "half" });
}

describe("body limit", () => {
  it("is contract §1's 64 KiB", () => {
    expect(MAX_BODY_BYTES).toBe(65_536);
  });

  it("reads a body of exactly the limit, and an empty one", async () => {
    const exact = await readRawBody(post(new Uint8Array(MAX_BODY_BYTES).fill(1)));
    expect(exact.byteLength).toBe(MAX_BODY_BYTES);
    expect((await readRawBody(post(""))).byteLength).toBe(0);
    expect((await readRawBody(streamed(MAX_BODY_BYTES))).byteLength).toBe(MAX_BODY_BYTES);
  });

  it("refuses a declared Content-Length over the limit before reading a byte", async () => {
    const request = post("small", { "content-length": String(MAX_BODY_BYTES + 1) });
    const error = await readRawBody(request).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large", message: `Request body is larger than ${MAX_BODY_BYTES} bytes` });
    expect(request.bodyUsed).toBe(false);
  });

  it("refuses a body that turns out larger than the limit when read (no or a lying Content-Length)", async () => {
    await expect(readRawBody(streamed(MAX_BODY_BYTES + 1))).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(readTextBody(streamed(MAX_BODY_BYTES + 1))).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(readRawBody(post(new Uint8Array(MAX_BODY_BYTES + 1), { "content-length": "10" }))).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(readRawBody(post(new Uint8Array(MAX_BODY_BYTES + 1), { "content-length": "abc" }))).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it("decodes text as UTF-8", async () => {
    expect(await readTextBody(post("amount=5&name=Abé"))).toBe("amount=5&name=Abé");
  });
});
