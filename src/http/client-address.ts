/**
 * The address a request came from, as the listening socket saw it (`Bun.serve`'s `server.requestIP`): kept
 * beside the request by the listener (`listener.ts`) for what limits callers per address — the pay page's
 * public endpoints (`routers/pay-page.ts`). A request given to the gateway's `fetch` by another program (a
 * test, an embedding server) has none, and such requests share one bucket.
 *
 * Behind a balancer every request comes from the balancer's address; the gateway does not read
 * `X-Forwarded-For` (a header any client can send), so a fleet's pay pages share the balancer's bucket.
 *
 * @module
 */

const addresses = new WeakMap<Request, string>();

/** Records the socket's address of `request`. */
export function rememberClientAddress(request: Request, address: string | undefined): void {
  if (address) addresses.set(request, address);
}

/** The socket's address of `request`, when the listener recorded one. */
export function clientAddressOf(request: Request): string | undefined {
  return addresses.get(request);
}
