#!/usr/bin/env bun
/**
 * Where a request's CPU goes, by step, from a `.cpuprofile` (`bun run bench --filter … --cpu-prof`, one row
 * per run, or `bun --cpu-prof bench/micro/read-path-cost.ts`): every sample is counted once, against the
 * step of its own function or, for a native function (Response, JSON.stringify, a regular expression…),
 * of the nearest caller that names one. With the row's µs of CPU per request (the bench's "server CPU
 * µs/request"), each share is also given in µs.
 *
 * ```sh
 * bun bench/profile-steps.ts bench/results/profiles/gateway-….cpuprofile --last 7 --us 62
 * ```
 * `--last <s>`: only the profile's last seconds (the measured load, not the start-up and set-up).
 */
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Steps, tried in order on a frame's function and file; the first that matches takes the sample. */
const STEPS: [string, RegExp][] = [
  ["garbage collection", /^gc /],
  ["head size check (header-limit.ts)", /header-limit\.ts/],
  ["REST lookup (route-table.ts)", /route-table\.ts/],
  ["request id", /request-id\.ts|randomUUID/],
  ["metrics", /http\/metrics\.ts|prom-client/],
  ["CORS", /http\/cors\.ts/],
  ["request log line", /pino|logger\.ts/],
  ["rate limit (limiter, headers)", /rate-limit|ratelimit-headers|redis-buckets|enforceRateLimit|applyRateLimit/],
  ["hostile-text scan", /hostile-text|refuseHostileText/],
  [
    "auth: token cache, key status, tenant",
    /services\/auth|authenticate|bearerToken|admitPrincipal|admitActive|admitTenant|key-status|find-tenant|resolveTenant|lru-cache/,
  ],
  ["caches' lookups (expiring-map.ts)", /expiring-map\.ts/],
  ["zod validation (input and output)", /node_modules\/zod\//],
  ["direct call (direct-call.ts)", /routers\/direct-call\.ts/],
  ["tRPC middleware chain, the bases' guards (trpc.ts)", /@trpc\/server|routers\/trpc\.ts/],
  ["the read itself (service, final-read cache)", /src\/services\/|src\/routers\//],
  ["response: JSON and Response (responses.ts)", /http\/responses\.ts|http\/compression\.ts/],
  ["REST bridge (rest-bridge.ts)", /http\/rest-bridge\.ts/],
  ["fetch wrapper (app.ts)", /http\/app\.ts/],
  ["HTTP server, promises, other runtime", /^/],
];

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { last: { type: "string" }, us: { type: "string" } },
  allowPositionals: true,
});
const file = positionals[0];
if (!file) {
  console.error("usage: bun bench/profile-steps.ts <file.cpuprofile> [--last <seconds>] [--us <µs CPU per request>]");
  process.exit(2);
}
const profile = (await Bun.file(file).json()) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const frameText = (node: ProfileNode) => `${node.callFrame.functionName} ${node.callFrame.url}`;
const isNative = (node: ProfileNode) => node.callFrame.url === "" || node.callFrame.url.startsWith("node:") || !node.callFrame.url.includes("/");
const stepOfFrame = (node: ProfileNode) => STEPS.findIndex(([, pattern]) => pattern.test(frameText(node)));

function stepOf(id: number): number {
  const node = nodes.get(id)!;
  if (/^\((idle|program|root)\)$/.test(node.callFrame.functionName)) return -1;
  if (node.callFrame.functionName === "gc") return 0;
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const frame = nodes.get(at)!;
    if (isNative(frame) && at !== id) continue;
    const step = stepOfFrame(frame);
    if (step !== STEPS.length - 1) return step;
    if (!isNative(frame)) return step;
  }
  return STEPS.length - 1;
}

let elapsed = 0;
const times = profile.timeDeltas.map((delta) => (elapsed += delta));
const from = values.last ? elapsed - Number(values.last) * 1e6 : Number.NEGATIVE_INFINITY;
const counts = new Array<number>(STEPS.length).fill(0);
let total = 0;
profile.samples.forEach((id, index) => {
  if (times[index]! < from) return;
  const step = stepOf(id);
  if (step < 0) return;
  counts[step]! += 1;
  total += 1;
});
const perRequest = values.us ? Number(values.us) : undefined;
console.log(`${total} samples${values.last ? ` in the last ${values.last} s` : ""}\n`);
console.log(`| step | share of CPU |${perRequest ? " µs/request |" : ""}`);
console.log(`| --- | ---: |${perRequest ? " ---: |" : ""}`);
for (const [index, [name]] of STEPS.entries()) {
  const share = counts[index]! / total;
  if (share < 0.005) continue;
  console.log(`| ${name} | ${(share * 100).toFixed(1)} % |${perRequest ? ` ${(share * perRequest).toFixed(1)} |` : ""}`);
}
