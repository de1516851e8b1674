/**
 * What a provider is given by the gateway, and all it is given: a narrow context, never the gateway's own
 * dependencies. It holds HTTP settings (the call timeout, the public base URL its callbacks point to), the
 * clock and the timers it waits on, the logger, the metrics its calls feed, its own configuration section
 * and caches, and a way to open the accounts (credentials) it works with; an inbound route also hands what
 * it received to the gateway's one intake ({@link InboundNotice}). A provider never reads tables, services or routers: the
 * gateway's `Deps` satisfies this interface, and that is the only link between the two.
 *
 * @module
 */
import type { Logger } from "pino";
import type { Environment, JsonValue, Provider } from "../db/schema.ts";
import type { Timers } from "../timers.ts";

export type { TimerHandle, Timers } from "../timers.ts";

/** A provider's name: its folder, the `provider` column of its payments, its metrics label. */
export type ProviderName = Provider;

/** How one call to a provider's API ended, for `passerelle_provider_call_duration_seconds`. */
export type ProviderCallOutcome = "ok" | "refused" | "error" | "timeout";

/** The counters a provider feeds (the gateway's metrics satisfy it). */
export interface ProviderMetrics {
  /** One call to the provider's API, by operation (a bounded set of names) and outcome. */
  providerCall(provider: ProviderName, operation: string, outcome: ProviderCallOutcome, seconds: number): void;
  /** One notification received on an inbound route: accepted (with what became of it), or refused (with why). */
  ipn(outcome: "accepted" | "refused", reason: string): void;
}

/**
 * The gateway's settings every provider reads. A provider's own section lives in the same object under its
 * name (`config.providerA`); its folder declares that section's type (see `ProviderContext`'s `Own`).
 */
export interface ProviderSettings {
  /** Where this gateway is reached from outside: the base of the callback URLs a provider is given. */
  publicBaseUrl: string;
  /** How long one call to a provider may take (`PROVIDER_TIMEOUT_MS`). */
  providerTimeoutMs: number;
}

/** A tenant's stored credentials for one provider and environment, opened (one version of the set). */
export interface OpenedAccount {
  /** The set's id (a payment's `provider_account` when made on a tenant's own account). */
  id: string;
  version: number;
  /** The opened fields (frozen; shared while cached). Never logged. */
  fields: Readonly<Record<string, string>>;
}

/** What the gateway does for a provider: open its accounts, name a tenant's store, take its notifications. */
export interface GatewayServices {
  /** A tenant's set for this provider and environment: the active one, or `version`. Null when there is none. */
  openAccount(input: { provider: ProviderName; tenantId: string; environment: Environment; version?: number }): Promise<OpenedAccount | null>;
  /** The name of the tenant's store, shown on a provider's pages; null when the tenant has none. */
  storeName(tenantId: string): Promise<string | null>;
  /** The one intake of every notification a provider's inbound route has verified the shape of (`services/ipn/intake.ts`). */
  intake(notice: InboundNotice): Promise<IntakeReceipt>;
}

/** The caches the gateway keeps for providers (per process). */
export interface ProviderCaches {
  /** A value derived from an opened credential set, kept on its frozen fields for as long as the set is cached (provider B's IPN hash). */
  ipnHashes: WeakMap<object, Buffer>;
}

/**
 * What a provider's calls receive. `Own` is the provider's own configuration section, under its name
 * (`{ providerA: ProviderASettings }`), declared in its folder.
 */
export interface ProviderContext<Own = unknown> {
  config: ProviderSettings & Own;
  logger: Logger;
  /** Absent in a context a test builds itself. */
  metrics?: ProviderMetrics;
  /** The clock; tests pass their own. */
  now: () => Date;
  /**
   * What a provider waits on by itself (a gap before retrying a refused connection): the gateway's
   * `Deps.timers`, so a test on virtual time advances the gap instead of waiting for it.
   */
  timers: Timers;
  caches: ProviderCaches;
  gateway: GatewayServices;
}

// --- the one intake: what an inbound route hands over ---

/**
 * The account a notification names: the service's own account of an environment (`tenantId` null), or a
 * tenant's (the version of its set, null for the active one).
 */
export interface NoticeAccount {
  environment: Environment;
  tenantId: string | null;
  credentialVersion: number | null;
}

/**
 * How the intake checks who sent a notification once it knows the account the object it names was made
 * on: `ok`, `gone` when that account's credentials no longer exist (nothing can be checked or read: the
 * notification is dropped), or a thrown `UnauthorizedError` when the signature is not that account's.
 */
export type NoticeAuthentication = (account: NoticeAccount) => Promise<"ok" | "gone">;

/**
 * What a provider's inbound route made of one request, in the gateway's terms. The body is never trusted:
 * the intake only learns which object is meant, checks the signature against that object's account, and
 * reads the object again from the provider (Hyperswitch's `IncomingWebhook`, Medusa's `getWebhookActionAndData`).
 */
export type InboundNotice =
  /**
   * A payment, named by the provider's id and/or ours, on one account (provider A's transaction webhooks).
   * Without `scope`, any payment of this provider with that id (a provider with one account, whose route
   * checked the signature itself); one that is not found is then not checked.
   */
  | {
      about: "payment";
      provider: ProviderName;
      /** Where it was sent: the service's account of an environment, or a tenant's own (`tenantId`). */
      scope: { environment: Environment; tenantId: string | null } | null;
      providerPaymentId: string | null;
      /** Our id, as the provider carries it (its `merchant_reference`), for a payment it has not numbered yet. */
      paymentId: string | null;
      authenticate: NoticeAuthentication;
    }
  /**
   * A payout or refund named by our id (provider A's `payout.*`, provider B's disbursement callback).
   * Without `scope`, any payout of this provider; one that is not found is ignored without a check.
   */
  | {
      about: "payout";
      provider: ProviderName;
      scope: { environment: Environment; tenantId: string | null } | null;
      payoutId: string | null;
      authenticate: NoticeAuthentication;
    }
  /**
   * An object named by the provider's token (an invoice: a checkout or a permit charge; or a permit), signed
   * with its account version's secret, which the port's `signatures` check (provider B's IPN). Stored,
   * deduplicated, kept as an orphan when unknown, then confirmed with the provider by the `ipn` job.
   */
  | {
      about: "token";
      provider: ProviderName;
      /** Null for a probe. */
      subject: { kind: "checkout" | "permit"; token: string } | null;
      /** Its data without the signature: what is stored. */
      body: Record<string, JsonValue>;
      /** The signature as it came, opaque to the gateway; only a digest of it is ever kept. */
      signature: unknown;
    };

/** What the intake made of a notification. */
export type IntakeReceipt = {
  outcome: "stored" | "duplicate" | "orphan" | "orphan_dropped" | "probe" | "ignored" | "followed";
  ipnId?: number;
};
