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
export type ReferenceServerName = "elysia-constant";

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
