/**
 * The delivery path's shortcuts (issue 8): opened signing secrets kept, DNS answers and URL checks reused —
 * each still giving the answer the long way would. Its statements compiled once (`src/db/precompiled.ts`,
 * per shape) are tested in write-path-caches.test.ts, and through every delivery test.
 */
import { beforeAll, describe, expect, it } from "bun:test";
import { createKeyring, SealError, type Keyring } from "../../../src/crypto/seal.ts";
import { createGatewayCaches, type GatewayCaches } from "../../../src/services/caches.ts";
import { openSigningSecrets, OPENED_SECRETS_MAX } from "../../../src/services/webhooks/signing-secrets.ts";
import { cachingLookup, createTargetCaches, resolveSafeAddress, type LookupFunction } from "../../../src/services/webhooks/url-safety.ts";

describe("openSigningSecrets", () => {
  let keyring: Keyring;
  /** What a gateway's deliveries pass: its keyring and its caches. */
  let gateway: { keyring: Keyring; caches: GatewayCaches };
  let opened: number;
  beforeAll(async () => {
    const ring = await createKeyring([{ version: 1, key: Buffer.alloc(32, 7) }]);
    opened = 0;
    keyring = { ...ring, open: (sealed, context) => (opened++, ring.open(sealed, context)) };
    gateway = { keyring, caches: createGatewayCaches() };
  });
  const context = { tenantId: "ten_a", field: "webhookEndpoint.secret" };

  it("opens each sealed value once, in order, and serves it from memory afterwards", async () => {
    const sealed = [await keyring.seal("whsec_new", context), await keyring.seal("whsec_old", context)];
    opened = 0;
    expect(await openSigningSecrets(gateway, sealed, context)).toEqual(["whsec_new", "whsec_old"]);
    expect(await openSigningSecrets(gateway, sealed, context)).toEqual(["whsec_new", "whsec_old"]);
    expect(opened).toBe(2);
    expect(await openSigningSecrets(gateway, [], context)).toEqual([]);
  });

  it("opens afresh, and refuses, a value copied to another tenant or field; a failure is not kept", async () => {
    const sealed = await keyring.seal("whsec_a", context);
    expect(await openSigningSecrets(gateway, [sealed], context)).toEqual(["whsec_a"]);
    await expect(openSigningSecrets(gateway, [sealed], { ...context, tenantId: "ten_b" })).rejects.toBeInstanceOf(SealError);
    await expect(openSigningSecrets(gateway, [sealed], { ...context, field: "tenant.callback" })).rejects.toBeInstanceOf(SealError);
    opened = 0;
    await expect(openSigningSecrets(gateway, [sealed], { ...context, tenantId: "ten_b" })).rejects.toBeInstanceOf(SealError);
    expect(opened).toBe(1);
  });

  it("stays bounded", async () => {
    const other = await createKeyring([{ version: 1, key: Buffer.alloc(32, 9) }]);
    let count = 0;
    const counting: Keyring = { ...other, open: (sealed, ctx) => (count++, other.open(sealed, ctx)) };
    const bounded = { keyring: counting, caches: createGatewayCaches() };
    const first = await counting.seal("whsec_first", context);
    await openSigningSecrets(bounded, [first], context);
    for (let i = 0; i < OPENED_SECRETS_MAX; i++) await openSigningSecrets(bounded, [await counting.seal(`whsec_${i}`, context)], context);
    count = 0;
    expect(await openSigningSecrets(bounded, [first], context)).toEqual(["whsec_first"]);
    expect(count).toBe(1); // dropped, opened again
  });
});

describe("cachingLookup and the URL checks", () => {
  it("reuses a name's answers until the TTL, then asks again; failures and empty answers are not kept", async () => {
    const calls: string[] = [];
    let answer = "93.184.216.34";
    const fake: LookupFunction = async (hostname) => {
      calls.push(hostname);
      if (hostname === "fails.test") throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
      if (hostname === "empty.test") return [];
      return [{ address: answer, family: 4 }];
    };
    // The TTL on a clock of the test's: a busy machine cannot make the two reads within it fall apart.
    let nowMs = 1_000_000;
    const lookup = cachingLookup(fake, 60, undefined, () => nowMs);
    const policy = { environment: "live", allowPrivateTargets: false, lookup } as const;
    expect((await resolveSafeAddress("https://hooks.merchant.test/a", policy)).address).toBe("93.184.216.34");
    answer = "10.0.0.5";
    expect((await resolveSafeAddress("https://hooks.merchant.test/b", policy)).address).toBe("93.184.216.34");
    expect(calls).toEqual(["hooks.merchant.test"]);
    nowMs += 60;
    // The new answer is checked like any other: a private address is refused.
    await expect(resolveSafeAddress("https://hooks.merchant.test/a", policy)).rejects.toThrow("hooks.merchant.test resolves to 10.0.0.5, a private address");
    // The same cached answer under another policy gets that policy.
    expect((await resolveSafeAddress("https://hooks.merchant.test/a", { ...policy, allowPrivateTargets: true })).address).toBe("10.0.0.5");
    expect(calls).toHaveLength(2);

    for (let i = 0; i < 2; i++) {
      await expect(resolveSafeAddress("https://fails.test/", policy)).rejects.toThrow("nope");
      await expect(resolveSafeAddress("https://empty.test/", policy)).rejects.toThrow("returned no address");
    }
    expect(calls.filter((c) => c === "fails.test")).toHaveLength(2);
    expect(calls.filter((c) => c === "empty.test")).toHaveLength(2);
  });

  it("checks the same URL under each policy on its own", async () => {
    const caches = createTargetCaches();
    const sandbox = { environment: "sandbox", allowPrivateTargets: true, caches } as const;
    expect((await resolveSafeAddress("http://127.0.0.1:9/in", sandbox)).address).toBe("127.0.0.1");
    await expect(resolveSafeAddress("http://127.0.0.1:9/in", { ...sandbox, allowPrivateTargets: false })).rejects.toThrow("must not point at a private");
    await expect(resolveSafeAddress("http://127.0.0.1:9/in", { ...sandbox, environment: "live" })).rejects.toThrow("must use https in live");
    expect((await resolveSafeAddress("http://127.0.0.1:9/in", sandbox)).address).toBe("127.0.0.1");
    expect(caches.checks.size).toBe(3); // one remembered check per policy
  });
});
