/**
 * The gateway's routes, generated from the router: every procedure with an OpenAPI route and an input, its
 * zod input schema walked to build a well-shaped input and to find every place a string goes; and the REST
 * and `/trpc` requests that carry an input. For tests that must cover every route, not a hand-written list.
 */
import type { AnyTRPCProcedure } from "@trpc/server";
import { appRouter } from "../../src/routers/app.ts";
import type { Meta } from "../../src/routers/trpc.ts";

export type Segment = string | number;
interface ZodLike {
  _zod: { def: Record<string, unknown> & { type: string } };
  safeParse(value: unknown): { success: boolean };
}
/** Where a string goes: a string value (a string, an enum, a string literal) or a property name (a record's). */
export interface Place {
  path: Segment[];
  kind: "value" | "key";
}

const SOME_ULID = "01JD3Z6Q5W8B8Y4G1M7T2N9XKC";
const NUMBER_CANDIDATES = [500, 1, 60, 1000, 100_000];

/** Tried in order; a string field gets the first one its schema accepts. */
function stringCandidates(tenantId: string): string[] {
  return [
    tenantId,
    ...["pay", "whe", "dlv", "prm", "key", "evt", "sch", "chg"].map((prefix) => `${prefix}_${SOME_ULID}`),
    "https://merchant.example/return",
    "customer@example.com",
    "+22997000000",
    "bj",
    "2026-12-01T00:00:00.000Z",
    "Order 42",
  ];
}

function firstAccepted(schema: ZodLike, candidates: readonly unknown[]): unknown {
  return candidates.find((candidate) => schema.safeParse(candidate).success) ?? candidates[candidates.length - 1];
}

/** A value `schema` accepts, recording in `places` where strings go (optional fields included). */
function wellShaped(schema: ZodLike, path: Segment[], places: Place[], strings: readonly string[]): unknown {
  const def = schema._zod.def;
  switch (def.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(def.shape as Record<string, ZodLike>)) out[key] = wellShaped(field, [...path, key], places, strings);
      return out;
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "nonoptional":
    case "catch":
      return wellShaped(def.innerType as ZodLike, path, places, strings);
    case "pipe":
      return wellShaped(def.in as ZodLike, path, places, strings);
    case "array":
      return [wellShaped(def.element as ZodLike, [...path, 0], places, strings)];
    case "record":
      places.push({ path, kind: "key" });
      return { k: wellShaped(def.valueType as ZodLike, [...path, "k"], places, strings) };
    case "union": {
      const options = def.options as ZodLike[];
      return wellShaped(options.find((option) => option._zod.def.type === "string") ?? options[0]!, path, places, strings);
    }
    case "string":
      places.push({ path, kind: "value" });
      return firstAccepted(schema, strings);
    case "enum":
      places.push({ path, kind: "value" });
      return Object.values(def.entries as Record<string, string>)[0];
    case "literal": {
      const value = (def.values as unknown[])[0];
      if (typeof value === "string") places.push({ path, kind: "value" });
      return value;
    }
    case "number":
      return firstAccepted(schema, NUMBER_CANDIDATES);
    case "boolean":
      return false;
    default:
      throw new Error(`route inputs: no well-shaped value for a zod ${def.type} at ${path.join(".") || "the top"}; teach wellShaped() about it`);
  }
}

/** One route of the router, with a well-shaped input. */
export interface Route {
  procedurePath: string;
  type: "query" | "mutation";
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  pathParams: string[];
  input: Record<string, unknown>;
  places: Place[];
}

/** Every procedure of the app router with an OpenAPI route and an input; ids in inputs name `tenantId`'s kind of ids. */
export function routesWithInputs(tenantId: string): Route[] {
  const strings = stringCandidates(tenantId);
  return Object.entries(appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>).flatMap(([procedurePath, procedure]) => {
    const openapi = (procedure._def.meta as Meta | undefined)?.openapi;
    const schema = (procedure._def as unknown as { inputs: ZodLike[] }).inputs[0];
    if (!openapi || openapi.enabled === false || !schema) return [];
    const places: Place[] = [];
    const input = wellShaped(schema, [], places, strings) as Record<string, unknown>;
    const pathParams = [...openapi.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
    return [{ procedurePath, type: procedure._def.type as Route["type"], method: openapi.method, path: openapi.path, pathParams, input, places }];
  });
}

export const takesBody = (route: Route) => route.method === "POST" || route.method === "PUT" || route.method === "PATCH";

/** The REST request for `input`: path parameters in the path, the rest in the JSON body or the query string. */
export function restRequest(route: Route, input: Record<string, unknown>, headers: Record<string, string>): { url: string; init: RequestInit } {
  const rest = { ...input };
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name]);
    delete rest[name];
    return encodeURIComponent(value);
  });
  if (takesBody(route))
    return { url: path, init: { method: route.method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(rest) } };
  const query = new URLSearchParams(Object.entries(rest).map(([key, value]) => [key, String(value)])).toString();
  return { url: query ? `${path}?${query}` : path, init: { method: route.method, headers } };
}

/** The `/trpc` request for `input`: a query's input in `?input=`, a mutation's as the JSON body. */
export function trpcRequest(route: Route, input: unknown, headers: Record<string, string>): { url: string; init: RequestInit } {
  const json = JSON.stringify(input);
  if (route.type === "query") return { url: `/trpc/${route.procedurePath}?input=${encodeURIComponent(json)}`, init: { headers } };
  return { url: `/trpc/${route.procedurePath}`, init: { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: json } };
}
