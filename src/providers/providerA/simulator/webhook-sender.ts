/**
 * Provider A's webhooks as the simulator sends them (providers.md): `POST` JSON to the account's webhook
 * URL with `X-FEDAPAY-SIGNATURE: t=<unix>,s=<hex HMAC-SHA256(webhook secret, "<t>.<raw body>")>`, signed
 * afresh on each attempt, retried a few times with a growing delay until the target answers 2xx. Sending
 * never blocks the API answer that caused it.
 */
import { createHmac } from "node:crypto";
import type { Timers } from "./timers.ts";

/** The `X-FEDAPAY-SIGNATURE` value for one attempt. */
export function signFedapayWebhook(input: { secret: string; timestampSeconds: number; body: string }): string {
  const signature = createHmac("sha256", input.secret).update(`${input.timestampSeconds}.${input.body}`).digest("hex");
  return `t=${input.timestampSeconds},s=${signature}`;
}

/** One webhook and what became of it, as `GET /_sim/accounts/{secretKey}/webhook` lists it. */
export interface WebhookDelivery {
  id: number;
  accountId: number;
  event: string;
  /** The transaction a `transaction.*` event is about. */
  transactionId?: number;
  /** The payout a `payout.*` event is about. */
  payoutId?: number;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  lastResponseStatus: number | null;
  lastError: string | null;
}

export interface WebhookSenderDeps {
  fetch: typeof fetch;
  now: () => Date;
  timers: Timers;
  /** Waits before each retry; its length is the number of retries. */
  retryDelaysMs: readonly number[];
  /** Per attempt. */
  timeoutMs: number;
}

/** How many deliveries the simulator remembers (oldest forgotten first). */
const DELIVERY_LOG_SIZE = 500;

export type WebhookSender = ReturnType<typeof createWebhookSender>;

/** A webhook sender with its own delivery log. */
export function createWebhookSender(deps: WebhookSenderDeps) {
  const log: WebhookDelivery[] = [];
  const inFlight = new Set<AbortController>();
  let unfinished = 0;
  let idleWaiters: (() => void)[] = [];
  let nextId = 1;
  let closed = false;

  function wakeIdleWaiters() {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function finish(delivery: WebhookDelivery, status: "delivered" | "failed") {
    if (delivery.status !== "pending") return;
    delivery.status = status;
    unfinished--;
    if (unfinished === 0) wakeIdleWaiters();
  }

  async function attempt(delivery: WebhookDelivery, secret: string, body: string): Promise<void> {
    if (closed) return finish(delivery, "failed");
    delivery.attempts++;
    const controller = new AbortController();
    inFlight.add(controller);
    const cancelTimeout = deps.timers.after(deps.timeoutMs, () => controller.abort(new Error(`no answer within ${deps.timeoutMs} ms`)));
    try {
      const timestampSeconds = Math.floor(deps.now().getTime() / 1000);
      const response = await deps.fetch(delivery.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "FedaPay-Webhook (passerelle simulator)",
          "x-fedapay-signature": signFedapayWebhook({ secret, timestampSeconds, body }),
        },
        body,
        redirect: "manual",
        signal: controller.signal,
      });
      await response.arrayBuffer().catch(() => undefined);
      delivery.lastResponseStatus = response.status;
      delivery.lastError = null;
      if (response.status >= 200 && response.status < 300) return finish(delivery, "delivered");
    } catch (error) {
      delivery.lastError = error instanceof Error ? error.message : String(error);
    } finally {
      cancelTimeout();
      inFlight.delete(controller);
    }
    const delay = deps.retryDelaysMs[delivery.attempts - 1];
    if (delay === undefined || closed) return finish(delivery, "failed");
    deps.timers.after(delay, () => void attempt(delivery, secret, body));
  }

  return {
    /** Queues one webhook (the event's JSON text is the exact body signed and sent on every attempt). */
    send(input: { accountId: number; url: string; secret: string; event: string; transactionId?: number; payoutId?: number; body: string }): WebhookDelivery {
      const delivery: WebhookDelivery = {
        id: nextId++,
        accountId: input.accountId,
        event: input.event,
        ...(input.transactionId !== undefined && { transactionId: input.transactionId }),
        ...(input.payoutId !== undefined && { payoutId: input.payoutId }),
        url: input.url,
        status: "pending",
        attempts: 0,
        lastResponseStatus: null,
        lastError: null,
      };
      log.push(delivery);
      if (log.length > DELIVERY_LOG_SIZE) log.shift();
      unfinished++;
      void attempt(delivery, input.secret, input.body);
      return delivery;
    },

    /** The remembered deliveries of one account, oldest first. */
    deliveriesOf(accountId: number): WebhookDelivery[] {
      return log.filter((delivery) => delivery.accountId === accountId);
    },

    /** Resolves once every webhook sent so far is delivered or given up (tests use it). */
    idle(): Promise<void> {
      return unfinished === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },

    /** Aborts the attempts in flight and stops retrying (the owner closes the timers). */
    close(): void {
      closed = true;
      for (const controller of inFlight) controller.abort(new Error("simulator closed"));
      inFlight.clear();
      for (const delivery of log) finish(delivery, "failed");
      unfinished = 0;
      wakeIdleWaiters();
    },
  };
}
