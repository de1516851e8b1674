/**
 * Outbound URL safety (contract §7): the URLs that the gateway calls itself — webhook endpoints and a
 * direct payment's `callback_url` — must never reach loopback, private, link-local, carrier-grade NAT or
 * cloud-metadata addresses, because the delivery log shows the answer to the tenant. Two checks:
 *
 * - {@link validateTargetUrl} when a URL is saved: shape, length, no credentials, https in live, and the
 *   address rule for IP literals and well-known internal names;
 * - {@link resolveSafeAddress} when connecting: the hostname is resolved once and every answer must be
 *   public; `safe-fetch.ts` then connects to that vetted address and no other (no DNS rebinding). The
 *   gateway's resolver reuses its answers for {@link DNS_CACHE_TTL_MS} (10 s, `cachingLookup`); the
 *   policy is applied to them afresh on every call.
 *
 * What a gateway remembers (the URL checks, its resolver's answers) is its own: {@link TargetCaches},
 * `deps.caches.targets`, built with the gateway; a call without it checks and resolves afresh.
 *
 * `allowPrivateTargets` (`ALLOW_PRIVATE_TARGETS`, development and tests) lifts the address rule only:
 * https in live stays required.
 *
 * Address classes come from ipaddr.js; only what it calls plain `unicast` is public. IPv6 forms that
 * carry an IPv4 address (mapped, compatible, SIIT, NAT64 `64:ff9b::/96`, 6to4) are judged by that IPv4.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { ValidationError } from "../../errors.ts";

/** Longest accepted URL, in characters (contract §7). */
export const MAX_TARGET_URL_LENGTH = 2048;

/** Who the target is for: the token's environment, and whether private addresses are allowed. */
export interface TargetPolicy {
  environment: "sandbox" | "live";
  allowPrivateTargets: boolean;
}

/** One answer of a resolver, as `node:dns/promises` `lookup(host, { all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The shape of `node:dns/promises` `lookup` used here; tests pass their own. */
export type LookupFunction = (hostname: string, options: { all: true; verbatim: true }) => Promise<ResolvedAddress[]>;

/** What kind of address an IP is, as far as outbound calls care. Only `public` may be called. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade NAT"
  | "cloud metadata"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved";

/** Why a target was refused. */
export type UnsafeTargetReason = "invalid_url" | "https_required" | "blocked_hostname" | "non_public_address";

/**
 * A target the gateway refuses to call. Its message is short and names the reason; it is what the
 * delivery log records as the attempt's error.
 */
export class UnsafeTargetError extends Error {
  override name = "UnsafeTargetError";
  constructor(
    readonly reason: UnsafeTargetReason,
    message: string,
    /** The offending resolved or literal address, when there is one. */
    readonly address?: string,
  ) {
    super(message);
  }
}

// Named only so the error says "cloud metadata"; each already lies in a refused range.
const METADATA_ADDRESSES = ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"].map((a) => ipaddr.parse(a).toNormalizedString());

/** Suffixes of names that only ever mean this machine or a private network. */
const BLOCKED_NAME_SUFFIXES = ["localhost", "localdomain", "local", "internal", "home.arpa"];
/** Single names that cloud resolvers map to the metadata service. */
const BLOCKED_NAMES = new Set(["metadata"]);

const IPV4_CLASSES: Record<string, AddressClass> = {
  unicast: "public",
  loopback: "loopback",
  private: "private",
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade NAT",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
};

const IPV6_CLASSES: Record<string, AddressClass> = {
  unicast: "public",
  loopback: "loopback",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  linkLocal: "link-local",
  unspecified: "unspecified",
  multicast: "multicast",
};

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

function embeddedIPv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyParsed(addr: ipaddr.IPv4 | ipaddr.IPv6): AddressClass {
  if (METADATA_ADDRESSES.includes(addr.toNormalizedString())) return "cloud metadata";
  if (addr.kind() === "ipv4") return IPV4_CLASSES[addr.range()] ?? "reserved";

  const v6 = addr as ipaddr.IPv6;
  const p = v6.parts;
  const range = v6.range();
  // Forms that carry an IPv4 address reach that IPv4 host (or a router on its network): judge it instead.
  if (range === "ipv4Mapped" || range === "rfc6145" || v6.match(NAT64_WELL_KNOWN)) {
    return classifyParsed(embeddedIPv4(p[6]!, p[7]!));
  }
  if (range === "6to4") return classifyParsed(embeddedIPv4(p[1]!, p[2]!));
  if (range === "unicast" && p.slice(0, 6).every((part) => part === 0)) {
    // IPv4-compatible `::a.b.c.d` (deprecated by RFC 4291): never a legitimate target.
    const inner = classifyParsed(embeddedIPv4(p[6]!, p[7]!));
    return inner === "public" ? "reserved" : inner;
  }
  return IPV6_CLASSES[range] ?? "reserved";
}

/**
 * Classifies an IP address (v4, or v6 with or without brackets). Throws when `address` is not an IP.
 *
 * @example
 * ```ts
 * classifyAddress("10.1.2.3"); // "private"
 * classifyAddress("[::ffff:127.0.0.1]"); // "loopback"
 * classifyAddress("93.184.216.34"); // "public"
 * ```
 */
export function classifyAddress(address: string): AddressClass {
  return classifyParsed(ipaddr.parse(stripBrackets(address)));
}

/** True only for addresses the gateway may call without `allowPrivateTargets`. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === "public";
}

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** The URL's hostname as an IP, or undefined for a name. WHATWG URL has already turned `2130706433` into `127.0.0.1`. */
function ipLiteralOf(url: URL): string | undefined {
  const host = stripBrackets(url.hostname);
  return ipaddr.isValid(host) && (url.hostname.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(host)) ? host : undefined;
}

function isBlockedName(hostname: string): boolean {
  const name = hostname.replace(/\.+$/, "").toLowerCase();
  return BLOCKED_NAMES.has(name) || BLOCKED_NAME_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

/** The rule check of one URL under one policy (its parsed URL, or why it is refused). */
export interface TargetCheck {
  url: URL | undefined;
  messages: string[];
  reason: UnsafeTargetReason | undefined;
  address: string | undefined;
}

function checkTarget(raw: string, field: string, policy: TargetPolicy): TargetCheck {
  const messages: string[] = [];
  let reason: UnsafeTargetReason | undefined;
  const fail = (r: UnsafeTargetReason, message: string) => {
    reason ??= r;
    messages.push(`${field} ${message}`);
  };

  if (raw.length > MAX_TARGET_URL_LENGTH) fail("invalid_url", `must be at most ${MAX_TARGET_URL_LENGTH} characters`);
  // Require the literal `scheme://` form: WHATWG URL also accepts `http:host` and `http:/host`, which
  // other parsers read differently.
  const url = /^https?:\/\//i.test(raw.trim()) && URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || url.hostname === "") {
    fail("invalid_url", "must be an absolute http(s) URL");
    return { url: undefined, messages, reason, address: undefined };
  }
  if (url.href.length > MAX_TARGET_URL_LENGTH && raw.length <= MAX_TARGET_URL_LENGTH) {
    fail("invalid_url", `must be at most ${MAX_TARGET_URL_LENGTH} characters`);
  }
  if (url.username !== "" || url.password !== "") fail("invalid_url", "must not contain credentials");
  if (policy.environment === "live" && url.protocol !== "https:") fail("https_required", "must use https in live");

  const literal = ipLiteralOf(url);
  if (!policy.allowPrivateTargets) {
    const refused = literal !== undefined ? classifyAddress(literal) !== "public" : isBlockedName(url.hostname);
    if (refused) {
      fail(literal !== undefined ? "non_public_address" : "blocked_hostname", "must not point at a private, loopback, link-local or metadata address");
    }
  }
  return { url, messages, reason, address: literal };
}

/**
 * The save-time check of a URL the gateway will call. Returns the normalised URL (WHATWG `href`: IPv4
 * forms such as `2130706433` become dotted quads, IDNs become punycode) or throws {@link ValidationError}
 * with one `<field> <rule>` message per broken rule.
 *
 * @example
 * ```ts
 * const url = validateTargetUrl(body.url, { field: "url", environment: "live", allowPrivateTargets: config.allowPrivateTargets });
 * // "https://hooks.merchant.example/passerelle"
 * validateTargetUrl("http://169.254.169.254/latest", { field: "callback_url", environment: "sandbox", allowPrivateTargets: false });
 * // throws ValidationError: callback_url must not point at a private, loopback, link-local or metadata address
 * ```
 */
export function validateTargetUrl(url: string, opts: TargetPolicy & { field: string }): string {
  const check = checkTarget(url, opts.field, opts);
  if (check.messages.length > 0) throw new ValidationError(check.messages);
  return check.url!.href;
}

/** Options of {@link resolveSafeAddress}. */
export interface ResolveOptions extends TargetPolicy {
  /** Defaults to the caches' resolver, else `node:dns/promises` `lookup`. */
  lookup?: LookupFunction;
  /** The gateway's (`deps.caches.targets`): checks and DNS answers reused. Without it, none is. */
  caches?: TargetCaches;
  /** Abandons the lookup when it fires (the attempt's timeout); rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The address a request must connect to, vetted. */
export interface SafeAddress {
  address: string;
  family: 4 | 6;
  /** The normalised URL that was checked. */
  url: string;
  /** True when the URL's host was already an IP (no DNS, no SNI name). */
  literal: boolean;
}

/** How long the default resolver's answers are reused. */
export const DNS_CACHE_TTL_MS = 10_000;
/** At most this many names in the default resolver's cache (oldest dropped first). */
export const DNS_CACHE_MAX = 1000;

/**
 * `lookup` with its successful answers reused for `ttlMs` per name (at most `max` names, oldest
 * dropped first; concurrent lookups of one name share one query; failures are not kept). What reusing
 * an answer delays is only noticing a changed DNS record, by at most `ttlMs`: every call still applies
 * the policy to the answers, and the request still goes to one of them. `clock` reads the time the TTL is
 * measured on (a test passes its own).
 *
 * @example
 * ```ts
 * const lookup = cachingLookup((host, options) => dnsLookup(host, options));
 * await resolveSafeAddress(url, { environment: "live", allowPrivateTargets: false, lookup });
 * ```
 */
export function cachingLookup(lookup: LookupFunction, ttlMs = DNS_CACHE_TTL_MS, max = DNS_CACHE_MAX, clock: () => number = Date.now): LookupFunction {
  const cache = new Map<string, { expiresAt: number; answers: Promise<ResolvedAddress[]> }>();
  return (hostname, options) => {
    const now = clock();
    const cached = cache.get(hostname);
    if (cached && cached.expiresAt > now) return cached.answers;
    if (cached) cache.delete(hostname);
    const entry = { expiresAt: now + ttlMs, answers: lookup(hostname, options) };
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(hostname, entry);
    entry.answers.then(
      (answers) => {
        if (answers.length === 0 && cache.get(hostname) === entry) cache.delete(hostname);
      },
      () => {
        if (cache.get(hostname) === entry) cache.delete(hostname);
      },
    );
    return entry.answers;
  };
}

/** `node:dns/promises` `lookup`, as a {@link LookupFunction}: every call asks the resolver. */
const systemLookup: LookupFunction = (hostname, options) => dnsLookup(hostname, options);

/** At most this many URL checks remembered per gateway (oldest dropped first). */
const CHECK_CACHE_MAX = 1000;

/** What a gateway remembers of the targets it calls (`deps.caches.targets`). */
export interface TargetCaches {
  /**
   * The connect-time rule check of a URL under a policy, by policy and URL: it depends on nothing else,
   * and parsing and classifying the URL again for every delivery costs more than the lookup in this map.
   */
  checks: Map<string, TargetCheck>;
  /** `node:dns/promises` `lookup`, its answers reused for {@link DNS_CACHE_TTL_MS} ({@link cachingLookup}). */
  lookup: LookupFunction;
}

/** A gateway's target caches, empty (built by `createGatewayCaches`). */
export function createTargetCaches(): TargetCaches {
  return { checks: new Map(), lookup: cachingLookup(systemLookup) };
}

function checkTargetCached(checks: Map<string, TargetCheck>, raw: string, policy: TargetPolicy): TargetCheck {
  const key = `${policy.environment}\u0000${policy.allowPrivateTargets ? 1 : 0}\u0000${raw}`;
  let check = checks.get(key);
  if (!check) {
    check = checkTarget(raw, "url", policy);
    if (checks.size >= CHECK_CACHE_MAX) checks.delete(checks.keys().next().value!);
    checks.set(key, check);
  }
  return check;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The connect-time check: re-applies the save-time rules (configuration or environment may have
 * changed since), resolves the hostname once (or reuses the gateway resolver's answers of the last
 * {@link DNS_CACHE_TTL_MS}), and refuses with {@link UnsafeTargetError} when ANY
 * answer is not public — a name with one private answer could be made to land there. Returns the first
 * answer in resolver order; the caller must connect to exactly that address. DNS failures reject with
 * the resolver's error (e.g. `ENOTFOUND`), not an {@link UnsafeTargetError}.
 *
 * @example
 * ```ts
 * const { address, family } = await resolveSafeAddress("https://hooks.merchant.example/in", { environment: "live", allowPrivateTargets: false });
 * // { address: "203.0.113.7", family: 4, ... } — or UnsafeTargetError "hooks.merchant.example resolves to 10.0.0.5, a private address"
 * ```
 */
export async function resolveSafeAddress(url: string, opts: ResolveOptions): Promise<SafeAddress> {
  const check = opts.caches ? checkTargetCached(opts.caches.checks, url, opts) : checkTarget(url, "url", opts);
  if (check.messages.length > 0 || !check.url) {
    throw new UnsafeTargetError(check.reason ?? "invalid_url", `refused target: ${check.messages.join("; ")}`, check.address);
  }
  const target = check.url;
  if (check.address !== undefined) {
    const family = ipaddr.parse(check.address).kind() === "ipv6" ? 6 : 4;
    return { address: check.address, family, url: target.href, literal: true };
  }

  const hostname = target.hostname.replace(/\.+$/, "");
  const answers = await raceAbort((opts.lookup ?? opts.caches?.lookup ?? systemLookup)(hostname, { all: true, verbatim: true }), opts.signal);
  if (answers.length === 0) throw Object.assign(new Error(`dns lookup of ${hostname} returned no address`), { code: "ENOTFOUND" });

  const vetted = answers.map(({ address }) => {
    const parsed = ipaddr.parse(address);
    // Connect to an IPv4-mapped answer over IPv4: the same host, and it works without dual-stack sockets.
    const direct = parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
    return { address: direct.toString(), family: direct.kind() === "ipv6" ? (6 as const) : (4 as const), kind: classifyParsed(parsed) };
  });
  if (!opts.allowPrivateTargets) {
    const bad = vetted.find((answer) => answer.kind !== "public");
    if (bad) {
      const article = /^[aeiou]/i.test(bad.kind) ? "an" : "a";
      throw new UnsafeTargetError("non_public_address", `${hostname} resolves to ${bad.address}, ${article} ${bad.kind} address`, bad.address);
    }
  }
  const first = vetted[0]!;
  return { address: first.address, family: first.family, url: target.href, literal: false };
}
