/**
 * Outbound URL safety (contract §7, issue 4 point 6). Only loopback is ever contacted: "public" hosts are
 * checked by validation alone, or reached through an injected lookup that answers 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ValidationError } from "../../../src/errors.ts";
import { safeFetch, TargetUnreachableError, type SafeFetchInit } from "../../../src/services/webhooks/safe-fetch.ts";
import { classifyAddress, resolveSafeAddress, UnsafeTargetError, validateTargetUrl, type LookupFunction } from "../../../src/services/webhooks/url-safety.ts";

const SANDBOX = { field: "url", environment: "sandbox", allowPrivateTargets: false } as const;
const LIVE = { field: "url", environment: "live", allowPrivateTargets: false } as const;
const ADDRESS_RULE = "url must not point at a private, loopback, link-local or metadata address";

/** The messages of the ValidationError that `fn` throws. */
function messagesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).messages;
  }
  throw new Error("expected a ValidationError");
}

/** A resolver that answers from a table; any other name is unknown. Records what it was asked. */
function fakeLookup(table: Record<string, string[]>): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

describe("validateTargetUrl (save time)", () => {
  it.each([
    ["http://127.0.0.1/hook"],
    ["http://10.1.2.3/hook"],
    ["http://172.16.0.1/hook"],
    ["http://192.168.1.1/hook"],
    ["http://100.64.0.1/hook"],
    ["http://169.254.169.254/latest/meta-data/"],
    ["http://0.0.0.0/"],
    ["http://224.0.0.1/"],
    ["http://255.255.255.255/"],
    ["http://[::1]/hook"],
    ["http://[::]/hook"],
    ["http://[fc00::1]/hook"],
    ["http://[fe80::1]/hook"],
    ["http://[fd00:ec2::254]/latest/meta-data/"],
    ["http://[::ffff:127.0.0.1]/hook"],
    ["http://[::ffff:169.254.169.254]/"],
    ["http://[::10.0.0.1]/hook"],
    ["http://[64:ff9b::10.0.0.1]/hook"],
    ["http://2130706433/"],
    ["http://0x7f.1/"],
    ["http://0177.0.0.1/"],
    ["http://127。0。0。1/"],
    ["http://ｌｏｃａｌｈｏｓｔ/"],
    ["http://localhost:3000/hook"],
    ["http://LOCALHOST./hook"],
    ["http://api.localhost/hook"],
    ["http://metadata.google.internal/computeMetadata/v1/"],
    ["http://db.internal/"],
  ])("refuses %s", (url) => {
    expect(messagesOf(() => validateTargetUrl(url, SANDBOX))).toEqual([ADDRESS_RULE]);
  });

  it.each([
    ["http://93.184.216.34/hook", "http://93.184.216.34/hook"],
    ["https://hooks.merchant.example/in?x=1", "https://hooks.merchant.example/in?x=1"],
    ["https://[2606:4700:4700::1111]/hook", "https://[2606:4700:4700::1111]/hook"],
    ["https://[64:ff9b::93.184.216.34]/hook", "https://[64:ff9b::5db8:d822]/hook"],
    ["HTTPS://Hooks.Merchant.Example:443/in", "https://hooks.merchant.example/in"],
  ])("accepts the public %s and returns it normalised", (url, normalised) => {
    expect(validateTargetUrl(url, SANDBOX)).toBe(normalised);
  });

  it("normalises the decimal form of an address before judging it", () => {
    expect(validateTargetUrl("http://1572395042/", SANDBOX)).toBe("http://93.184.216.34/");
  });

  it("requires https in live and accepts it", () => {
    expect(messagesOf(() => validateTargetUrl("http://hooks.merchant.example/in", LIVE))).toEqual(["url must use https in live"]);
    expect(validateTargetUrl("https://hooks.merchant.example/in", LIVE)).toBe("https://hooks.merchant.example/in");
  });

  it("refuses a URL longer than 2048 characters and accepts one of exactly 2048", () => {
    const base = "https://hooks.merchant.example/";
    expect(validateTargetUrl(base + "a".repeat(2048 - base.length), SANDBOX)).toHaveLength(2048);
    expect(messagesOf(() => validateTargetUrl(base + "a".repeat(2049 - base.length), SANDBOX))).toEqual(["url must be at most 2048 characters"]);
  });

  it.each([
    ["ftp://files.merchant.example/in"],
    ["/webhooks/in"],
    ["hooks.merchant.example/in"],
    ["javascript:alert(1)"],
    ["http:hooks.merchant.example"],
    [""],
  ])("refuses %p as not an absolute http(s) URL", (url) => {
    expect(messagesOf(() => validateTargetUrl(url, SANDBOX))).toEqual(["url must be an absolute http(s) URL"]);
  });

  it("refuses credentials in the URL", () => {
    expect(messagesOf(() => validateTargetUrl("https://user:secret@hooks.merchant.example/in", SANDBOX))).toEqual(["url must not contain credentials"]);
    expect(messagesOf(() => validateTargetUrl("https://token@hooks.merchant.example/in", SANDBOX))).toEqual(["url must not contain credentials"]);
  });

  it("names the field it was given and reports every broken rule", () => {
    expect(messagesOf(() => validateTargetUrl("http://127.0.0.1/cb", { ...LIVE, field: "callback_url" }))).toEqual([
      "callback_url must use https in live",
      "callback_url must not point at a private, loopback, link-local or metadata address",
    ]);
  });

  it("with allowPrivateTargets lifts the address rule but not https in live", () => {
    const allow = { ...SANDBOX, allowPrivateTargets: true };
    expect(validateTargetUrl("http://127.0.0.1:4000/hook", allow)).toBe("http://127.0.0.1:4000/hook");
    expect(validateTargetUrl("http://localhost:4000/hook", allow)).toBe("http://localhost:4000/hook");
    expect(validateTargetUrl("http://[::1]/hook", allow)).toBe("http://[::1]/hook");
    expect(messagesOf(() => validateTargetUrl("http://127.0.0.1:4000/hook", { ...LIVE, allowPrivateTargets: true }))).toEqual(["url must use https in live"]);
    expect(validateTargetUrl("https://127.0.0.1:4000/hook", { ...LIVE, allowPrivateTargets: true })).toBe("https://127.0.0.1:4000/hook");
  });
});

describe("classifyAddress", () => {
  it.each([
    ["93.184.216.34", "public"],
    ["127.0.0.1", "loopback"],
    ["10.0.0.5", "private"],
    ["169.254.169.254", "cloud metadata"],
    ["169.254.1.1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["192.0.2.1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["fd00:ec2::254", "cloud metadata"],
    ["fc00::1", "private"],
    ["fec0::1", "private"],
    ["fe80::1", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:0:7f00:1", "loopback"],
    ["::7f00:1", "loopback"],
    ["::5db8:d822", "reserved"],
    ["64:ff9b::a00:1", "private"],
    ["64:ff9b::5db8:d822", "public"],
    ["2002:a9fe:a9fe::1", "cloud metadata"],
    ["2001:db8::1", "reserved"],
    ["2606:4700:4700::1111", "public"],
    ["[::1]", "loopback"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind as ReturnType<typeof classifyAddress>);
  });
});

describe("resolveSafeAddress (connect time)", () => {
  const policy = { environment: "sandbox", allowPrivateTargets: false } as const;

  it("refuses a hostname that resolves to a private address", async () => {
    const lookup = fakeLookup({ "hooks.merchant.test": ["10.0.0.5"] });
    const refusal = resolveSafeAddress("https://hooks.merchant.test/in", { ...policy, lookup });
    await expect(refusal).rejects.toBeInstanceOf(UnsafeTargetError);
    await expect(refusal).rejects.toThrow("hooks.merchant.test resolves to 10.0.0.5, a private address");
  });

  it("refuses a hostname with a mix of public and private answers, whichever comes first", async () => {
    for (const answers of [
      ["93.184.216.34", "127.0.0.1"],
      ["::1", "93.184.216.34"],
    ]) {
      const lookup = fakeLookup({ "hooks.merchant.test": answers });
      await expect(resolveSafeAddress("https://hooks.merchant.test/in", { ...policy, lookup })).rejects.toThrow(
        /^hooks\.merchant\.test resolves to (127\.0\.0\.1|::1), a loopback address$/,
      );
    }
  });

  it("names metadata and IPv4-mapped answers for what they are", async () => {
    const lookup = fakeLookup({ "a.merchant.test": ["169.254.169.254"], "b.merchant.test": ["::ffff:192.168.0.9"] });
    await expect(resolveSafeAddress("https://a.merchant.test/", { ...policy, lookup })).rejects.toThrow("a cloud metadata address");
    await expect(resolveSafeAddress("https://b.merchant.test/", { ...policy, lookup })).rejects.toThrow(
      "b.merchant.test resolves to 192.168.0.9, a private address",
    );
  });

  it("returns the first answer when every answer is public", async () => {
    const lookup = fakeLookup({ "hooks.merchant.test": ["2606:4700:4700::1111", "93.184.216.34"] });
    expect(await resolveSafeAddress("https://hooks.merchant.test/in", { ...policy, lookup })).toEqual({
      address: "2606:4700:4700::1111",
      family: 6,
      url: "https://hooks.merchant.test/in",
      literal: false,
    });
  });

  it("applies the save-time rules again, as an UnsafeTargetError, without resolving", async () => {
    const lookup = fakeLookup({});
    await expect(resolveSafeAddress("http://169.254.169.254/", { ...policy, lookup })).rejects.toThrow(
      "refused target: url must not point at a private, loopback, link-local or metadata address",
    );
    await expect(resolveSafeAddress("http://hooks.merchant.test/", { environment: "live", allowPrivateTargets: true, lookup })).rejects.toThrow(
      "refused target: url must use https in live",
    );
    expect(lookup.asked).toEqual([]);
  });

  it("catches at connect time a name that only DNS reveals as private", async () => {
    const name = "127.0.0.1.nip.example";
    expect(validateTargetUrl(`https://${name}/in`, SANDBOX)).toBe(`https://${name}/in`);
    const lookup = fakeLookup({ [name]: ["127.0.0.1"] });
    await expect(resolveSafeAddress(`https://${name}/in`, { ...policy, lookup })).rejects.toThrow(`${name} resolves to 127.0.0.1, a loopback address`);
  });

  it("with allowPrivateTargets accepts private answers", async () => {
    const lookup = fakeLookup({ "hooks.merchant.test": ["10.0.0.5"] });
    const resolved = await resolveSafeAddress("http://hooks.merchant.test/", { ...policy, allowPrivateTargets: true, lookup });
    expect(resolved.address).toBe("10.0.0.5");
  });
});

// --- safeFetch against local receivers ------------------------------------------------------------

interface Received {
  path: string;
  host: string | null;
  method: string;
  body: string;
}

// Self-signed test certificates (EC P-256, valid 2020–2120), one per name, used only by these tests.
const HOOKS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgeyKbkh4TFwpsjtQv
9sz4mbmUzHwTUXBBTapjU3Ra1+ehRANCAASu69naUWoRcliTeMSztL8XpzVZWMKl
y3OaXL9kyB6W7fDDnVhfTqv9v1HvLzhNejlTEnprmJKUXVvg/RxkjEKl
-----END PRIVATE KEY-----`;
const HOOKS_CERT = `-----BEGIN CERTIFICATE-----
MIIBcjCCARmgAwIBAgIUYScLyCmRYUQV1YuUdqCalm8hGtAwCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTaG9va3MubWVyY2hhbnQudGVzdDAgFw0yMDAxMDEwMDAwMDBa
GA8yMTIwMDEwMTAwMDAwMFowHjEcMBoGA1UEAwwTaG9va3MubWVyY2hhbnQudGVz
dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABK7r2dpRahFyWJN4xLO0vxenNVlY
wqXLc5pcv2TIHpbt8MOdWF9Oq/2/Ue8vOE16OVMSemuYkpRdW+D9HGSMQqWjMzAx
MB4GA1UdEQQXMBWCE2hvb2tzLm1lcmNoYW50LnRlc3QwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNHADBEAiBdQBvxAaWLt3xdcFAgtlISaY1UqFgAc2TYbt9T
QZ9pzwIgQd0PaVSuvJGhQrxq2sLBwICV4LVwbBogzH6espuHvRY=
-----END CERTIFICATE-----`;
const OTHER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBEWWEmXrkfMRNKxa
D8q7zRt/RTISUJe7b+TJfUNKg1KhRANCAAR5sEV6nSBzX6I8aCob9IQa+dKRSIgk
unaKvu+JIsjraoWov9B+YjiSjuK6vFrf0WPLAGOn+957v6UInGhW5Lqy
-----END PRIVATE KEY-----`;
const OTHER_CERT = `-----BEGIN CERTIFICATE-----
MIIBczCCARmgAwIBAgIUCCJ15Q8CgbRFg9WOZfszJf5/Oy8wCgYIKoZIzj0EAwIw
HjEcMBoGA1UEAwwTb3RoZXIubWVyY2hhbnQudGVzdDAgFw0yMDAxMDEwMDAwMDBa
GA8yMTIwMDEwMTAwMDAwMFowHjEcMBoGA1UEAwwTb3RoZXIubWVyY2hhbnQudGVz
dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHmwRXqdIHNfojxoKhv0hBr50pFI
iCS6doq+74kiyOtqhai/0H5iOJKO4rq8Wt/RY8sAY6f73nu/pQicaFbkurKjMzAx
MB4GA1UdEQQXMBWCE290aGVyLm1lcmNoYW50LnRlc3QwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNIADBFAiEA55Jt53qmSC0tlW4nMhbe/FKkJVS5JgIM5TAt
/H+YjJICIB2Dew1D2p9nUGYdp6LFg1CpTi3dBVlZ8xaEJdcEzb6t
-----END CERTIFICATE-----`;

describe("safeFetch", () => {
  const received: Received[] = [];
  const tenKb = "0123456789".repeat(1024);
  let http: ReturnType<typeof Bun.serve>;
  let https: ReturnType<typeof Bun.serve>;

  const handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    received.push({ path, host: request.headers.get("host"), method: request.method, body: await request.text() });
    if (path === "/big") return new Response(tenKb);
    if (path === "/redirect") return new Response(null, { status: 302, headers: { location: "/landing" } });
    if (path === "/silent") return new Promise<Response>(() => {});
    if (path === "/endless") {
      const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
      return new Response(new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }));
    }
    if (path === "/stall") {
      return new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode("partial")) }), { status: 202 });
    }
    if (path === "/utf8") return new Response("é".repeat(1500));
    return new Response(`ok ${path}`, { status: 200, headers: { "x-receiver": "yes" } });
  };

  beforeAll(() => {
    http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
    // Presents the hooks.merchant.test certificate only when asked for that name by SNI.
    https = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: [
        { key: OTHER_KEY, cert: OTHER_CERT },
        { serverName: "hooks.merchant.test", key: HOOKS_KEY, cert: HOOKS_CERT },
      ],
      fetch: handler,
    });
  });
  afterAll(() => {
    http.stop(true);
    https.stop(true);
  });

  const loopback = fakeLookup({ "hooks.merchant.test": ["127.0.0.1"], "other.merchant.test": ["127.0.0.1"] });
  const base = (overrides: Partial<SafeFetchInit> = {}): SafeFetchInit => ({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"type":"webhook.test"}',
    timeoutMs: 2_000,
    environment: "sandbox",
    allowPrivateTargets: true,
    lookup: loopback,
    ...overrides,
  });
  const countFor = (path: string) => received.filter((r) => r.path === path).length;

  it("delivers to a loopback receiver when private targets are allowed, keeping 2 KiB of a 10 KB answer", async () => {
    const result = await safeFetch(`http://127.0.0.1:${http.port}/big`, base());
    expect(result.status).toBe(200);
    expect(result.bodyPrefix).toHaveLength(2048);
    expect(result.bodyPrefix).toBe(tenKb.slice(0, 2048));
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.address).toBe("127.0.0.1");
    expect(received.at(-1)).toEqual({ path: "/big", host: `127.0.0.1:${http.port}`, method: "POST", body: '{"type":"webhook.test"}' });
  });

  it("connects to the vetted address and sends the original Host header", async () => {
    const result = await safeFetch(`http://hooks.merchant.test:${http.port}/in`, base());
    expect(result.status).toBe(200);
    expect(result.bodyPrefix).toBe("ok /in");
    expect(result.headers.get("x-receiver")).toBe("yes");
    expect(received.at(-1)?.host).toBe(`hooks.merchant.test:${http.port}`);
  });

  it("resolves once: a second, different DNS answer is never used", async () => {
    let calls = 0;
    const rebinding: LookupFunction = async () => (calls++ === 0 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "10.0.0.5", family: 4 }]);
    const result = await safeFetch(`http://hooks.merchant.test:${http.port}/rebind`, base({ lookup: rebinding }));
    expect(result.address).toBe("127.0.0.1");
    expect(calls).toBe(1);
  });

  it("is refused, and sends nothing, when private targets are not allowed", async () => {
    const before = received.length;
    await expect(safeFetch(`http://127.0.0.1:${http.port}/in`, base({ allowPrivateTargets: false }))).rejects.toBeInstanceOf(UnsafeTargetError);
    await expect(safeFetch(`http://hooks.merchant.test:${http.port}/in`, base({ allowPrivateTargets: false }))).rejects.toThrow(
      "hooks.merchant.test resolves to 127.0.0.1, a loopback address",
    );
    expect(received.length).toBe(before);
  });

  it("requires https in live even with private targets allowed", async () => {
    await expect(safeFetch(`http://127.0.0.1:${http.port}/in`, base({ environment: "live" }))).rejects.toThrow("refused target: url must use https in live");
  });

  it("does not follow a redirect: the 302 is the answer and its target receives nothing", async () => {
    const result = await safeFetch(`http://127.0.0.1:${http.port}/redirect`, base());
    expect(result.status).toBe(302);
    expect(result.headers.get("location")).toBe("/landing");
    expect(countFor("/redirect")).toBe(1);
    expect(countFor("/landing")).toBe(0);
  });

  it("times out, bounded, against a receiver that never answers", async () => {
    const started = performance.now();
    const failure = safeFetch(`http://127.0.0.1:${http.port}/silent`, base({ timeoutMs: 300 }));
    await expect(failure).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(failure).rejects.toThrow("timeout after 300 ms");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("times out when the DNS answer never comes", async () => {
    const never: LookupFunction = () => new Promise(() => {});
    await expect(safeFetch("http://hooks.merchant.test/in", base({ lookup: never, timeoutMs: 200 }))).rejects.toThrow("timeout after 200 ms");
  });

  it("reads only the prefix of an endless answer", async () => {
    const result = await safeFetch(`http://127.0.0.1:${http.port}/endless`, base({ timeoutMs: 5_000 }));
    expect(result.status).toBe(200);
    expect(result.bodyPrefix).toBe("x".repeat(2048));
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it("keeps the status and what arrived when the body stalls", async () => {
    const result = await safeFetch(`http://127.0.0.1:${http.port}/stall`, base({ timeoutMs: 300 }));
    expect(result.status).toBe(202);
    expect(result.bodyPrefix).toBe("partial");
  });

  it("cuts at 2048 bytes without leaving half a character", async () => {
    const result = await safeFetch(`http://127.0.0.1:${http.port}/utf8`, base());
    expect(result.bodyPrefix).toBe("é".repeat(1024));
  });

  it("reports a refused connection and an unknown name briefly", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    await expect(safeFetch(`http://127.0.0.1:${port}/in`, base())).rejects.toThrow("connection refused");
    await expect(safeFetch("http://nowhere.merchant.test/in", base())).rejects.toThrow("dns lookup failed (ENOTFOUND)");
  });

  it("https: connects to the vetted address with SNI and certificate check against the original name", async () => {
    const result = await safeFetch(`https://hooks.merchant.test:${https.port}/secure`, base({ ca: [HOOKS_CERT] }));
    expect(result.status).toBe(200);
    expect(result.bodyPrefix).toBe("ok /secure");
    expect(result.address).toBe("127.0.0.1");
    expect(received.at(-1)?.host).toBe(`hooks.merchant.test:${https.port}`);
  });

  it("https: refuses a certificate that is not for the original name", async () => {
    // other.merchant.test gets the server's default certificate, which is trusted but names other.merchant.test…
    const ok = await safeFetch(`https://other.merchant.test:${https.port}/other`, base({ ca: [HOOKS_CERT, OTHER_CERT] }));
    expect(ok.status).toBe(200);
    // …so a name the certificate does not cover fails, though the same IP answers.
    const lookup = fakeLookup({ "third.merchant.test": ["127.0.0.1"] });
    const failure = safeFetch(`https://third.merchant.test:${https.port}/third`, base({ ca: [HOOKS_CERT, OTHER_CERT], lookup }));
    await expect(failure).rejects.toBeInstanceOf(TargetUnreachableError);
    await expect(failure).rejects.toThrow("tls error (ERR_TLS_CERT_ALTNAME_INVALID)");
    // and an untrusted certificate fails too.
    await expect(safeFetch(`https://hooks.merchant.test:${https.port}/untrusted`, base())).rejects.toThrow(/^tls error \(/);
    expect(countFor("/third")).toBe(0);
    expect(countFor("/untrusted")).toBe(0);
  });
});
