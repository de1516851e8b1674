/**
 * Provider B's adapter without a server: the three IPN body forms, the hash check, and the state order.
 */
import { describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import {
  ipnHashOf,
  ipnSubject,
  parseIpnBody,
  verifyIpnHash,
  withoutHash,
  hashDigest,
  verifyHashDigest,
  IpnBodyError,
} from "../../../src/providers/providerB/ipn.ts";
import { mayMove } from "../../../src/services/payments/state-order.ts";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";

const data = {
  response_code: "00",
  hash: ipnHashOf("mk_test_1"),
  invoice: { token: "test_abc123", total_amount: "5000" },
  status: "completed",
  custom_data: { orderRef: "ORD-1", quantity: "3" },
  customer: { name: "Awa", payment_method: "wave-senegal" },
  mode: "test",
};

describe("parseIpnBody", () => {
  it("reads provider B's PHP bracket form", () => {
    const parsed = parseIpnBody("application/x-www-form-urlencoded", encodePhpForm({ data }));
    expect(parsed).toEqual(data);
    expect(ipnSubject(parsed)).toEqual({ kind: "checkout", token: "test_abc123" });
  });
  it("reads a data=<json> field and JSON bodies with or without the data envelope", () => {
    expect(parseIpnBody("application/x-www-form-urlencoded", `data=${encodeURIComponent(JSON.stringify(data))}`)).toEqual(data);
    expect(parseIpnBody("application/json", JSON.stringify({ data }))).toEqual(data);
    expect(parseIpnBody("application/json", JSON.stringify(data))).toEqual(data);
  });
  it("finds permit tokens, and no token in a probe", () => {
    expect(ipnSubject({ permit: { token: "prm_tok" } })).toEqual({ kind: "permit", token: "prm_tok" });
    expect(ipnSubject(parseIpnBody("application/x-www-form-urlencoded", ""))).toBeNull();
  });
  it("refuses malformed bodies and keeps prototype keys out", () => {
    expect(() => parseIpnBody("application/json", "{")).toThrow(IpnBodyError);
    expect(() => parseIpnBody("application/x-www-form-urlencoded", "data=%7Bnot-json")).toThrow(IpnBodyError);
    const parsed = parseIpnBody("application/x-www-form-urlencoded", "data[__proto__][polluted]=1&data[invoice][token]=t");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(ipnSubject(parsed)?.token).toBe("t");
  });
});

describe("verifyIpnHash", () => {
  it("accepts the SHA-512 hex of the master key, in either case, and nothing else", () => {
    const hash = createHash("sha512").update("mk_test_1").digest("hex");
    expect(verifyIpnHash(hash, "mk_test_1")).toBe(true);
    expect(verifyIpnHash(hash.toUpperCase(), "mk_test_1")).toBe(true);
    expect(verifyIpnHash(hash, "mk_test_2")).toBe(false);
    expect(verifyIpnHash(hash.slice(1), "mk_test_1")).toBe(false);
    expect(verifyIpnHash(undefined, "mk_test_1")).toBe(false);
    expect(verifyIpnHash(["x"], "mk_test_1")).toBe(false);
  });
  it("keeps a digest of the hash for orphans, and strips the hash from what is stored", () => {
    expect(verifyHashDigest(hashDigest(ipnHashOf("mk")), "mk")).toBe(true);
    expect(verifyHashDigest(hashDigest(ipnHashOf("mk")), "other")).toBe(false);
    expect(withoutHash(data)).not.toHaveProperty("hash");
  });
});

describe("mayMove", () => {
  it("lets completed win over cancelled and failed, and keeps completed final", () => {
    expect(mayMove("pending", "succeeded")).toBe(true);
    expect(mayMove("cancelled", "succeeded")).toBe(true);
    expect(mayMove("failed", "succeeded")).toBe(true);
    expect(mayMove("succeeded", "cancelled")).toBe(false);
    expect(mayMove("succeeded", "failed")).toBe(false);
    expect(mayMove("pending", "pending")).toBe(false);
  });
});
