/**
 * The address a request came from, as the listening socket saw it (`Bun.serve`'s `server.requestIP`): the
 * listener (`listener.ts`) keeps the server beside the request, which is asked when something reads the
 * address — what limits callers per address (the pay page's public endpoints, `routers/pay-page.ts`) and a
 * sign-in's record. A request given to the gateway's `fetch` by another program (a
 * test, an embedding server) has none, and such requests share one bucket.
 *
 * Behind a balancer every request comes from the balancer's address; the gateway does not read
 * `X-Forwarded-For` (a header any client can send), so a fleet's pay pages share the balancer's bucket.
 *
 * @module
 */

/** What tells a request's address: the server that received it (`Bun.serve`'s `server.requestIP`). */
export interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

const sources = new WeakMap<Request, AddressSource>();

/**
 * Records the server that received `request`; the address is asked of it only when something reads it
 * ({@link clientAddressOf}): `requestIP` costs ~1 µs, and only the pay page's limit and a sign-in read it.
 */
export function rememberClientAddress(request: Request, source: AddressSource): void {
  sources.set(request, source);
}

/** The socket's address of `request`, when the listener recorded its server (and the connection is still open). */
export function clientAddressOf(request: Request): string | undefined {
  return sources.get(request)?.requestIP(request)?.address;
}
