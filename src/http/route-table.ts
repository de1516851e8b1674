/**
 * A lookup of the REST routes ahead of Elysia, for the gateway's `fetch` wrapper: a request whose path
 * plainly names one REST route goes straight to the bridge's handler, skipping Elysia's router and its
 * per-request context (~5 µs of a ~50 µs cached read). Everything else — any path that is not plain, or
 * that a route of another kind could answer — returns undefined and goes through Elysia as before, so
 * Elysia stays the one router of record.
 *
 * Matching is Elysia's: case-sensitive, a static segment before a parameter at each level (with
 * backtracking), parameters of a whole segment. Paths with `%`, `//`, a trailing `/`, or `.`/`..`
 * segments are not plain and are left to Elysia (which decodes and normalises them).
 *
 * @module
 */

import type { RequestInfo } from "./request-info.ts";

/** What the bridge's handler receives (the part of Elysia's context it reads). */
export interface RouteCall {
  request: Request;
  params: Record<string, string>;
  /** The request's id and what the call learns (made by the `fetch` wrapper). */
  info?: RequestInfo;
}

/** A handler answers without a promise when nothing it does waits (`rest-bridge.ts`: a hot read answered from caches). */
export type RouteHandler = (call: RouteCall) => Response | Promise<Response>;

interface Node {
  statics: Map<string, Node>;
  param?: { name: string; node: Node };
  /** Per method: a handler and its route's template, or null for a route that only Elysia answers. */
  methods: Map<string, Route | null>;
}

/** A route the table answers: its handler and its template (`/payments/{payment_id}`). */
interface Route {
  handler: RouteHandler;
  route: string;
}

const newNode = (): Node => ({ statics: new Map(), methods: new Map() });

/** What {@link RouteTable.match} answers; shared between requests, never to be mutated. */
export interface RouteMatch {
  handler: RouteHandler;
  params: Readonly<Record<string, string>>;
  route: string;
}

/**
 * How many matched paths with parameters are remembered per method (oldest out first), and the longest path
 * remembered: at most ~0.5 MB whatever paths clients send.
 */
export const MATCH_MEMO_SIZE = 1_000;
export const MATCH_MEMO_MAX_PATH = 200;

/** A parameter level reached by two routes with different names: Elysia decides there. */
const AMBIGUOUS = "";

/** The routes; see the module comment. */
export interface RouteTable {
  /** Adds a route (`/payments/{payment_id}` form); `null` reserves it for Elysia. */
  add(method: string, path: string, handler: RouteHandler | null): void;
  /** Paths under this prefix (a mount, a wildcard route) always go to Elysia. */
  reservePrefix(prefix: string): void;
  /** The handler, parameters and route template (`/payments/{payment_id}`) for a request, or undefined when Elysia should answer it. */
  match(method: string, url: string): RouteMatch | undefined;
}

/** `%` (encoded), `//`, and `.`/`..` segments: paths Elysia decodes or normalises. */
const NOT_PLAIN = /%|\/\/|\/\.\.?(?:\/|$)/;

/** The path of an absolute request URL (`http://host:port/a/b?x` → `/a/b`), or undefined when it is not plain. */
function plainPath(url: string): string | undefined {
  const scheme = url.indexOf("://");
  if (scheme === -1) return undefined;
  const start = url.indexOf("/", scheme + 3);
  if (start === -1) return undefined;
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = query === -1 ? (hash === -1 ? url.length : hash) : hash === -1 ? query : Math.min(query, hash);
  const path = url.slice(start, end);
  if ((path.length > 1 && path.charCodeAt(path.length - 1) === 47) /* trailing / */ || NOT_PLAIN.test(path)) return undefined;
  return path;
}

/** Creates an empty table. */
export function createRouteTable(): RouteTable {
  const root = newNode();
  const prefixes: string[] = [];
  /**
   * Per method, the paths of the routes without a parameter, and of every route's path that a parameter route
   * could also match: one Map lookup answers `/auth/whoami`; null means "walk the tree" (see `add`).
   */
  const exact = new Map<string, Map<string, RouteMatch | null>>();
  /**
   * Per method, the paths with parameters already matched (`/providerA/transaction/412/status`): a client polling
   * one resource costs one Map lookup, not a walk that splits the path and builds its parameters. Only paths the
   * tree answered with a route are kept, and routes are added at start-up only (`add` clears it).
   */
  const memo = new Map<string, Map<string, RouteMatch>>();
  let hasParamRoutes = false;

  /**
   * Depth-first, static before parameter, backtracking; `params` collects name, value, name, value… along
   * the match (indexed loops, no tuples or iterators: this runs on every request).
   */
  function find(node: Node, segments: string[], index: number, method: string, params: string[]): Route | null | undefined {
    if (index === segments.length) return node.methods.get(method);
    const segment = segments[index]!;
    const child = node.statics.get(segment);
    if (child) {
      const found = find(child, segments, index + 1, method, params);
      if (found !== undefined) return found;
    }
    const param = node.param;
    if (param && segment.length > 0) {
      if (param.name === AMBIGUOUS) return null;
      const depth = params.length;
      params.push(param.name, segment);
      const found = find(param.node, segments, index + 1, method, params);
      if (found !== undefined) return found;
      params.length = depth;
    }
    return undefined;
  }

  return {
    add(method, path, handler) {
      let node = root;
      // Anything this table cannot mirror exactly is left to Elysia: a parameter as the first segment
      // (it would match every mount), two parameter names at one level, the same route twice.
      let deferToElysia = false;
      for (const segment of path.split("/").slice(1)) {
        const param = /^\{(\w+)\}$/.exec(segment);
        if (param) {
          if (node === root) deferToElysia = true;
          node.param ??= { name: param[1]!, node: newNode() };
          if (node.param.name !== param[1]) node.param.name = AMBIGUOUS;
          node = node.param.node;
        } else {
          let next = node.statics.get(segment);
          if (!next) node.statics.set(segment, (next = newNode()));
          node = next;
        }
      }
      if (node.methods.has(method)) deferToElysia = true;
      const route = deferToElysia || !handler ? null : { handler, route: path };
      node.methods.set(method, route);
      if (path.includes("{")) hasParamRoutes = true;
      else {
        let paths = exact.get(method);
        if (!paths) exact.set(method, (paths = new Map()));
        paths.set(path, route && { handler: route.handler, params: {}, route: route.route });
      }
      memo.clear();
    },

    reservePrefix(prefix) {
      prefixes.push(prefix);
    },

    match(method, url) {
      const path = plainPath(url);
      if (path === undefined) return undefined;
      for (let i = 0; i < prefixes.length; i++) if (path.startsWith(prefixes[i]!)) return undefined;
      // A static route wins over a parameter at every level (the tree's order), so an exact hit is the answer.
      const hit = exact.get(method)?.get(path);
      if (hit) return hit;
      if (hit === null || !hasParamRoutes) return undefined;
      let known = memo.get(method);
      const remembered = known?.get(path);
      if (remembered) return remembered;
      const found: string[] = [];
      const entry = find(root, path.split("/"), 1, method, found); // segments[0] is the "" before the first "/"
      if (!entry) return undefined;
      const params: Record<string, string> = {};
      for (let i = 0; i < found.length; i += 2) params[found[i]!] = found[i + 1]!;
      const answer: RouteMatch = { handler: entry.handler, params, route: entry.route };
      if (path.length > MATCH_MEMO_MAX_PATH) return answer;
      if (!known) memo.set(method, (known = new Map()));
      if (known.size >= MATCH_MEMO_SIZE) known.delete(known.keys().next().value!);
      known.set(path, answer);
      return answer;
    },
  };
}
