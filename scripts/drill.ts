#!/usr/bin/env bun
/**
 * `bun run drill`: the failover drill (issue 28 point 4). A fleet (`deploy/fleet/fleet.ts`: HAProxy, two API
 * nodes, two workers, PgBouncer, Redis) takes payments from MTN Benin phones — a wallet both providers
 * serve — at a fixed rate; after `--before` seconds provider A becomes unreachable (a proxy in front of its
 * sandbox refuses every connection) for `--down` seconds, then comes back. Each payment's answer, and the
 * provider that took it, is recorded by the second it was sent; once quiet, each payment's final state.
 *
 * It prints, per 5-second window, what was sent, answered 200, refused, and taken by each provider, then
 * the error window (first to last error), how many payments moved to provider B, and how many ended
 * succeeded, failed or still pending. The same numbers go to `--json <file>` when asked.
 *
 * @example
 * ```sh
 * bun run drill                                   # 10 payments/s: 30 s, provider A down 60 s, 30 s
 * bun run drill -- --rate 20 --before 20 --down 60 --after 40 --json drill.json
 * ```
 */
import { parseArgs } from "node:util";
import { startFleet } from "../deploy/fleet/fleet.ts";
import { startTcpProxy, type TcpProxy } from "../test/support/tcp-proxy.ts";
import { join } from "node:path";
import { REPO_ROOT } from "../deploy/fleet/processes.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rate: { type: "string", default: "10" },
    before: { type: "string", default: "30" },
    down: { type: "string", default: "60" },
    after: { type: "string", default: "30" },
    json: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(`usage: bun run drill [-- --rate <n/s>] [--before <s>] [--down <s>] [--after <s>] [--json <file>]
  Payments at a fixed rate through a fleet; provider A unreachable for --down seconds after --before; then --after.
`);
  process.exit(0);
}
const whole = (value: string, name: string, min: number) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min}, not ${value}`);
  return n;
};
const rate = whole(values.rate, "rate", 1);
const before = whole(values.before, "before", 0);
const down = whole(values.down, "down", 1);
const after = whole(values.after, "after", 0);
const log = (line: string) => process.stderr.write(`drill: ${line}\n`);

/** One payment of the drill. */
interface Sent {
  second: number;
  status: number;
  paymentId?: string;
  provider?: string;
  attempts?: number;
  code?: string;
  ms: number;
  final?: string;
}

let proxy: TcpProxy | undefined;
const fleet = await startFleet({
  api: 2,
  workers: 2,
  approveDelayMs: 300,
  env: { RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "100000", LOG_LEVEL: "warn" },
  log,
  providerAAddress: async (sandboxUrl) => {
    const target = new URL(sandboxUrl);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    return `http://127.0.0.1:${proxy.port}`;
  },
});

async function api<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${fleet.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

try {
  const admin = Bun.spawnSync([process.execPath, join(REPO_ROOT, "src", "main.ts"), "token", "--admin"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...fleet.env },
    stdout: "pipe",
  })
    .stdout.toString()
    .trim();
  const created = await api<{ tenant: { id: string }; apiKey: { id: string; secret: string } }>("POST", "/tenants", admin, { name: "Drill shop" });
  const issued = await fetch(`${fleet.url}/auth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa(`${created.body.apiKey.id}:${created.body.apiKey.secret}`)}`, "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials",
  });
  const token = ((await issued.json()) as { access_token: string }).access_token;
  // Provider B (SoftPay) serves MTN Benin too: the tenant's own sandbox account there.
  const keys = (await (await fetch(`${fleet.sandbox.providerB}/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
  const stored = await api("PUT", `/tenants/${created.body.tenant.id}/credentials/providerB`, token, { environment: "sandbox", ...keys });
  if (stored.status !== 200) throw new Error(`storing provider B credentials answered ${stored.status}`);
  const routes = await api<{ rules?: unknown }>("GET", "/routing", token);
  log(`tenant ${created.body.tenant.id}; its routing: ${JSON.stringify(routes.body).slice(0, 200)}`);

  const sent: Sent[] = [];
  const total = before + down + after;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  log(`${rate} payments/s for ${total} s; provider A unreachable from ${before} s to ${before + down} s`);
  let cut = false;
  let restored = false;
  for (let i = 0; i < total * rate; i++) {
    const at = (i / rate) * 1000;
    const wait = started + at - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const second = Math.floor((performance.now() - started) / 1000);
    if (!cut && second >= before) {
      cut = true;
      await proxy!.refuse();
      log(`provider A unreachable (second ${second})`);
    }
    if (!restored && second >= before + down) {
      restored = true;
      await proxy!.forward();
      log(`provider A back (second ${second})`);
    }
    const t0 = performance.now();
    inFlight.push(
      api<{ id?: string; provider?: string; attempts?: unknown[]; code?: string }>("POST", "/payments", token, {
        amount: 500,
        description: `Drill ${i}`,
        operator: "mtn",
        customer: { phone: { number: "+22997000000", country: "bj" } },
      }).then(
        (answer) => {
          sent.push({
            second,
            status: answer.status,
            ms: performance.now() - t0,
            ...(answer.body.id ? { paymentId: answer.body.id } : {}),
            ...(answer.body.provider ? { provider: answer.body.provider } : {}),
            ...(Array.isArray(answer.body.attempts) ? { attempts: answer.body.attempts.length } : {}),
            ...(answer.body.code ? { code: answer.body.code } : {}),
          });
        },
        () => void sent.push({ second, status: 0, ms: performance.now() - t0, code: "network" }),
      ),
    );
  }
  if (!restored) await proxy!.forward();
  await Promise.all(inFlight);
  log(`${sent.length} sent in ${Math.round((performance.now() - started) / 1000)} s; waiting for them to settle`);

  // Quiet: every payment final, or 90 s.
  const deadline = Date.now() + 90_000;
  const ids = sent.filter((s) => s.paymentId);
  while (Date.now() < deadline) {
    const pending = ids.filter((s) => s.final === undefined || s.final === "pending");
    if (pending.length === 0) break;
    for (const batch of chunks(pending, 50))
      await Promise.all(
        batch.map(async (s) => {
          s.final = (await api<{ state: string }>("GET", `/payments/${s.paymentId}`, token)).body.state;
        }),
      );
    await Bun.sleep(1000);
  }

  const report = summarize(sent);
  // The money invariants over everything the drill did: no payment collected twice, none handed to two providers that may both have acted.
  const audit = Bun.spawnSync([process.execPath, join(REPO_ROOT, "src", "main.ts"), "audit", "--env", "sandbox"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...fleet.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const violations = audit.stdout.toString().trim();
  report.text += `passerelle audit: exit ${audit.exitCode}${violations ? `\n${violations}` : ", no violation"}\n`;
  process.stdout.write(report.text);
  if (values.json) await Bun.write(values.json, JSON.stringify({ rate, before, down, after, ...report.numbers, auditExit: audit.exitCode }, null, 2));
} finally {
  await fleet.stop();
  await proxy?.stop();
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function summarize(sent: Sent[]) {
  const windows = new Map<number, Sent[]>();
  for (const s of sent) {
    const w = Math.floor(s.second / 5) * 5;
    windows.set(w, [...(windows.get(w) ?? []), s]);
  }
  const p99 = (xs: number[]) => (xs.length === 0 ? 0 : xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!);
  const lines = ["| seconds | provider A | sent | 200 | refused | on provider A | on provider B | p99 ms |", "|---|---|---:|---:|---:|---:|---:|---:|"];
  for (const [w, batch] of [...windows.entries()].sort((a, b) => a[0] - b[0])) {
    const state = w + 5 <= before ? "up" : w >= before + down ? "up" : "down";
    lines.push(
      `| ${w}–${w + 5} | ${state} | ${batch.length} | ${batch.filter((s) => s.status === 200).length} | ${batch.filter((s) => s.status !== 200).length} | ${batch.filter((s) => s.provider === "providerA").length} | ${batch.filter((s) => s.provider === "providerB").length} | ${Math.round(p99(batch.map((s) => s.ms)))} |`,
    );
  }
  const errors = sent.filter((s) => s.status !== 200);
  const errorCodes = new Map<string, number>();
  for (const e of errors) errorCodes.set(`${e.status} ${e.code ?? ""}`.trim(), (errorCodes.get(`${e.status} ${e.code ?? ""}`.trim()) ?? 0) + 1);
  const downSent = sent.filter((s) => s.second >= before && s.second < before + down);
  const moved = downSent.filter((s) => s.provider === "providerB").length;
  const finals = new Map<string, number>();
  for (const s of sent.filter((x) => x.paymentId)) finals.set(s.final ?? "unknown", (finals.get(s.final ?? "unknown") ?? 0) + 1);
  const errorWindow = errors.length === 0 ? "none" : `seconds ${Math.min(...errors.map((e) => e.second))}–${Math.max(...errors.map((e) => e.second))}`;
  const numbers = {
    sent: sent.length,
    answered200: sent.length - errors.length,
    errors: errors.length,
    errorCodes: Object.fromEntries(errorCodes),
    errorWindow,
    sentWhileDown: downSent.length,
    movedToProviderB: moved,
    finalStates: Object.fromEntries(finals),
  };
  const text = `${lines.join("\n")}

sent ${numbers.sent}, answered 200: ${numbers.answered200}, refused: ${numbers.errors} ${errors.length ? JSON.stringify(numbers.errorCodes) : ""}
error window: ${errorWindow}
while provider A was down: ${downSent.length} sent, ${moved} taken by provider B
final states: ${JSON.stringify(numbers.finalStates)}
`;
  return { text, numbers };
}
