/**
 * The provider A simulator as an Elysia app serving from `/`: the provider's API under `/v1`
 * (`api-routes.ts`; its payouts and balances in `payouts/`), the simulator's control surface and console beside it (`control-routes.ts`), and the
 * provider's error shape for every refusal, written once here. All state lives in the instance;
 * `close()` cancels its timers and webhook attempts. Given a `state` file, the instance starts from what it
 * holds and writes it again after every change (a request that is not a read, a sandbox outcome) and when it
 * closes, so a restarted gateway's simulator still knows its accounts, transactions, payouts and ids (issue 25).
 */
import { Elysia } from "elysia";
import { apiRoutes } from "./api-routes.ts";
import type { SimulatorContext } from "./context.ts";
import { controlRoutes } from "./control-routes.ts";
import type { StateFile } from "../../simulator-state.ts";
import { createLedger, type LedgerState } from "./ledger.ts";
import { payoutControlRoutes } from "./payouts/control-routes.ts";
import { createPayoutLedger, type PayoutLedgerState } from "./payouts/ledger.ts";
import { resumePayoutOutcome } from "./payouts/outcome.ts";
import { renderPayoutEvent } from "./payouts/render.ts";
import { payoutRoutes } from "./payouts/routes.ts";
import { createTimers } from "./timers.ts";
import { createWebhookSender } from "./webhook-sender.ts";
import { renderEvent } from "./render.ts";
import { playSandboxOutcome } from "./sandbox-outcome.ts";
import { ProviderAError } from "./wire.ts";

export interface ProviderASimulatorOptions {
  /** How long after the USSD push a sandbox payment below 1000 is approved (`SIMULATOR_APPROVE_DELAY_MS`). Default 2000. */
  approveDelayMs?: number;
  /** How long after the push a sandbox payment above 5000 is declined. Default: `approveDelayMs`. */
  declineDelayMs?: number;
  /** The clock for timestamps and webhook signatures. Default: the system clock. */
  now?: () => Date;
  /** What sends the webhooks. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Waits before each webhook retry (so its length is the number of retries). Default 1 s, 5 s, 30 s. */
  webhookRetryDelaysMs?: readonly number[];
  /** Per webhook attempt. Default 5000. */
  webhookTimeoutMs?: number;
  /** Where the simulator is mounted (e.g. `/sandbox/providerA`), added to the request's origin in the links it hands out. Default none. */
  basePath?: string;
  /** Absolute URL the simulator's links start from (e.g. `https://gw.example/sandbox/providerA`); wins over origin and `basePath`. */
  publicBaseUrl?: string;
  /** The fee of a payout, as a fraction of its amount (rounded up to a whole unit), debited from the balance with it. Default 0 (no fee). */
  payoutFeeRate?: number;
  /** Where the simulator keeps its memory between runs (`providers/simulator-state.ts`). Default none: memory only. */
  state?: StateFile;
}

/** What the state file of a provider A simulator holds. */
interface SavedState {
  simulator: "providerA";
  ledger: LedgerState;
  payouts: PayoutLedgerState;
  nextEventId: number;
}

const DEFAULT_APPROVE_DELAY_MS = 2_000;
const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [1_000, 5_000, 30_000];
const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;
/** How far the ids jump after a run that was killed (its last writes lost): more than it can hand out between two writes. */
const IDS_SKIPPED_AFTER_A_CRASH = 100_000;

/**
 * A provider A simulator with its own memory.
 *
 * @example
 * ```ts
 * const simulator = createProviderASimulator({ approveDelayMs: 50 });
 * const server = Bun.serve({ port: 0, fetch: simulator.fetch });
 * const { secretKey } = await (await fetch(`${server.url}_sim/accounts`, { method: "POST" })).json();
 * // … `Authorization: Bearer ${secretKey}` on `/v1/…`
 * simulator.close();
 * server.stop(true);
 * ```
 */
export function createProviderASimulator(options: ProviderASimulatorOptions = {}) {
  const now = options.now ?? (() => new Date());
  const approveDelayMs = options.approveDelayMs ?? DEFAULT_APPROVE_DELAY_MS;
  const basePath = options.basePath ? `/${options.basePath.replace(/^\/+|\/+$/g, "")}` : "";
  const publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, "");
  const timers = createTimers(() => save());
  const webhooks = createWebhookSender({
    fetch: options.fetch ?? fetch,
    now,
    timers,
    retryDelaysMs: options.webhookRetryDelaysMs ?? DEFAULT_WEBHOOK_RETRY_DELAYS_MS,
    timeoutMs: options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
  });
  let nextEventId = 1;
  const ledger = createLedger({
    now,
    onStatusChange({ account, trx, event }) {
      if (!account.webhookUrl) return;
      const body = JSON.stringify(renderEvent({ id: nextEventId++, name: event, trx, createdAt: now() }));
      webhooks.send({ accountId: account.id, url: account.webhookUrl, secret: account.webhookSecret, event, transactionId: trx.id, body });
    },
  });
  const feeRate = options.payoutFeeRate ?? 0;
  const payouts = createPayoutLedger({
    now,
    feeFor: (amount) => Math.ceil(amount * feeRate),
    accountOf: (id) => ledger.accountById(id)!,
    transactionsOf: (id) => ledger.transactionsOf(id),
    onStatusChange({ account, payout, event }) {
      if (!account.webhookUrl) return;
      const body = JSON.stringify(renderPayoutEvent({ id: nextEventId++, name: event, payout, createdAt: now() }));
      webhooks.send({ accountId: account.id, url: account.webhookUrl, secret: account.webhookSecret, event, payoutId: payout.id, body });
    },
  });
  const ctx: SimulatorContext = {
    ledger,
    payouts,
    now,
    timers,
    webhooks,
    approveDelayMs,
    declineDelayMs: options.declineDelayMs ?? approveDelayMs,
    linkBase: (request) => publicBaseUrl ?? `${new URL(request.url).origin}${basePath}`,
  };

  const state = options.state;
  const snapshot = (): SavedState => ({ simulator: "providerA", ledger: ledger.snapshot(), payouts: payouts.snapshot(), nextEventId });
  function save(): void {
    state?.changed(snapshot);
  }
  const loaded = state?.read();
  if (loaded) {
    const saved = loaded.state as SavedState;
    // Killed without closing: ids handed out in its last moments may be missing from the file; they are skipped.
    const gap = loaded.cleanlyClosed ? 0 : IDS_SKIPPED_AFTER_A_CRASH;
    ledger.restore({ ...saved.ledger, next: { ...saved.ledger.next, transaction: saved.ledger.next.transaction + gap } });
    payouts.restore({ ...saved.payouts, next: { ...saved.payouts.next, payout: saved.payouts.next.payout + gap } });
    nextEventId = saved.nextEventId + gap;
    // The outcomes that were waiting on timers when it stopped are played again from now.
    for (const trx of ledger.pending()) if (trx.push) playSandboxOutcome(ctx, trx);
    for (const payout of payouts.all()) resumePayoutOutcome(ctx, payout);
  }

  const app = new Elysia({ name: "simulator-providerA" })
    .onError(({ code, error }) => {
      if (error instanceof ProviderAError) return Response.json(error.toBody(), { status: error.status });
      if (code === "NOT_FOUND") return Response.json({ message: "Not found" }, { status: 404 });
      return Response.json({ message: "Internal error" }, { status: 500 });
    })
    // Every request that may have changed something is saved (soon: `simulator-state.ts`).
    .onAfterHandle({ as: "global" }, ({ request }) => {
      if (request.method !== "GET" && request.method !== "HEAD") save();
    })
    .use(controlRoutes(ctx))
    .use(payoutControlRoutes(ctx))
    // Before the API's `POST /v1/{mode}`, which would otherwise read `payouts` as a mode.
    .use(payoutRoutes(ctx))
    .use(apiRoutes(ctx));

  return Object.assign(app, {
    /** Cancels the pending sandbox outcomes and webhook attempts; the app answers on but schedules nothing. */
    close(): void {
      timers.close();
      webhooks.close();
      state?.close(snapshot);
    },
    /** Resolves once every webhook sent so far is delivered or given up. */
    webhooksIdle(): Promise<void> {
      return webhooks.idle();
    },
  });
}

export type ProviderASimulator = ReturnType<typeof createProviderASimulator>;
