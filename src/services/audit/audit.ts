/**
 * The money invariants, checked against what the database holds (issue 24): `passerelle audit` runs them
 * once (one line per violation, exit 1), the sweeper runs them every `AUDIT_EVERY_MS` and sets the gauge
 * `passerelle_invariant_violations{invariant}`, and the test suite runs them after its money-out, routing,
 * failover and fault tests. Each is a query that finds the records breaking it, per environment:
 *
 * | invariant                 | broken when                                                                              |
 * |---------------------------|------------------------------------------------------------------------------------------|
 * | `journal_unbalanced`      | a journal's legs do not sum to zero, or span more than one tenant, currency or holding   |
 * | `pooled_account_negative` | the service's pooled account at a provider holds less than nothing for all its tenants    |
 * | `tenant_pooled_negative`  | a tenant's money on a pooled account is below zero (spent more there than it collected)  |
 * | `refunds_exceed_payment`  | a payment's refunds not failed add up to more than it collected                           |
 * | `collection_repeated`     | a payment credited otherwise than once for its amount, one Idempotency-Key answered with two payments, or a payment handed on to a provider that may have acted otherwise than as a rescue try after an offer |
 * | `state_moved_backwards`   | a record's state contradicts a movement already written (collected yet not paid; sent and released; a final payout back to pending) |
 * | `pooled_account_short`    | a provider reports less on its pooled account than the tenants may spend there (`withProviders`) |
 * | `audit_log_chain_broken`  | an audit log entry does not match its hash or does not follow the one before it in its chain (`services/audit-log/chain.ts`) |
 *
 * The last reads the providers (their balances, through the port): money in flight makes the provider's
 * figure and the ledger's differ for a moment, so only a provider balance below what the tenants could
 * still spend (their `available` there, in-flight payouts left out) is a violation.
 *
 * @module
 */
import { sql } from "kysely";
import { Gauge, type Registry } from "prom-client";
import type { Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { auditLogChainBreaks } from "../audit-log/chain.ts";
import { type PooledAccount, pooledAccounts } from "../ledger/pooled-accounts.ts";

export const INVARIANTS = [
  "journal_unbalanced",
  "pooled_account_negative",
  "tenant_pooled_negative",
  "refunds_exceed_payment",
  "collection_repeated",
  "state_moved_backwards",
  "pooled_account_short",
  "audit_log_chain_broken",
] as const;

export type Invariant = (typeof INVARIANTS)[number];

/** One record that breaks an invariant. */
export interface Violation {
  invariant: Invariant;
  environment: Environment;
  /** The journal, payment, payout, holding or key concerned. */
  subject: string;
  message: string;
}

/** At most this many violations of one invariant are listed (the count is exact up to it). */
const LIMIT = 100;

type Row = Record<string, unknown>;

async function rows(deps: Pick<Deps, "db">, query: ReturnType<typeof sql<Row>>): Promise<Row[]> {
  return (await query.execute(deps.db)).rows;
}

/** The deps the audit reads: the database, and the providers when it reads their balances. */
type AuditDeps<WithProviders extends boolean | undefined> = WithProviders extends true ? Deps : Pick<Deps, "db">;

const ENVIRONMENTS: readonly Environment[] = ["sandbox", "live"];

/**
 * Every violation found in `environment` (default both), the provider balances read only when `withProviders`
 * (`pooled`: the pooled accounts already read with them, so that they are not read again).
 *
 * @example
 * ```ts
 * const violations = await audit(deps, { withProviders: false });
 * violations.length; // 0 on a sound ledger
 * ```
 */
export async function audit<WithProviders extends boolean | undefined = undefined>(
  deps: AuditDeps<WithProviders>,
  options: { environment?: Environment; withProviders?: WithProviders; pooled?: readonly PooledAccount[] } = {},
): Promise<Violation[]> {
  const found: Violation[] = [];
  for (const environment of options.environment ? [options.environment] : ENVIRONMENTS) {
    const add = (invariant: Invariant, subject: string, message: string) => found.push({ invariant, environment, subject, message });

    for (const r of await rows(
      deps,
      sql<Row>`select journal, sum(amount)::text as total, count(distinct tenant_id) as tenants, count(distinct currency) as currencies,
                      count(distinct holding) as holdings
               from ledger_entries where environment = ${environment}
               group by journal
               having sum(amount) <> 0 or count(distinct tenant_id) > 1 or count(distinct currency) > 1 or count(distinct holding) > 1
               order by journal limit ${LIMIT}`,
    ))
      add(
        "journal_unbalanced",
        String(r.journal),
        `journal ${r.journal} sums to ${r.total} over ${r.tenants} tenant(s), ${r.currencies} currency(ies) and ${r.holdings} holding(s)`,
      );

    for (const r of await rows(
      deps,
      sql<Row>`select holding, currency, sum(amount)::text as held from ledger_entries
               where environment = ${environment} and holding like 'pooled:%' and account in ('available', 'pending')
               group by holding, currency having sum(amount) < 0 order by holding, currency limit ${LIMIT}`,
    ))
      add("pooled_account_negative", `${r.holding} ${r.currency}`, `the service holds ${r.held} ${r.currency} on ${r.holding} for all its tenants`);

    for (const r of await rows(
      deps,
      sql<Row>`select tenant_id, holding, currency, sum(amount)::text as held from ledger_entries
               where environment = ${environment} and holding like 'pooled:%' and account in ('available', 'pending')
               group by tenant_id, holding, currency having sum(amount) < 0 order by tenant_id, holding limit ${LIMIT}`,
    ))
      add(
        "tenant_pooled_negative",
        `${r.tenant_id} ${r.holding} ${r.currency}`,
        `tenant ${r.tenant_id} holds ${r.held} ${r.currency} on ${r.holding}: more went out of it than the tenant collected there`,
      );

    for (const r of await rows(
      deps,
      sql<Row>`select p.id, p.amount::text as amount, sum(o.amount)::text as refunded from payments p
               join payouts o on o.payment_id = p.id and o.purpose = 'refund' and o.state <> 'failed'
               where p.environment = ${environment}
               group by p.id, p.amount having sum(o.amount) > p.amount order by p.id limit ${LIMIT}`,
    ))
      add("refunds_exceed_payment", String(r.id), `payment ${r.id} collected ${r.amount} and its refunds not failed add up to ${r.refunded}`);

    for (const r of await rows(
      deps,
      sql<Row>`select p.id, p.amount::text as amount, coalesce(sum(e.amount), 0)::text as credited, count(e.id) as legs from payments p
               left join ledger_entries e on e.journal = p.id || '.collected' and e.account = 'available'
               where p.environment = ${environment} and p.state in ('succeeded', 'refunded')
               group by p.id, p.amount having count(e.id) <> 1 or coalesce(sum(e.amount), 0) <> p.amount order by p.id limit ${LIMIT}`,
    ))
      add("collection_repeated", String(r.id), `payment ${r.id} of ${r.amount} is credited ${r.credited} in ${r.legs} entr(ies)`);

    for (const r of await rows(
      deps,
      // The payment an answer names, by either member, as one column: an equality the planner can hash-join (a join
      // on `p.id = … or p.id = …` probed the payments' index twice per key: 2.4 s for 90,000 keys, 0.5 s so).
      sql<Row>`with named as (
                 select k.tenant_id, k.key, k.response_body->>'id' as payment_id from idempotency_keys k
                 where k.environment = ${environment} and k.response_body ? 'id'
                 union all
                 select k.tenant_id, k.key, k.response_body->>'paymentId' from idempotency_keys k
                 where k.environment = ${environment} and k.response_body ? 'paymentId')
               select n.tenant_id, n.key, count(distinct p.id) as payments from named n join payments p on p.id = n.payment_id
               where p.state in ('succeeded', 'refunded')
               group by n.tenant_id, n.key having count(distinct p.id) > 1 order by n.tenant_id, n.key limit ${LIMIT}`,
    ))
      add("collection_repeated", `${r.tenant_id} ${r.key}`, `Idempotency-Key ${r.key} of ${r.tenant_id} answered ${r.payments} paid payments`);

    for (const r of await rows(
      deps,
      // Failover hands a payment on only when its provider provably did not act; a rescue try (issue 31 point 3)
      // only after an offer of the payment's — one push per plan, one rescue try per offer.
      sql<Row>`select a.payment_id, count(*) filter (where not a.rescue) as pushed, count(*) filter (where a.rescue) as tries,
                      coalesce(r.offers, 0) as offers
               from payment_attempts a join payments p on p.id = a.payment_id left join payment_rescues r on r.payment_id = a.payment_id
               where p.environment = ${environment} and a.outcome in ('started', 'unknown')
               group by a.payment_id, r.offers
               having count(*) filter (where not a.rescue) > 1 or count(*) filter (where a.rescue) > coalesce(r.offers, 0)
               order by a.payment_id limit ${LIMIT}`,
    ))
      add(
        "collection_repeated",
        String(r.payment_id),
        Number(r.pushed) > 1
          ? `payment ${r.payment_id} was handed to ${r.pushed} providers that may have acted`
          : `payment ${r.payment_id} was tried ${r.tries} times by its customer after ${r.offers} rescue offer(s)`,
      );

    for (const r of await rows(
      deps,
      sql<Row>`select p.id, p.state from payments p
               where p.environment = ${environment} and p.state in ('pending', 'failed', 'cancelled')
                 and exists (select 1 from ledger_entries e where e.journal = p.id || '.collected')
               order by p.id limit ${LIMIT}`,
    ))
      add("state_moved_backwards", String(r.id), `payment ${r.id} is ${r.state} but was collected (paid) before`);

    for (const r of await rows(
      deps,
      sql<Row>`select o.id, o.state,
                      exists (select 1 from ledger_entries e where e.journal = o.id || '.sent') as sent,
                      exists (select 1 from ledger_entries e where e.journal = o.id || '.released') as released
               from payouts o where o.environment = ${environment}
                 -- Two joins on the journal's key rather than an or of two exists, which the planner ran as a filter
                 -- over every payout (1.9 s for 7,500 payouts and 87,000 entries, 0.1 s so).
                 and o.id in (select s.id from payouts s join ledger_entries e on e.journal = s.id || '.sent' where s.state <> 'sent'
                              union
                              select r.id from payouts r join ledger_entries e on e.journal = r.id || '.released' where r.state <> 'failed')
               order by o.id limit ${LIMIT}`,
    ))
      add(
        "state_moved_backwards",
        String(r.id),
        `${String(r.id).startsWith("rf_") ? "refund" : "payout"} ${r.id} is ${r.state} but its ledger says it was ${[r.sent ? "sent" : "", r.released ? "released (failed)" : ""].filter(Boolean).join(" and ")}`,
      );

    for (const broken of await auditLogChainBreaks(deps, environment, LIMIT)) add("audit_log_chain_broken", `${broken.chain} ${broken.seq}`, broken.message);

    if (options.withProviders) {
      const spendable = new Map<string, number>();
      for (const r of await rows(
        deps,
        sql<Row>`select holding, currency, sum(amount)::text as available from ledger_entries
                 where environment = ${environment} and holding like 'pooled:%' and account = 'available'
                 group by holding, currency`,
      ))
        spendable.set(`${r.holding} ${r.currency}`, Number(r.available));
      const accounts = options.pooled?.filter((a) => a.environment === environment) ?? (await pooledAccounts(deps as Deps, environment));
      for (const account of accounts) {
        const key = `${account.holding} ${account.currency}`;
        const available = spendable.get(key) ?? 0;
        if (account.reported !== null && account.reported < available)
          add(
            "pooled_account_short",
            key,
            `${account.provider} reports ${account.reported} ${account.currency} on the pooled account where the tenants may still spend ${available}`,
          );
      }
    }
  }
  return found;
}

/** One line of a violation, as `passerelle audit` prints it. */
export function violationLine(violation: Violation): string {
  return `${violation.environment} ${violation.invariant} ${violation.subject}: ${violation.message}`;
}

/** What one periodic audit found: its violations and the pooled accounts it read. */
export interface AuditResult {
  violations: Violation[];
  pooled: PooledAccount[];
}

/**
 * Runs every invariant, the providers' balances included, in both environments, and logs each violation
 * (warn, at most 20 lines): the periodic audit of the sweeper (`auditIfDue`) and `passerelle audit`.
 */
export async function runAudit(deps: Deps, options: { environment?: Environment } = {}): Promise<AuditResult> {
  const pooled: PooledAccount[] = [];
  for (const environment of options.environment ? [options.environment] : ENVIRONMENTS) pooled.push(...(await pooledAccounts(deps, environment)));
  // The providers' balances are read once, for the gauges and the check alike.
  const violations = await audit(deps, { ...options, withProviders: true, pooled });
  for (const violation of violations.slice(0, 20))
    deps.logger.warn({ invariant: violation.invariant, environment: violation.environment, subject: violation.subject }, violation.message);
  return { violations, pooled };
}

/** When each gateway's last periodic audit ran (its deps), so that the sweeper audits every `auditEveryMs`. */
const lastAudit = new WeakMap<object, number>();

/** The sweeper's turn: an audit when `config.auditEveryMs` has passed since this process's last (0: never). */
export async function auditIfDue(deps: Deps, record?: (result: AuditResult) => void): Promise<void> {
  const every = deps.config.auditEveryMs;
  if (every <= 0) return;
  const now = deps.now().getTime();
  const last = lastAudit.get(deps);
  if (last !== undefined && now - last < every) return;
  lastAudit.set(deps, now);
  record?.(await runAudit(deps));
}

/**
 * The audit's gauges on the gateway's registry: `passerelle_invariant_violations{invariant, environment}`
 * (records breaking each invariant, as the last audit of this process found them) and, per pooled account,
 * `passerelle_pooled_account_held`, `…_reported` and `…_difference{provider, environment, currency}`
 * (reported − held). A process that has not audited yet shows none of them.
 */
export function registerAuditGauges(registry: Registry): (result: AuditResult) => void {
  const violations = new Gauge({
    name: "passerelle_invariant_violations",
    help: "Records breaking a money invariant (passerelle audit), by invariant and environment, as this process's last audit found them",
    labelNames: ["invariant", "environment"] as const,
    registers: [registry],
  });
  const pooledLabels = ["provider", "environment", "currency"] as const;
  const held = new Gauge({
    name: "passerelle_pooled_account_held",
    help: "What the ledger says the service holds on its pooled account at a provider for all tenants (whole units)",
    labelNames: pooledLabels,
    registers: [registry],
  });
  const reported = new Gauge({
    name: "passerelle_pooled_account_reported",
    help: "What the provider reports its pooled account holds (whole units)",
    labelNames: pooledLabels,
    registers: [registry],
  });
  const difference = new Gauge({
    name: "passerelle_pooled_account_difference",
    help: "Reported − held on a pooled account: below zero, the provider holds less than the service owes its tenants there",
    labelNames: pooledLabels,
    registers: [registry],
  });
  return (result) => {
    violations.reset();
    for (const environment of ENVIRONMENTS) for (const invariant of INVARIANTS) violations.set({ invariant, environment }, 0);
    for (const v of result.violations) violations.inc({ invariant: v.invariant, environment: v.environment });
    for (const gauge of [held, reported, difference]) gauge.reset();
    for (const account of result.pooled) {
      const labels = { provider: account.provider, environment: account.environment, currency: account.currency };
      held.set(labels, account.held);
      if (account.reported !== null) reported.set(labels, account.reported);
      if (account.difference !== null) difference.set(labels, account.difference);
    }
  };
}
