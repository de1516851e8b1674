/**
 * Routes that are not tRPC procedures because they need the request's raw bytes: the providers' inbound
 * routes (provider A signs the raw body; provider B posts PHP-style bracket form fields). Each is a plain
 * Elysia route (`parse: "none"`: the handler reads the body once itself) that calls the same services as
 * the procedures, and describes itself for the OpenAPI document so `/docs` shows every path.
 *
 * A provider's routes come from its folder through the registry (`PaymentProvider.inbound`); this list
 * holds provider B's IPN route until its folder owns it.
 */
import type { InboundRoute } from "../providers/provider.ts";

export type RawBodyRoute = InboundRoute;

/** Inbound routes not yet declared by a provider's folder. */
export const RAW_BODY_ROUTES: RawBodyRoute[] = [];
