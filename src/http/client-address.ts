/**
 * The address a request came from: kept beside the request by the listener (`listener.ts`) for what limits
 * callers per address — sign-in attempts (`services/people/sign-in.ts`) and the pay page's public endpoints
 * (`routers/pay-page.ts`) — and for the sessions' "from where". A request given to the gateway's `fetch` by
 * another program (a test, an embedding server) has none, and such requests share one bucket.
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

const addresses = new WeakMap<Request, string>();

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

/** Records the address of `request`, from its socket's (and `X-Forwarded-For` when the socket is a trusted proxy). */
export function rememberClientAddress(request: Request, socketAddress: string | undefined, trust?: ProxyTrust): void {
  if (socketAddress) addresses.set(request, clientAddressFrom(socketAddress, request.headers.get("x-forwarded-for"), trust));
}

/** The client's address of `request`, when the listener recorded one. */
export function clientAddressOf(request: Request): string | undefined {
  return addresses.get(request);
}
