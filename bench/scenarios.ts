/**
 * What `bun run bench` measures, as data. A later issue adds a scenario with one entry in {@link scenarios}
 * (and, when it needs a new yardstick, one in {@link references}).
 *
 * Header and body values may hold `{{name}}` placeholders, filled from the run's {@link BenchVariables}
 * once the gateway is up (the admin token is minted then).
 */

/** One HTTP request, sent again and again by every connection of the load generator. */
export interface BenchRequest {
  method: string;
  /** Path and query, e.g. `/auth/whoami`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Reference servers `run.ts` can start: each is a script in `bench/reference-servers/`, listed in `harness/servers.ts`. */
export type ReferenceServerName = "elysia-constant" | "webhook-receiver";

/** A yardstick measured in the same run: a request to a reference server, not to the gateway. */
export interface Reference {
  name: string;
  server: ReferenceServerName;
  request: BenchRequest;
  /** One line for the README and the JSON: what this rate stands for. */
  measures: string;
}

/** A request to the gateway, compared with a {@link Reference} by name. */
export interface Scenario {
  name: string;
  /** The `name` of the reference whose requests/s this scenario's requests/s is divided by. */
  reference: string;
  request: BenchRequest;
  measures: string;
}

/**
 * A webhook fan-out (issue 4 point 7), measured by `harness/fanout.ts` rather than by a load generator:
 * `events` events for one tenant with `endpoints` endpoints at a local receiver (`reference-servers/
 * webhook-receiver.ts`), timed per delivery from its event's commit to its 2xx. Its reference is a
 * plain fetch loop to the same receiver (`load/fetch-loop.ts`). `--fanout-events` and
 * `--fanout-endpoints` override the sizes.
 */
export interface FanoutScenario {
  name: string;
  /** The name of the fetch-loop reference row. */
  reference: string;
  events: number;
  endpoints: number;
  /** Events started per second, steadily; undefined: a burst, as fast as the producers go. */
  eventsPerSecond?: number;
  measures: string;
}

/** Values known only once the gateway runs, for `{{name}}` placeholders. */
export interface BenchVariables {
  adminToken: string;
}

export const references: Reference[] = [
  {
    name: "bare Elysia constant route",
    server: "elysia-constant",
    request: { method: "GET", path: "/", headers: {} },
    measures: "new Elysia().get('/', () => 'ok') in its own process: the most this machine and generator can do",
  },
];

export const scenarios: Scenario[] = [
  {
    name: "GET /auth/whoami (REST, admin JWT)",
    reference: "bare Elysia constant route",
    request: { method: "GET", path: "/auth/whoami", headers: { authorization: "Bearer {{adminToken}}" } },
    measures:
      "the REST bridge end to end: request id, JWT verification (cached after the first hit), the tRPC procedure with output validation, the JSON body, metrics",
  },
];

export const fanoutScenarios: FanoutScenario[] = [
  {
    name: "webhook fan-out, event committed → 2xx received",
    reference: "plain fetch loop to the receiver (20 in flight)",
    events: 1000,
    endpoints: 4,
    measures:
      "a burst: N events recorded as fast as 8 producers go (recordEvent + scheduleDeliveries) for one tenant with E endpoints at a local receiver; the gateway's workers (BullMQ, PostgreSQL) lease, sign, POST through safeFetch and record each attempt; deliveries/s over the batch (throughput) and per-delivery latency from commit to 2xx (backlog included)",
  },
  {
    name: "webhook fan-out at 100 events/s, event committed → 2xx received",
    reference: "plain fetch loop to the receiver (20 in flight)",
    events: 500,
    endpoints: 4,
    eventsPerSecond: 100,
    measures: "the same path at a steady 100 events/s (400 deliveries/s), below the burst's throughput: the latency of a delivery when nothing is queued ahead of it",
  },
];

/** Fills `{{name}}` placeholders in a request's headers and body. Throws on an unknown name. */
export function fillRequest(request: BenchRequest, variables: BenchVariables): BenchRequest {
  const fill = (text: string) =>
    text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
      const value = (variables as unknown as Record<string, string | undefined>)[name];
      if (value === undefined) throw new Error(`bench: unknown placeholder {{${name}}}`);
      return value;
    });
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, fill(v)]));
  return { ...request, headers, ...(request.body === undefined ? {} : { body: fill(request.body) }) };
}
