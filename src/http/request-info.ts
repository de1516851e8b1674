/**
 * The record the gateway's `fetch` wrapper keeps for each request, which tRPC procedures (through their
 * context) and the REST route table's handlers fill in. A module of its own so that the HTTP layer's
 * plumbing (`route-table.ts`) need not import the tRPC instance (`routers/trpc.ts`) to name it.
 *
 * @module
 */
import { type AddressSource, clientAddressOf } from "./client-address.ts";

/** What the HTTP layer learns about a request while tRPC handles it (for the request log line). */
export interface RequestInfo {
  requestId: string;
  /** Where the request came from (`client-address.ts`): the TCP peer; unset in-process. */
  clientAddress?: string;
  tenantId?: string;
  /** Headers a procedure adds to its HTTP response (e.g. `idempotent-replayed`), on either surface. */
  responseHeaders?: Record<string, string>;
  /** Set once the request was counted against its tenant's rate limit: a CSV export calls its procedure once per page, and counts once. */
  rateLimited?: true;
  /** Fields a procedure changed, with their values before and after, for its audit log entry (`services/audit-log`). */
  auditChanges?: Record<string, { before: unknown; after: unknown }>;
}

/**
 * The {@link RequestInfo} of a request the gateway's `fetch` received: `clientAddress` is asked of the
 * server that received it (`source`, or the one the listener recorded: `client-address.ts`) on first read,
 * not on every request.
 */
export class ReceivedRequestInfo implements RequestInfo {
  declare tenantId?: string;
  declare responseHeaders?: Record<string, string>;
  declare rateLimited?: true;
  #address: string | undefined | null = null;

  constructor(
    readonly requestId: string,
    private readonly request: Request,
    private readonly source?: AddressSource,
  ) {}

  get clientAddress(): string | undefined {
    if (this.#address === null) this.#address = this.source ? (this.source.requestIP(this.request)?.address ?? undefined) : clientAddressOf(this.request);
    return this.#address;
  }
}
