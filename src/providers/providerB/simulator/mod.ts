/**
 * The provider B simulator: a PayDunya-compatible API (providers.md, "Provider B") with its hosted pages,
 * IPNs, our PERMIT protocol and the disburse v2 API (providers-money-out.md) with its sandbox console, plus the control surface of "The simulators' own control surface". All
 * state lives in the instance; `close()` stops the IPN retries and the disbursements' timers.
 *
 * | Route | Does |
 * |---|---|
 * | `POST /sandbox-api/v1/checkout-invoice/create`, `GET …/checkout-invoice/confirm/{token}` | checkout, mode `test` |
 * | `POST /sandbox-api/v1/permit/create`, `GET …/permit/confirm/{token}`, `POST …/permit/charge`, `POST …/permit/revoke` | PERMIT, mode `test` |
 * | the same under `/api/v1/…` | mode `live` |
 * | `GET /sandbox-checkout/invoice/{token}`, `GET /checkout/invoice/{token}`, `…/receipt/{token}` | hosted checkout page, receipt |
 * | `GET /permit/authorize/{token}` | PERMIT authorisation page |
 * | `POST /_sim/accounts` | a test account: `{ masterKey, privateKey, publicKey, token }` |
 * | `POST /_sim/invoices/{token}/pay`, `…/fail`, `…/cancel` | the checkout buttons; each sends the IPN |
 * | `POST /_sim/permits/{token}/authorize`, `…/decline`, `…/revoke`, `…/expire` | permit state changes; each sends the IPN |
 * | `POST /_sim/permits/{token}/fail-next`, `…/succeed-next`, `…/pending-next` | how the permit's next charges end |
 * | `GET /_sim/ipns`, `POST /_sim/ipns/{id}/resend`, `GET /_sim/health` | the IPN (and disbursement callback) delivery log; one sent again (a duplicate); liveness |
 * | `GET /_sim/invoices` | every invoice (checkouts, SoftPay payments, permit charges): token, status, amount, custom data |
 * | `POST /api/v2/disburse/get-invoice`, `…/submit-invoice`, `…/check-status`, `GET …/check-balance` | disburse v2 (payouts), `disburse/` |
 * | `POST /sandbox-api/v1/softpay/{slug}`, `…/softpay/checkout/make-payment` (and under `/api/v1`) | SoftPay direct payments, `softpay-routes.ts` |
 * | `GET /softpay/pay/{token}`, `GET /_sim/softpay`, `POST /_sim/softpay/{token}/approve\|fail`, `POST /_sim/softpay/next` | SoftPay's page, list, console buttons and fault |
 * | `GET /console`, `/_sim/disbursements…`, `/_sim/disburse/next-submit`, `/_sim/accounts/{masterKey}/balances` | the sandbox console of payouts and its controls |
 *
 * Given a `state` file, the simulator starts from what it holds (accounts with their balances, invoices,
 * permits, disbursements, SoftPay payments) and writes it again after every change, so keys a tenant stored
 * before a restart still work after it (issue 25).
 *
 * @example
 * const simulator = createProviderBSimulator({ basePath: "/sandbox/providerB" });
 * gateway.mount("/sandbox/providerB", simulator.fetch);
 * // … on shutdown:
 * simulator.close();
 */
import { Elysia } from "elysia";
import { providerApiRoutes } from "./api-routes.ts";
import type { SimulatorContext } from "./context.ts";
import type { StateFile } from "../../simulator-state.ts";
import { controlRoutes } from "./control-routes.ts";
import { disburseApiRoutes } from "./disburse/api-routes.ts";
import { disburseControlRoutes } from "./disburse/control-routes.ts";
import { resumeDisbursements } from "./disburse/disbursements.ts";
import { hostedPageRoutes } from "./hosted-pages.ts";
import { createIpnSender, type FetchLike } from "./ipn-sender.ts";
import { softpayRoutes } from "./softpay-routes.ts";
import { resumeSoftpays } from "./softpay.ts";
import { createSimulatorStore, restoreStore, snapshotStore, type StoreState } from "./store.ts";
import { RESPONSE_CODES, refusal } from "./wire.ts";

export type { IpnDelivery } from "./ipn-sender.ts";

export interface ProviderBSimulatorOptions {
  /** Absolute URL the simulator's pages start from (e.g. `https://gw.example/sandbox/providerB`); wins over the request's origin. */
  publicBaseUrl?: string;
  /** Where the simulator is mounted (e.g. `/sandbox/providerB`), added to the request's origin. Default none. */
  basePath?: string;
  /** The clock for invoice, permit and receipt dates. Default: the system clock. */
  now?: () => Date;
  /** What posts the IPNs. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Waits before each IPN retry; its length bounds the retries. Default 0.5, 2, 5, 15 and 30 s. */
  ipnRetryDelaysMs?: readonly number[];
  /** How long one IPN attempt may take, and get-invoice's empty POST to a callback URL. Default 10 s. */
  ipnAttemptTimeoutMs?: number;
  /** How long a sandbox disbursement below 1000 or above 5000 stays pending before it ends. Default 1 s. */
  approveDelayMs?: number;
  /** Where the simulator keeps its memory between runs (`providers/simulator-state.ts`). Default none: memory only. */
  state?: StateFile;
}

/** What the state file of a provider B simulator holds. */
interface SavedState {
  simulator: "providerB";
  store: StoreState;
}

export const DEFAULT_IPN_RETRY_DELAYS_MS: readonly number[] = [500, 2_000, 5_000, 15_000, 30_000];

const trimSlash = (value: string) => value.replace(/\/+$/, "");

/** Builds one provider B simulator: an Elysia app serving from `/`, with `close()`. */
export function createProviderBSimulator(options: ProviderBSimulatorOptions = {}) {
  const basePath = options.basePath ? `/${options.basePath.replace(/^\/+|\/+$/g, "")}` : "";
  const publicBaseUrl = options.publicBaseUrl ? trimSlash(options.publicBaseUrl) : undefined;
  const callOut: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const attemptTimeoutMs = options.ipnAttemptTimeoutMs ?? 10_000;
  const sim: SimulatorContext = {
    store: createSimulatorStore(),
    ipn: createIpnSender({ fetch: callOut, retryDelaysMs: options.ipnRetryDelaysMs ?? DEFAULT_IPN_RETRY_DELAYS_MS, attemptTimeoutMs }),
    now: options.now ?? (() => new Date()),
    fetch: callOut,
    disburse: { delayMs: options.approveDelayMs ?? 1_000, probeTimeoutMs: attemptTimeoutMs, timers: new Set() },
    baseUrlOf: (request) => publicBaseUrl ?? `${new URL(request.url).origin}${basePath}`,
    saveState: () => options.state?.changed(snapshot),
  };
  const snapshot = (): SavedState => ({ simulator: "providerB", store: snapshotStore(sim.store) });
  const loaded = options.state?.read();
  if (loaded) {
    restoreStore(sim.store, (loaded.state as SavedState).store);
    // What was waiting on timers when it stopped is played again from now.
    resumeDisbursements(sim);
    resumeSoftpays(sim);
  }

  const app = new Elysia()
    .onError(({ code, error }) => {
      if (code === "NOT_FOUND") return refusal(404, RESPONSE_CODES.notFound, "Not Found");
      return refusal(500, RESPONSE_CODES.internal, `Simulator error: ${error instanceof Error ? error.message : String(error)}`);
    })
    // Every request that may have changed something is saved (soon: `simulator-state.ts`).
    .onAfterHandle({ as: "global" }, ({ request }) => {
      if (request.method !== "GET" && request.method !== "HEAD") sim.saveState();
    })
    .get("/_sim/health", () => Response.json({ status: "ok", simulator: "providerB" }))
    .use(controlRoutes(sim))
    .use(softpayRoutes(sim))
    .use(providerApiRoutes(sim, "test"))
    .use(providerApiRoutes(sim, "live"))
    .use(hostedPageRoutes(sim))
    .use(disburseApiRoutes(sim))
    .use(disburseControlRoutes(sim));

  return Object.assign(app, {
    /** Stops every pending IPN retry and in-flight IPN, and the disbursements' timers. */
    close: () => {
      sim.ipn.close();
      for (const timer of sim.disburse.timers) clearTimeout(timer);
      sim.disburse.timers.clear();
      options.state?.close(snapshot);
    },
  });
}

/** A provider B simulator, as `createProviderBSimulator` returns it. */
export type ProviderBSimulator = ReturnType<typeof createProviderBSimulator>;
