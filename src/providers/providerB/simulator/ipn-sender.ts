/**
 * Sends IPNs the way provider B does: a form-encoded POST to the callback URL, retried a bounded number of
 * times after a short backoff while the receiver does not answer 200. Sending never blocks the caller
 * (the button's answer goes out at once), and `close()` cancels every pending retry and request.
 */
import { encodePhpForm } from "./php-form.ts";

/** The part of `fetch` the sender uses (tests may pass their own). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** One IPN and how its delivery went, as `GET /_sim/ipns` shows it. */
export interface IpnDelivery {
  id: number;
  url: string;
  /** `data[invoice][token]`, `data[permit][token]`, or a disbursement's `token`. */
  token: string;
  status: string;
  attempts: number;
  delivered: boolean;
  /** True once every attempt failed. */
  gaveUp: boolean;
  lastHttpStatus: number | null;
  lastError: string | null;
  /** The delivery this one sends again (`POST /_sim/ipns/{id}/resend`), if it is a resend. */
  resendOf?: number;
}

export interface IpnSenderOptions {
  fetch: FetchLike;
  /** Waits before each retry; the number of entries bounds the retries. */
  retryDelaysMs: readonly number[];
  /** How long one attempt may take. */
  attemptTimeoutMs: number;
}

export interface IpnSender {
  /**
   * Starts delivering `{ data }` to `url` and returns at once; `flat` posts `data`'s fields themselves (a
   * disbursement's callback: `status=…&token=…`).
   */
  send(url: string, data: Record<string, unknown>, subject: { token: string; status: string }, options?: { flat?: boolean }): void;
  /**
   * Sends delivery `id`'s body again, to the same URL, as a new delivery (with its own retries): a provider
   * notifying twice. Undefined when `id` is not among the kept deliveries.
   */
  resend(id: number): IpnDelivery | undefined;
  /** The most recent deliveries, oldest first. */
  deliveries(): readonly IpnDelivery[];
  /** Stops every retry and in-flight request; nothing is sent afterwards. */
  close(): void;
}

const KEPT_DELIVERIES = 500;

/** Builds a sender; see `IpnSenderOptions` for the retry bounds. */
export function createIpnSender(options: IpnSenderOptions): IpnSender {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const inFlight = new Set<AbortController>();
  const log: IpnDelivery[] = [];
  // What each kept delivery posted, for a resend (not shown in the log).
  const bodies = new Map<number, string>();
  let nextId = 1;
  let closed = false;

  const attempt = async (delivery: IpnDelivery, body: string): Promise<void> => {
    if (closed) return;
    delivery.attempts += 1;
    const controller = new AbortController();
    inFlight.add(controller);
    const timeout = setTimeout(() => controller.abort(new Error(`no answer within ${options.attemptTimeoutMs} ms`)), options.attemptTimeoutMs);
    try {
      const response = await options.fetch(delivery.url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "PayDunya-IPN (Passerelle simulator)" },
        body,
        redirect: "manual",
        signal: controller.signal,
      });
      await response.arrayBuffer().catch(() => undefined);
      delivery.lastHttpStatus = response.status;
      delivery.lastError = null;
      if (response.status === 200) {
        delivery.delivered = true;
        return;
      }
    } catch (error) {
      delivery.lastError = error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timeout);
      inFlight.delete(controller);
    }
    const delay = options.retryDelaysMs[delivery.attempts - 1];
    if (closed || delay === undefined) {
      delivery.gaveUp = !closed;
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void attempt(delivery, body);
    }, delay);
    // A pending retry alone does not keep a process alive (a test that forgets `close()` still ends).
    timer.unref?.();
    timers.add(timer);
  };

  const deliver = (url: string, subject: { token: string; status: string }, body: string, resendOf?: number): IpnDelivery => {
    const delivery: IpnDelivery = {
      id: nextId++,
      url,
      token: subject.token,
      status: subject.status,
      attempts: 0,
      delivered: false,
      gaveUp: false,
      lastHttpStatus: null,
      lastError: null,
      ...(resendOf !== undefined && { resendOf }),
    };
    log.push(delivery);
    bodies.set(delivery.id, body);
    if (log.length > KEPT_DELIVERIES) bodies.delete(log.shift()!.id);
    void attempt(delivery, body);
    return delivery;
  };

  return {
    send(url, data, subject, options = {}) {
      if (closed) return;
      deliver(url, subject, encodePhpForm(options.flat ? data : { data }));
    },
    resend(id) {
      const original = log.find((delivery) => delivery.id === id);
      const body = bodies.get(id);
      if (closed || !original || body === undefined) return undefined;
      return deliver(original.url, original, body, id);
    },
    deliveries: () => log,
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const controller of inFlight) controller.abort(new Error("simulator closed"));
      inFlight.clear();
    },
  };
}
