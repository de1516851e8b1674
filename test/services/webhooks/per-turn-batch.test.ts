/** `perTurnBatch`: requests of one task go together; with `maxInFlight`, those made while a call runs go together next. */
import { describe, expect, it } from "bun:test";
import { perTurnBatch } from "../../../src/services/webhooks/per-turn-batch.ts";

/** A batcher whose calls are recorded and finish when the test says so. */
function controlled(maxInFlight?: number) {
  const calls: { items: string[]; finish: () => void; fail: (err: Error) => void }[] = [];
  const scope = {};
  const batched = perTurnBatch<object, string, string>(
    (_, items) =>
      new Promise((resolve, reject) => {
        calls.push({ items, finish: () => resolve(items.map((i) => `${i}!`)), fail: reject });
      }),
    (item) => item.split("#")[0]!,
    maxInFlight === undefined ? {} : { maxInFlight },
  );
  return { calls, request: (item: string) => batched(scope, item) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("perTurnBatch", () => {
  it("sends the requests of one task as one call, and each gets its own result", async () => {
    const { calls, request } = controlled();
    const results = Promise.all(["a", "b", "c"].map(request));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([["a", "b", "c"]]);
    calls[0]!.finish();
    expect(await results).toEqual(["a!", "b!", "c!"]);
  });

  it("with maxInFlight 1, gathers the requests made while a call runs into the next call", async () => {
    const { calls, request } = controlled(1);
    const first = request("a");
    await tick();
    const later = Promise.all([request("b"), request("c")]);
    await tick();
    request("d");
    await tick();
    expect(calls.map((c) => c.items)).toEqual([["a"]]);
    calls[0]!.finish();
    expect(await first).toBe("a!");
    await tick();
    expect(calls.map((c) => c.items)).toEqual([["a"], ["b", "c", "d"]]);
    calls[1]!.finish();
    expect(await later).toEqual(["b!", "c!"]);
  });

  it("runs a request whose id is in a running call, or already in the batch, after that call", async () => {
    const { calls, request } = controlled(2);
    const results = Promise.all([request("a#1"), request("a#2"), request("b")]);
    await tick();
    expect(calls.map((c) => c.items)).toEqual([["a#1", "b"]]);
    calls[0]!.finish();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([["a#1", "b"], ["a#2"]]);
    calls[1]!.finish();
    expect(await results).toEqual(["a#1!", "a#2!", "b!"]);
  });

  it("rejects every request of a call that fails, and goes on with the next", async () => {
    const { calls, request } = controlled(1);
    const failing = Promise.allSettled([request("a"), request("b")]);
    await tick();
    const next = request("c");
    calls[0]!.fail(new Error("database down"));
    expect((await failing).map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await tick();
    calls[1]!.finish();
    expect(await next).toBe("c!");
  });

  it("refuses a maxInFlight below 1", () => {
    expect(() => perTurnBatch(async () => [], String, { maxInFlight: 0 })).toThrow(RangeError);
  });
});
