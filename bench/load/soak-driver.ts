/**
 * The soak's load (issue 27 point 5): a separate Bun process that sends a fixed mix of requests at a
 * fixed arrival rate — an open model: arrival i is sent at i/rate s from the start whatever the earlier
 * ones are doing, and its latency runs from that due time to its answer, so a slow gateway cannot hide
 * behind the generator waiting for it (coordinated omission).
 *
 *   bun bench/load/soak-driver.ts <file holding one SoakDriverInput as JSON> <output file>
 *
 * Writes one {@link SoakDriverOutput} as JSON to the output file (megabytes: every request's record; a
 * pipe's write may still be pending when the process exits). It uses `fetch` (keep-alive, Bun's pool): at a
 * few hundred requests per second the client's cost is small next to the gateway's, and requests in
 * flight are not capped by a connection count, which an open model needs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { arrivalsIn, dueAtMs, kindSequence, SOAK_KINDS, type SoakKind, type SoakRecord } from "../harness/soak-plan.ts";

export interface SoakDriverInput {
  url: string;
  ratePerS: number;
  durationMs: number;
  timeoutMs: number;
  /** Arrivals per round of each kind, in {@link SOAK_KINDS} order. */
  weights: number[];
  /** Requests above this many in flight are not sent and count as errors (status 0): the generator must not snowball. */
  maxInFlight: number;
  /** The payments/payouts tenant's bearer token. */
  tenantToken: string;
  /** Payment ids to read before the run has made its own. */
  seedPaymentIds: string[];
  paymentBody: string;
  /** `{{n}}` in it becomes the payout's number in the run, 6 digits (provider A pays one phone at most 3 times a day). */
  payoutBody: string;
  /** Verified IPN bodies of the provider B tenant's paid checkouts, each sent once, in order. */
  ipnBodies: string[];
}

export interface SoakDriverOutput {
  /** Wall-clock ms of the driver's start (due time 0). */
  startedAtWallMs: number;
  records: SoakRecord[];
  /** Arrivals not sent: too many in flight, or no IPN body left. */
  skipped: Record<SoakKind, number>;
  /** The first failure of each kind, to tell what went wrong. */
  firstFailure: Partial<Record<SoakKind, string>>;
}

/** The payments whose status the reads ask for: the newest this run made (at most this many kept). */
const RECENT_PAYMENTS = 1_000;

export async function driveSoak(input: SoakDriverInput): Promise<SoakDriverOutput> {
  const total = arrivalsIn(input.durationMs, input.ratePerS);
  const kinds = kindSequence(input.weights, total);
  const auth = { authorization: `Bearer ${input.tenantToken}` };
  const json = { ...auth, "content-type": "application/json" };
  const recent: string[] = [...input.seedPaymentIds];
  let readCursor = 0;
  let ipnCursor = 0;
  let payouts = 0;
  const records: SoakRecord[] = [];
  const skipped = Object.fromEntries(SOAK_KINDS.map((k) => [k, 0])) as Record<SoakKind, number>;
  const firstFailure: Partial<Record<SoakKind, string>> = {};
  let inFlight = 0;
  const pending = new Set<Promise<void>>();

  const requestOf = (kind: SoakKind): { path: string; init: RequestInit } | undefined => {
    switch (kind) {
      case "payment":
        return { path: "/payments", init: { method: "POST", headers: json, body: input.paymentBody } };
      case "status": {
        const id = recent[readCursor++ % Math.max(1, recent.length)];
        return id ? { path: `/payments/${id}`, init: { headers: auth } } : undefined;
      }
      case "list":
        return { path: "/payments?limit=20", init: { headers: auth } };
      case "ipn": {
        const body = input.ipnBodies[ipnCursor++];
        return body === undefined
          ? undefined
          : { path: "/providerB/webhook", init: { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body } };
      }
      case "payout":
        return {
          path: "/payouts",
          init: { method: "POST", headers: json, body: input.payoutBody.replace("{{n}}", String(payouts++ % 1_000_000).padStart(6, "0")) },
        };
    }
  };

  const send = async (k: number, kind: SoakKind, due: number, started: number, path: string, init: RequestInit) => {
    let status = 0;
    try {
      const response = await fetch(`${input.url}${path}`, { ...init, signal: AbortSignal.timeout(input.timeoutMs) });
      const text = await response.text();
      status = response.status;
      if (status >= 200 && status <= 299) {
        if (kind === "payment") {
          const id = (JSON.parse(text) as { id?: string }).id;
          if (id) {
            recent.push(id);
            if (recent.length > RECENT_PAYMENTS) recent.shift();
          }
        }
      } else firstFailure[kind] ??= `${init.method ?? "GET"} ${path.replace(/\/pay_[^/?]+/, "/{id}")} answered ${status}: ${text.slice(0, 300)}`;
    } catch (error) {
      firstFailure[kind] ??= `${init.method ?? "GET"} ${path}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    }
    records.push([k, due, performance.now() - started - due, status]);
  };

  const started = performance.now();
  const startedAtWallMs = performance.timeOrigin + started;
  for (let i = 0; i < total; i++) {
    const due = dueAtMs(i, input.ratePerS);
    const wait = started + due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    const k = kinds[i]!;
    const kind = SOAK_KINDS[k]!;
    const request = requestOf(kind);
    if (!request || inFlight >= input.maxInFlight) {
      skipped[kind]++;
      // Not sent is not answered: it counts against the minute, as a timeout would.
      if (request) records.push([k, due, performance.now() - started - due, 0]);
      continue;
    }
    inFlight++;
    const p = send(k, kind, due, started, request.path, request.init).finally(() => {
      inFlight--;
      pending.delete(p);
    });
    pending.add(p);
  }
  await Promise.all(pending);
  return { startedAtWallMs, records, skipped, firstFailure };
}

if (import.meta.main) {
  const [file, out] = process.argv.slice(2);
  if (!file || !out) {
    process.stderr.write("usage: bun bench/load/soak-driver.ts <input.json> <output.json>\n");
    process.exit(2);
  }
  const input = JSON.parse(readFileSync(file, "utf8")) as SoakDriverInput;
  writeFileSync(out, JSON.stringify(await driveSoak(input)));
  process.exit(0);
}
