#!/usr/bin/env bun
/**
 * Where a write path's CPU goes, by module, from a `.cpuprofile` (`bun run bench --filter … --cpu-prof`, one row
 * per run): each sample's **self** time goes to the group of its own frame — our code by file (`src/…`), a
 * package by name (postgres.js, Kysely, BullMQ, ioredis, zod, tRPC, Elysia…), JSON and crypto by the native
 * function's name, and any other native function (a socket write, `fetch`, a promise job) to "native, under <the
 * group of its nearest named caller>"; its **total** time to every group on its stack, once each. With the row's
 * µs of CPU per request (the bench's "server CPU µs/request"), each share is also given in µs.
 *
 * ```sh
 * bun bench/profile-groups.ts bench/results/profiles/gateway-….cpuprofile --timeline      # samples per second
 * bun bench/profile-groups.ts bench/results/profiles/gateway-….cpuprofile --from 20 --to 27 --us 1250
 * ```
 * `--from`/`--to <s>`: only the samples between these seconds of the profile (the measured load, not the start-up
 * and set-up: `--timeline` shows where it is). `--top <n>`: rows per table (default 25).
 */
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const PACKAGES: [string, RegExp][] = [
  ["postgres.js", /node_modules\/postgres\//],
  ["Kysely", /node_modules\/kysely\//],
  ["BullMQ", /node_modules\/bullmq\//],
  ["ioredis", /node_modules\/(ioredis|@ioredis|redis-errors|redis-parser|cluster-key-slot|denque|standard-as-callback)\//],
  ["zod", /node_modules\/zod\//],
  ["tRPC", /node_modules\/@trpc\//],
  ["Elysia", /node_modules\/(elysia|@sinclair|memoirist|cookie|exact-mirror)\//],
  ["pino", /node_modules\/(pino|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|on-exit-leak-free)/],
  ["jose", /node_modules\/jose\//],
  ["prom-client", /node_modules\/(prom-client|tdigest|bintrees)\//],
];

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    from: { type: "string" },
    to: { type: "string" },
    us: { type: "string" },
    top: { type: "string" },
    timeline: { type: "boolean" },
  },
  allowPositionals: true,
});
const file = positionals[0];
if (!file) {
  console.error("usage: bun bench/profile-groups.ts <file.cpuprofile> [--timeline] [--from <s>] [--to <s>] [--us <µs CPU per request>] [--top <n>]");
  process.exit(2);
}
const profile = (await Bun.file(file).json()) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const isIdle = (node: ProfileNode) => /^\((idle|program|root)\)$/.test(node.callFrame.functionName);
const isNative = (node: ProfileNode) => {
  const url = node.callFrame.url;
  return url === "" || url.startsWith("node:") || url.startsWith("bun:") || url.startsWith("internal:") || !url.includes("/");
};

/** A named frame's group: our file, a package, or another file's path. */
function namedGroup(url: string): string {
  const ours = /\/src\/(.*)$/.exec(url);
  if (ours && !url.includes("node_modules")) return `src/${ours[1]}`;
  for (const [name, pattern] of PACKAGES) if (pattern.test(url)) return name;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  return url.replace(/^.*\/(bench|scripts)\//, "$1/");
}

/** A native frame's group by its name, or undefined when its name says nothing. */
function nativeGroup(node: ProfileNode): string | undefined {
  const name = node.callFrame.functionName;
  if (name === "gc" || /^gc /.test(name)) return "garbage collection";
  if (/^(stringify|parse)$/.test(name) && node.callFrame.url === "") return "JSON";
  if (/JSON/.test(name)) return "JSON";
  if (
    /createHash|createHmac|digest|update|randomUUID|getRandomValues|timingSafeEqual|subtle|sign|verify|encrypt|decrypt|pbkdf2|scrypt|Cipher|Decipher|Hmac|Hash/.test(
      name,
    )
  )
    return "crypto";
  if (node.callFrame.url.startsWith("node:")) return undefined;
  return undefined;
}

function groupOf(id: number): string {
  const node = nodes.get(id)!;
  if (!isNative(node)) return namedGroup(node.callFrame.url);
  const byName = nativeGroup(node);
  if (byName) return byName;
  for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
    const caller = nodes.get(at)!;
    if (isIdle(caller)) break;
    if (!isNative(caller)) return `native, under ${namedGroup(caller.callFrame.url)}`;
  }
  return "native, no named caller (server, timers, promise jobs)";
}

/** The groups on a sample's stack, each once, for the total: natives by name or as "Bun runtime (native)". */
function stackGroups(id: number): Set<string> {
  const groups = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const frame = nodes.get(at)!;
    if (isIdle(frame)) break;
    if (isNative(frame)) groups.add(nativeGroup(frame) ?? "Bun runtime (native)");
    else {
      const group = namedGroup(frame.callFrame.url);
      groups.add(group);
      if (group.startsWith("src/")) groups.add("our code (src/, all files)");
    }
  }
  return groups;
}

let elapsed = 0;
const times = profile.timeDeltas.map((delta) => (elapsed += delta));
const start = times[0] ?? 0;

if (values.timeline) {
  const busy = new Map<number, number>();
  const all = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    const second = Math.floor((times[index]! - start) / 1e6);
    all.set(second, (all.get(second) ?? 0) + 1);
    if (!isIdle(nodes.get(id)!)) busy.set(second, (busy.get(second) ?? 0) + 1);
  });
  console.log("| second | busy samples | all samples |\n| ---: | ---: | ---: |");
  for (const [second, count] of [...all.entries()].sort((a, b) => a[0] - b[0])) console.log(`| ${second} | ${busy.get(second) ?? 0} | ${count} |`);
  process.exit(0);
}

const from = values.from ? start + Number(values.from) * 1e6 : Number.NEGATIVE_INFINITY;
const to = values.to ? start + Number(values.to) * 1e6 : Number.POSITIVE_INFINITY;
const self = new Map<string, number>();
const total = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, index) => {
  const at = times[index]!;
  if (at < from || at > to) return;
  if (isIdle(nodes.get(id)!)) return;
  busy += 1;
  const group = groupOf(id);
  self.set(group, (self.get(group) ?? 0) + 1);
  for (const g of stackGroups(id)) total.set(g, (total.get(g) ?? 0) + 1);
});

const perRequest = values.us ? Number(values.us) : undefined;
const top = values.top ? Number(values.top) : 25;
console.log(`${busy} busy samples${values.from || values.to ? ` between ${values.from ?? "the start"} s and ${values.to ?? "the end"} s` : ""}\n`);
for (const [title, counts] of [
  ["self", self],
  ["total (on the stack)", total],
] as const) {
  console.log(`| group | ${title} |${perRequest ? " µs/request |" : ""}`);
  console.log(`| --- | ---: |${perRequest ? " ---: |" : ""}`);
  for (const [group, count] of [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = count / busy;
    console.log(`| ${group} | ${(share * 100).toFixed(1)} % |${perRequest ? ` ${Math.round(share * perRequest)} |` : ""}`);
  }
  console.log();
}
