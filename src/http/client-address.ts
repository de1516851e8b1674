/**
 * The address a request came from: the TCP peer the listener saw (`Bun.serve`'s `requestIP`), kept beside the
 * request for the sign-in limits and log (issue 30). A request made in-process (`gateway.fetch` called
 * directly, as a program embedding the gateway does) has none: `local`.
 *
 * A `WeakMap` keyed by the request: the entry lives exactly as long as the request does.
 *
 * @module
 */
const addresses = new WeakMap<Request, string>();

/** Remembers where a request came from (the listener does, before the gateway's `fetch`). */
export function rememberClientAddress(request: Request, address: string | undefined): void {
  if (address) addresses.set(request, address);
}

/** Where a request came from, or `local`. */
export function clientAddressOf(request: Request): string {
  return addresses.get(request) ?? "local";
}
