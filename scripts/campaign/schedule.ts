/**
 * The campaign's schedule, built whole from its seed before anything runs: which flows start when, on which
 * tenant and operator, for how much, and which faults strike when and where. The same seed gives the same
 * schedule (`bun run campaign -- --seed 7 --dry-run` prints it), so a failing run can be replayed.
 */

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counter, as in PractRand): a seeded generator of floats in [0, 1).
 * Seeded through splitmix32 so that nearby seeds give unrelated streams.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  const splitmix32 = () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix32();
  let b = splitmix32();
  let c = splitmix32();
  let d = splitmix32();
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** A wallet provider A collects from and pays out to: its numbers are `prefix` and `digits` more. */
export interface Wallet {
  operator: string;
  country: string;
  prefix: string;
  digits: number;
}

export const WALLETS: readonly Wallet[] = [
  { operator: "mtn", country: "bj", prefix: "+22997", digits: 6 },
  { operator: "moov", country: "bj", prefix: "+22995", digits: 6 },
  { operator: "togocel", country: "tg", prefix: "+22890", digits: 6 },
  { operator: "mtn", country: "ci", prefix: "+22505", digits: 8 },
];

/**
 * What a flow does. `pay`: a payment the sandbox approves (below 1000); `pay-declined`: one it declines (above
 * 5000); `pay-console`: one that waits for the sandbox console (1000–5000), approved there late; `pay-refund`:
 * a payment, then part of it refunded through the gateway; `payout`: money out to a wallet; `checkout`: a
 * provider B hosted checkout whose page's button (`button`) the customer presses; `permit-charge`: a provider B
 * permit the customer authorises, then charged at once; `permit-renewal`: one authorised, then given a daily
 * renewal schedule whose first period the renewal sweep charges.
 */
export const FLOW_KINDS = ["pay", "pay-declined", "pay-console", "pay-refund", "payout", "checkout", "permit-charge", "permit-renewal"] as const;
export type FlowKind = (typeof FLOW_KINDS)[number];
const FLOW_WEIGHTS: Record<FlowKind, number> = {
  pay: 30,
  "pay-declined": 8,
  "pay-console": 8,
  "pay-refund": 20,
  payout: 12,
  checkout: 10,
  "permit-charge": 6,
  "permit-renewal": 6,
};
/** The hosted checkout page's buttons, and how often a customer presses each. */
const CHECKOUT_BUTTONS = { pay: 7, fail: 2, cancel: 1 } as const;
export type CheckoutButton = keyof typeof CHECKOUT_BUTTONS;

/**
 * The faults: a process SIGKILLed (then started again), the gateway's PostgreSQL backends terminated, its Redis
 * connections killed, a payment refunded at the provider behind the gateway's back, provider B acting on the next
 * payment and then not answering, a provider A notification posted twice or a stale one posted after the final
 * one, a provider B IPN sent twice, a merchant's webhook endpoint failing or hanging a while, a process's clock
 * jumping forward by minutes (and back); on a fleet of servers of the campaign's own, PostgreSQL restarted and a
 * Redis node SIGKILLed.
 */
/** The furthest a `clock-jump` moves a process's clock ahead: what it makes the process date ahead of the others. */
export const MAX_CLOCK_JUMP_MS = 240_000;

export const FAULT_KINDS = [
  "kill-api",
  "kill-worker",
  "pg-terminate",
  "redis-kill",
  "provider-refund",
  "provider-times-out",
  "duplicate-notification",
  "stale-notification",
  "endpoint-fails",
  "endpoint-hangs",
  "duplicate-ipn-b",
  "clock-jump",
  "pg-restart",
  "redis-node-kill",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** The faults that need servers of the campaign's own (`--fleet`): the shared servers are never struck. */
const FLEET_ONLY: readonly FaultKind[] = ["pg-restart", "redis-node-kill"];

/** How long each kind of fault lasts, in ms (a process's or server's downtime, a bad spell, a jump held). */
function durationRange(kind: FaultKind): [number, number] {
  if (kind === "pg-restart") return [1000, 5000];
  if (kind === "clock-jump") return [5000, 30_000];
  return [300, 3000];
}

export interface Flow {
  id: number;
  atMs: number;
  kind: FlowKind;
  tenant: number;
  /** Which API node the client calls first. */
  node: number;
  wallet: Wallet;
  /** The customer's (or, for a payout, the recipient's) number: one per flow, as a provider limits payouts per number. */
  phone: string;
  amount: number;
  /** For `pay-refund`: the part refunded. */
  refundAmount: number;
  /** For `pay-console`: how long after the payment the console approves it; for `checkout` and permits, before the customer acts. */
  consoleDelayMs: number;
  /** For `checkout`: the button the customer presses on the hosted page. */
  button: CheckoutButton;
}

export interface Fault {
  id: number;
  atMs: number;
  kind: FaultKind;
  /** The process, tenant or receiver aimed at (by index), or which payment among those eligible (a fraction). */
  target: number;
  /** How long the fault lasts (a process's or server's downtime, an endpoint's bad spell, a clock jump held). */
  durationMs: number;
  /** For `clock-jump`: how far forward the clock jumps (1 to 4 minutes). */
  jumpMs?: number;
}

export interface ScheduleOptions {
  seed: number;
  flows: number;
  faults: number;
  tenants: number;
  apiNodes: number;
  workers: number;
  /** Over how long the flows and faults are spread. */
  spanMs: number;
  /** On a fleet of the campaign's own servers (`--fleet`): the faults that strike servers are in the draw. */
  fleet: boolean;
  /** The Redis nodes a `redis-node-kill` may strike (1, or 3 for a Redis Cluster). */
  redisNodes: number;
}

export interface Schedule {
  options: ScheduleOptions;
  flows: Flow[];
  faults: Fault[];
}

function weighted<K extends string>(random: () => number, weights: Record<K, number>): K {
  const entries = Object.entries(weights) as [K, number][];
  let roll = random() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [key, weight] of entries) {
    roll -= weight;
    if (roll < 0) return key;
  }
  return entries[entries.length - 1]![0];
}

const between = (random: () => number, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

/** The whole schedule of a campaign, from its seed alone. */
export function buildSchedule(options: ScheduleOptions): Schedule {
  const random = seededRandom(options.seed);
  const flows: Flow[] = [];
  for (let id = 0; id < options.flows; id++) {
    const kind = weighted(random, FLOW_WEIGHTS);
    const amount = kind === "pay-declined" ? between(random, 6000, 9000) : kind === "pay-console" ? between(random, 1000, 5000) : between(random, 100, 990);
    const wallet = WALLETS[between(random, 0, WALLETS.length - 1)]!;
    flows.push({
      id,
      atMs: Math.floor(random() * options.spanMs),
      kind,
      tenant: between(random, 0, options.tenants - 1),
      node: between(random, 0, options.apiNodes - 1),
      wallet,
      phone: `${wallet.prefix}${String(id).padStart(wallet.digits, "0")}`,
      amount: kind === "payout" ? between(random, 50, 300) : amount,
      refundAmount: between(random, 1, Math.max(1, Math.floor(amount / 2))),
      consoleDelayMs: between(random, 200, 3000),
      button: weighted(random, CHECKOUT_BUTTONS),
    });
  }
  const kinds = FAULT_KINDS.filter((kind) => options.fleet || !FLEET_ONLY.includes(kind));
  const faults: Fault[] = [];
  for (let id = 0; id < options.faults; id++) {
    const kind = kinds[between(random, 0, kinds.length - 1)]!;
    const targets =
      kind === "kill-api"
        ? options.apiNodes
        : kind === "kill-worker"
          ? options.workers
          : kind === "clock-jump"
            ? options.apiNodes + options.workers
            : kind === "redis-node-kill"
              ? options.redisNodes
              : kind.startsWith("endpoint")
                ? options.tenants
                : 1000;
    const [shortest, longest] = durationRange(kind);
    faults.push({
      id,
      // Faults strike while flows still run: within the first 90 % of the span.
      atMs: Math.floor(random() * options.spanMs * 0.9),
      kind,
      target: between(random, 0, targets - 1),
      durationMs: between(random, shortest, longest),
      // Below provider A's 300-s signature window: a clock further ahead would refuse its notifications until it came back.
      ...(kind === "clock-jump" && { jumpMs: between(random, 60_000, MAX_CLOCK_JUMP_MS) }),
    });
  }
  flows.sort((x, y) => x.atMs - y.atMs || x.id - y.id);
  faults.sort((x, y) => x.atMs - y.atMs || x.id - y.id);
  return { options, flows, faults };
}

/** The schedule as text, one line per flow and fault in time order (what `--dry-run` prints). */
export function describeSchedule(schedule: Schedule): string {
  const { options } = schedule;
  const lines = [
    `campaign seed=${options.seed} flows=${options.flows} faults=${options.faults} tenants=${options.tenants} api=${options.apiNodes} workers=${options.workers} span=${options.spanMs}ms${
      options.fleet ? ` fleet redis-nodes=${options.redisNodes}` : ""
    }`,
  ];
  const events = [
    ...schedule.flows.map((f) => ({
      at: f.atMs,
      text: `flow ${f.id} ${f.kind} tenant=${f.tenant} node=${f.node} ${f.wallet.country}:${f.wallet.operator} ${f.phone} amount=${f.amount}${
        f.kind === "pay-refund"
          ? ` refund=${f.refundAmount}`
          : f.kind === "pay-console"
            ? ` console-after=${f.consoleDelayMs}ms`
            : f.kind === "checkout"
              ? ` ${f.button}-after=${f.consoleDelayMs}ms`
              : ""
      }`,
    })),
    ...schedule.faults.map((f) => ({
      at: f.atMs,
      text: `fault ${f.id} ${f.kind} target=${f.target} for=${f.durationMs}ms${f.jumpMs === undefined ? "" : ` jump=${f.jumpMs}ms`}`,
    })),
  ].sort((x, y) => x.at - y.at);
  for (const event of events) lines.push(`+${String(event.at).padStart(7)}ms ${event.text}`);
  return lines.join("\n");
}
