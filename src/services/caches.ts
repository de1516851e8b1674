/**
 * What a gateway keeps in memory between requests — caches, reads in flight shared by concurrent callers,
 * remembered checks — gathered in one object that `createGateway` builds (`deps.caches`). None lives in a
 * module variable: two gateways in one process share none of it, and a test that spreads a gateway's deps
 * (`{ ...gateway.deps, now }`) shares that gateway's. Each module keeps its own entry's rules (size, TTL,
 * what a key is, who forgets it); this file only builds them.
 *
 * Precompiled statements keep their compiled SQL with the database handle they run on (`db/precompiled.ts`),
 * so they are the gateway's too, through `deps.db`.
 *
 * @module
 */
import type { CircuitBreakerPolicy } from "cockatiel";
import { LRUCache } from "lru-cache";
import type { Payment } from "../db/schema.ts";
import { type AuditAppends, createAuditAppends } from "./audit-log/append-queue.ts";
import { type CredentialsCache, createCredentialsCache } from "./credentials/credentials-cache.ts";
import { createFinalReadCache, type FinalReadCache } from "./direct-payments/final-read-cache.ts";
import { createIpnSignerCache, type IpnSignerCache } from "./ipn/signer-cache.ts";
import { createRoutingCache, type RoutingCache } from "./routing/routing-cache.ts";
import { createTargetCaches, type TargetCaches } from "./webhooks/url-safety.ts";

/** One gateway's in-memory state (`deps.caches`); one field per cache, named by the module that uses it. */
export interface GatewayCaches {
  /** Final provider A transactions served without a query, and the reads in flight (`direct-payments/read-transaction.ts`). */
  finalReads: FinalReadCache;
  /** Refreshes of pending direct payments in flight, by payment id: concurrent readers share one (`direct-payments/refresh.ts`). */
  refreshes: Map<string, Promise<Payment>>;
  /**
   * Whether the last event of a tenant and environment (`tenant:environment`) had deliveries: a hint that picks
   * which settle path `direct-payments/apply-update.ts` tries first. At most 10 000, re-learnt after a minute.
   */
  eventTargets: LRUCache<string, boolean>;
  /** Opened provider credentials and the reads in flight (`credentials/provider-credentials.ts`). */
  credentials: CredentialsCache;
  /** Provider B's expected IPN hash per opened credential set, on its frozen fields (`providers/providerB/accounts.ts`). */
  ipnHashes: WeakMap<object, Buffer>;
  /** The accounts whose IPN hashes were verified, by the hash's digest: the IPN fast path (`ipn/receive-ipn.ts`). */
  ipnSigners: IpnSignerCache;
  /** Opened webhook signing secrets (`webhooks/signing-secrets.ts`), by sealed value. */
  signingSecrets: Map<string, Promise<string>>;
  /** Outbound URL checks and DNS answers (`webhooks/url-safety.ts`). */
  targets: TargetCaches;
  /** One circuit breaker per provider × operator × country (`routing/breakers.ts`). */
  breakers: Map<string, CircuitBreakerPolicy>;
  /**
   * Each tenant's route lists and accounts, checked against its routing counter by every payment's first
   * statement, and each wallet's success rates, read at most once a second (`routing/route-cache.ts`).
   */
  routing: RoutingCache;
  /**
   * Audit log entries waiting for their chain's next append in this gateway, by chain: appended together when the
   * append running ends (`audit-log/entry.ts`, "Group commit").
   */
  auditAppends: AuditAppends;
}

/** Empty caches for one gateway. */
export function createGatewayCaches(): GatewayCaches {
  return {
    finalReads: createFinalReadCache(),
    refreshes: new Map(),
    eventTargets: new LRUCache<string, boolean>({ max: 10_000, ttl: 60_000 }),
    credentials: createCredentialsCache(),
    ipnHashes: new WeakMap(),
    ipnSigners: createIpnSignerCache(),
    signingSecrets: new Map(),
    targets: createTargetCaches(),
    breakers: new Map(),
    routing: createRoutingCache(),
    auditAppends: createAuditAppends(),
  };
}
