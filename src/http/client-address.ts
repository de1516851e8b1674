/**
 * The address a request came from: what limits callers per address — sign-in attempts
 * (`services/people/sign-in.ts`) and the pay page's public endpoints (`routers/pay-page.ts`) — and a session's
 * "from where". The listener (`listener.ts`) hands the gateway the server that received the request, which is
 * asked only when something reads the address. A request given to the gateway's `fetch` by another program (a
 * test, an embedding server) has none, and such requests share one bucket.
 *
 * It is the listening socket's address (`Bun.serve`'s `server.requestIP`), unless that address is one of the
 * gateway's own balancers (`TRUSTED_PROXIES`): then it is read from `X-Forwarded-For` — from the right, the
 * first address that is not a trusted proxy (`proxy-addr`, Express's rule), so a client that sends its own
 * `X-Forwarded-For` through the balancer only adds addresses to the left of the one the balancer saw. Without
 * `TRUSTED_PROXIES` the header is never read (any client can send it).
 *
 * @module
 */
import proxyAddr from "proxy-addr";

/** What tells a request's address: the server that received it (`Bun.serve`'s `server.requestIP`). */
export interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

/** Whether an address is one of the gateway's balancers (`TRUSTED_PROXIES`, compiled by {@link trustProxies}). */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * Compiles `TRUSTED_PROXIES` (addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`); throws on a
 * malformed entry. An empty list trusts nothing.
 */
export function trustProxies(entries: readonly string[]): ProxyTrust {
  return proxyAddr.compile([...entries]);
}

/** The client's address of a request that reached the socket from `socketAddress`, by `trust`. */
export function clientAddressFrom(socketAddress: string, forwardedFor: string | null, trust: ProxyTrust | undefined): string {
  if (!trust || !forwardedFor || !trust(socketAddress, 0)) return socketAddress;
  // proxy-addr reads a Node request's socket address and headers; these two are all it reads.
  const request = { socket: { remoteAddress: socketAddress }, connection: { remoteAddress: socketAddress }, headers: { "x-forwarded-for": forwardedFor } };
  return proxyAddr(request as unknown as Parameters<typeof proxyAddr>[0], trust);
}

/** The server `server`, answering for the client a trusted balancer names (see {@link clientAddressFrom}). */
export function trustingSource(server: AddressSource, trust: ProxyTrust): AddressSource {
  return {
    requestIP(request) {
      const socket = server.requestIP(request)?.address;
      return socket ? { address: clientAddressFrom(socket, request.headers.get("x-forwarded-for"), trust) } : null;
    },
  };
}

const sources = new WeakMap<Request, AddressSource>();

/**
 * Records the server that received `request`; the address is asked of it only when something reads it
 * ({@link clientAddressOf}): `requestIP` costs ~1 µs, and only the pay page's limit and a sign-in read it.
 */
export function rememberClientAddress(request: Request, source: AddressSource): void {
  sources.set(request, source);
}

/** The client's address of `request`, when the listener recorded its server (and the connection is still open). */
export function clientAddressOf(request: Request): string | undefined {
  return sources.get(request)?.requestIP(request)?.address;
}
