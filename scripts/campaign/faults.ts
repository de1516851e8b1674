/**
 * The faults a campaign strikes with, each as it happens in production: a process killed without a chance to
 * clean up, the database dropping the gateway's connections, Redis dropping them, a provider refunding behind
 * the gateway's back, a provider notifying twice or notifying a stale state after the final one, a merchant's
 * endpoint failing or hanging for a while, a process's clock stepped forward by minutes and back; on servers
 * of the campaign's own (`--fleet`), PostgreSQL restarted and a Redis node killed.
 */
import { writeFileSync } from "node:fs";
import { Redis } from "ioredis";
import postgres from "postgres";
import { signFedapayWebhook } from "../../src/providers/providerA/simulator/webhook-sender.ts";
import type { Cluster } from "./cluster.ts";
import { type Outcome, type Tenant, simulatorTransactions } from "./flows.ts";
import type { Fault } from "./schedule.ts";

/** What one fault did, for the run's log (`fault 3 kill-api: SIGKILL api 1, up again after 2.1 s`). */
export type FaultReport = string;

async function terminateBackends(cluster: Cluster): Promise<number> {
  const admin = postgres(cluster.serverUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select pg_terminate_backend(pid) as done from pg_stat_activity
                             where datname = ${cluster.databaseName} and pid <> pg_backend_pid()`;
    return rows.filter((row) => row.done).length;
  } finally {
    await admin.end();
  }
}

/** The local addresses of the gateway processes' connections to Redis (`ss -tnp`: only our own processes' are shown with a pid). */
function redisConnectionsOf(pids: number[], redisPort: string): string[] {
  const listed = Bun.spawnSync(["ss", "-tnpH", "state", "established", `( dport = :${redisPort} )`]).stdout.toString();
  const wanted = new Set(pids);
  const addresses: string[] = [];
  for (const line of listed.split("\n")) {
    const pid = /pid=(\d+)/.exec(line)?.[1];
    if (!pid || !wanted.has(Number(pid))) continue;
    const local = line.trim().split(/\s+/)[2];
    if (local) addresses.push(local);
  }
  return addresses;
}

async function killRedisConnections(cluster: Cluster): Promise<number> {
  let killed = 0;
  for (const redisUrl of cluster.redisUrls) {
    const addresses = redisConnectionsOf(cluster.pids(), new URL(redisUrl).port || "6379");
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      for (const address of addresses)
        killed += Number(
          await redis.call("CLIENT", "KILL", "ADDR", address).then(
            () => 1,
            () => 0,
          ),
        );
    } finally {
      await redis.quit();
    }
  }
  return killed;
}

/** The IPNs (and disbursement callbacks) provider B delivered (answered 200): the ones a duplicate repeats. */
async function deliveredIpns(cluster: Cluster): Promise<{ id: number; token: string; status: string }[]> {
  const log = (await (await fetch(`${cluster.simulatorB}/_sim/ipns`)).json()) as {
    deliveries: { id: number; token: string; status: string; delivered: boolean; resendOf?: number }[];
  };
  return log.deliveries.filter((d) => d.delivered && d.resendOf === undefined).sort((x, y) => x.id - y.id);
}

/** A settled transaction of ours at the simulator, chosen by the fault's target among those in `statuses`. */
async function pickTransaction(cluster: Cluster, outcome: Outcome, fault: Fault, statuses: string[]) {
  const ours = new Set(outcome.payments.map((p) => p.id));
  const eligible = (await simulatorTransactions(cluster)).filter(
    (t) => statuses.includes(t.status) && t.merchant_reference !== null && ours.has(t.merchant_reference.split(/[.:]/)[0]!),
  );
  eligible.sort((x, y) => x.id - y.id);
  return eligible.length === 0 ? undefined : eligible[fault.target % eligible.length];
}

/** Posts a provider A notification about `transactionId`, signed as the provider signs it, to the API node the provider notifies. */
async function notify(cluster: Cluster, transactionId: number, override: { name: string; status?: string }): Promise<number> {
  const all = await fetch(`${cluster.simulatorA}/_sim/transactions`).then((r) => r.json() as Promise<{ transactions: Record<string, unknown>[] }>);
  const entity = all.transactions.find((t) => t.id === transactionId);
  if (!entity) return 0;
  const { phone_number: _phone, push_sent: _push, ...transaction } = entity;
  const body = JSON.stringify({
    klass: "v1/event",
    id: 900_000_000 + Math.floor(Math.random() * 1_000_000),
    name: override.name,
    object: "transaction",
    object_id: transactionId,
    account_id: transaction.account_id,
    entity: { ...transaction, ...(override.status && { status: override.status }) },
    created_at: new Date().toISOString(),
  });
  const signature = signFedapayWebhook({ secret: cluster.providerA.webhookSecret, timestampSeconds: Math.floor(Date.now() / 1000), body });
  for (const base of cluster.apiUrls) {
    const answer = await fetch(`${base}/providerA/webhook/sandbox`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-fedapay-signature": signature },
      body,
    }).catch(() => undefined);
    if (answer) return answer.status;
  }
  return 0;
}

/** Strikes one fault; resolves when it is over (a killed process is up again, an endpoint's bad spell has passed). */
export async function strike(input: { fault: Fault; cluster: Cluster; tenants: Tenant[]; outcome: Outcome }): Promise<FaultReport> {
  const { fault, cluster, tenants, outcome } = input;
  const head = `fault ${fault.id} ${fault.kind}`;
  switch (fault.kind) {
    case "kill-api":
    case "kill-worker": {
      const role = fault.kind === "kill-api" ? "api" : "worker";
      const node = cluster.nodes.filter((n) => n.role === role)[fault.target];
      if (!node) return `${head}: no ${role} ${fault.target}`;
      const started = Date.now();
      await cluster.killAndRestart(node, fault.durationMs);
      return `${head}: SIGKILL ${role} ${fault.target}, up again after ${((Date.now() - started) / 1000).toFixed(1)} s`;
    }
    case "pg-terminate":
      return `${head}: ${await terminateBackends(cluster)} backend(s) of the gateway's database terminated`;
    case "redis-kill":
      return `${head}: ${await killRedisConnections(cluster)} Redis connection(s) of the gateway killed`;
    case "provider-refund": {
      const transaction = await pickTransaction(cluster, outcome, fault, ["approved"]);
      if (!transaction) return `${head}: no approved payment yet`;
      const answer = await fetch(`${cluster.simulatorA}/_sim/transactions/${transaction.id}/refund`, { method: "POST" });
      if (answer.ok && transaction.merchant_reference) outcome.refundedAtProvider.push(transaction.merchant_reference.split(/[.:]/)[0]!);
      return `${head}: transaction ${transaction.id} (${transaction.merchant_reference}) refunded at the provider: HTTP ${answer.status}`;
    }
    case "provider-times-out": {
      // Provider B's next SoftPay call does the payment, then answers after the gateway stopped waiting.
      const answer = await fetch(`${cluster.simulatorB}/_sim/softpay/next`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: "timeout_after", delayMs: 6000 }),
      });
      return `${head}: provider B's next payment acts, then answers after 6 s: HTTP ${answer.status}`;
    }
    case "duplicate-notification": {
      const transaction = await pickTransaction(cluster, outcome, fault, ["approved", "declined", "refunded"]);
      if (!transaction) return `${head}: no settled payment yet`;
      const name = `transaction.${transaction.status}`;
      const first = await notify(cluster, transaction.id, { name });
      const second = await notify(cluster, transaction.id, { name });
      return `${head}: ${name} of transaction ${transaction.id} posted twice: HTTP ${first}, ${second}`;
    }
    case "stale-notification": {
      const transaction = await pickTransaction(cluster, outcome, fault, ["approved", "declined", "refunded"]);
      if (!transaction) return `${head}: no settled payment yet`;
      // An older state arriving after the final one: the gateway must not move the payment back.
      const status = transaction.status === "refunded" ? "approved" : "pending";
      const answer = await notify(cluster, transaction.id, { name: status === "pending" ? "transaction.created" : "transaction.approved", status });
      return `${head}: stale '${status}' of ${transaction.status} transaction ${transaction.id} posted: HTTP ${answer}`;
    }
    case "duplicate-ipn-b": {
      const delivered = await deliveredIpns(cluster);
      const ipn = delivered[fault.target % Math.max(1, delivered.length)];
      if (!ipn) return `${head}: no provider B IPN delivered yet`;
      const answer = await fetch(`${cluster.simulatorB}/_sim/ipns/${ipn.id}/resend`, { method: "POST" });
      return `${head}: provider B's IPN ${ipn.id} ('${ipn.status}' of ${ipn.token}) sent again: HTTP ${answer.status}`;
    }
    case "clock-jump": {
      const node = cluster.nodes[fault.target % cluster.nodes.length]!;
      const jumpMs = fault.jumpMs ?? 60_000;
      const run = node.clockBusy.then(async () => {
        writeFileSync(node.clockFile, String(jumpMs));
        await Bun.sleep(fault.durationMs);
        writeFileSync(node.clockFile, "0");
      });
      node.clockBusy = run.catch(() => undefined);
      await run;
      return `${head}: ${node.role} ${node.index}'s clock ${(jumpMs / 1000).toFixed(0)} s ahead for ${fault.durationMs} ms, then back`;
    }
    case "pg-restart": {
      if (!cluster.servers) return `${head}: no PostgreSQL of the campaign's own (--fleet)`;
      const started = Date.now();
      await cluster.servers.restartPostgres(fault.durationMs);
      return `${head}: PostgreSQL stopped (fast) for ${fault.durationMs} ms, up again after ${((Date.now() - started) / 1000).toFixed(1)} s`;
    }
    case "redis-node-kill": {
      const node = cluster.servers?.redisNodes[fault.target % Math.max(1, cluster.servers.redisNodes.length)];
      if (!node) return `${head}: no Redis of the campaign's own (--fleet)`;
      const started = Date.now();
      await node.killAndRestart(fault.durationMs);
      return `${head}: Redis ${node.address} SIGKILLed, started again with its data after ${((Date.now() - started) / 1000).toFixed(1)} s`;
    }
    case "endpoint-fails":
    case "endpoint-hangs": {
      const tenant = tenants[fault.target % tenants.length]!;
      tenant.receiver.mode = fault.kind === "endpoint-fails" ? "fails" : "hangs";
      await Bun.sleep(fault.durationMs);
      tenant.receiver.mode = "ok";
      return `${head}: tenant ${tenant.index}'s endpoint ${fault.kind === "endpoint-fails" ? "answered 503" : "hung"} for ${fault.durationMs} ms`;
    }
  }
}
