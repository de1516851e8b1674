/**
 * The per-process caches of the hot reads (src/services/expiring-map.ts): an entry is answered until its time
 * is up and never after, and a full map drops the entry set longest ago.
 */
import { describe, expect, it } from "bun:test";
import { ExpiringMap } from "../../src/services/expiring-map.ts";
import { waitUntil } from "../support/wait.ts";

describe("ExpiringMap", () => {
  it("answers an entry until it expires, then forgets it", async () => {
    const map = new ExpiringMap<string, number>(10, 30);
    map.set("a", 1);
    expect(map.get("a")).toBe(1);
    expect(map.get("b")).toBeUndefined();
    await waitUntil(() => map.get("a") === undefined, { what: "the entry to expire" });
    expect(map.size).toBe(0);
  });

  it("drops the entry set longest ago when full; setting a key again makes it the newest", () => {
    const map = new ExpiringMap<string, number>(2, 60_000);
    map.set("a", 1);
    map.set("b", 2);
    map.set("a", 3);
    map.set("c", 4);
    expect([map.get("a"), map.get("b"), map.get("c"), map.size]).toEqual([3, undefined, 4, 2]);
    expect(map.delete("a")).toBe(true);
    expect(map.get("a")).toBeUndefined();
  });

  it("refuses a size or a lifetime that would keep nothing", () => {
    expect(() => new ExpiringMap(0, 1000)).toThrow(RangeError);
    expect(() => new ExpiringMap(10, 0)).toThrow(RangeError);
  });
});
