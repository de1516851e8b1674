/**
 * The simulator's payouts and balances: payouts of an account with the only moves the provider makes
 * (`pending` → `scheduled` | `started` → `processing` → `sent` | `failed`), its documented limits checked at
 * start, and per-mode balances computed from what moved. No HTTP and no timers here; `sent` and `failed`
 * are reported to `onStatusChange`, which sends the webhook.
 *
 * Balances (one per mode and currency, as provider A keeps them): credited by the account's approved
 * transactions of that mode and by hand (`credit`, the control surface), debited by its sent payouts and
 * their fees. The sandbox does not refuse a payout for want of funds, so a balance may go negative.
 */
import { randomBytes } from "node:crypto";
import type { SimAccount, SimTransaction } from "../ledger.ts";
import { ProviderAError } from "../wire.ts";
import {
  type CreatePayoutInput,
  PAYOUT_LIMITS,
  PAYOUT_MODE_COUNTRIES,
  type PayoutMode,
  type PayoutPhoneNumber,
  type PayoutStatus,
  type StartPayoutsInput,
} from "./wire.ts";

export interface SimPayout {
  id: number;
  accountId: number;
  reference: string;
  merchantReference: string | null;
  amount: number;
  currencyIso: string;
  mode: PayoutMode;
  description: string | null;
  customMetadata: Record<string, unknown> | null;
  customer: { firstname: string | null; lastname: string | null; email: string | null; phone: PayoutPhoneNumber };
  /** The number the money goes to: the customer's, or the one the start call named. */
  phone: PayoutPhoneNumber;
  status: PayoutStatus;
  fees: number;
  lastErrorCode: string | null;
  createdAt: Date;
  updatedAt: Date;
  scheduledAt: Date | null;
  startedAt: Date | null;
  sentAt: Date | null;
  failedAt: Date | null;
}

/** A payout that has been started and has not ended. */
export const IN_FLIGHT: readonly PayoutStatus[] = ["scheduled", "started", "processing"];

/** The webhook each final status sends (integrators' names; the provider's docs name none). */
const FINAL_EVENTS = { sent: "payout.sent", failed: "payout.failed" } as const;

export type FinalPayoutStatus = keyof typeof FINAL_EVENTS;

export interface PayoutLedgerDeps {
  now: () => Date;
  /** The fee charged for a payout of `amount` (whole units). */
  feeFor: (amount: number) => number;
  accountOf: (accountId: number) => SimAccount;
  /** The account's transactions (their approved amounts credit the balances). */
  transactionsOf: (accountId: number) => Iterable<SimTransaction>;
  onStatusChange: (change: { account: SimAccount; payout: SimPayout; event: string }) => void;
}

export interface SimBalance {
  id: number;
  accountId: number;
  mode: string;
  currencyIso: string;
  amount: number;
}

const digitsOf = (phone: PayoutPhoneNumber) => phone.number.replace(/\D/g, "");

export type PayoutLedger = ReturnType<typeof createPayoutLedger>;

/** What the payouts' memory keeps between runs (`snapshot()` / `restore()`). */
export interface PayoutLedgerState {
  payouts: SimPayout[];
  /** `[accountId:mode:currency, amount]`: what was credited by hand. */
  credits: [string, number][];
  balanceIds: [string, number][];
  next: { payout: number; balance: number };
}

/** A fresh, empty memory of payouts. */
export function createPayoutLedger(deps: PayoutLedgerDeps) {
  const payouts = new Map<number, SimPayout>();
  const references = new Map<string, number>();
  const credits = new Map<string, number>();
  const balanceIds = new Map<string, number>();
  let nextPayoutId = 1;
  let nextBalanceId = 1;

  function refuseStart(payout: SimPayout, phone: PayoutPhoneNumber, now: Date): void {
    if (payout.status !== "pending") throw new ProviderAError(422, `Payout ${payout.id} is already ${payout.status}: only a pending payout can be started`);
    if (phone.country.toLowerCase() !== PAYOUT_MODE_COUNTRIES[payout.mode])
      throw new ProviderAError(422, "The payout could not be started", { phone_number: [`country ${phone.country} is not served by mode ${payout.mode}`] });
    const since = now.getTime() - PAYOUT_LIMITS.windowHours * 3_600_000;
    const recent = [...payouts.values()].filter(
      (other) =>
        other.accountId === payout.accountId &&
        other.status !== "failed" &&
        other.startedAt !== null &&
        other.startedAt.getTime() > since &&
        digitsOf(other.phone) === digitsOf(phone),
    );
    if (recent.length >= PAYOUT_LIMITS.perNumber)
      throw new ProviderAError(422, "The payout could not be started", {
        phone_number: [`has reached the limit of ${PAYOUT_LIMITS.perNumber} payouts in ${PAYOUT_LIMITS.windowHours} hours`],
      });
  }

  function balanceId(key: string): number {
    let id = balanceIds.get(key);
    if (id === undefined) {
      id = nextBalanceId++;
      balanceIds.set(key, id);
    }
    return id;
  }

  return {
    /** Records a pending payout; a `merchant_reference` already used on the account is refused. */
    create(account: SimAccount, input: CreatePayoutInput): SimPayout {
      const referenceKey = input.merchant_reference ? `${account.id}:${input.merchant_reference}` : null;
      if (referenceKey && references.has(referenceKey))
        throw new ProviderAError(422, "Payout could not be created", { merchant_reference: ["has already been taken"] });
      const now = deps.now();
      const phone = input.customer.phone_number;
      const payout: SimPayout = {
        id: nextPayoutId++,
        accountId: account.id,
        reference: `pyt_${randomBytes(4).toString("hex")}_${now.getTime()}`,
        merchantReference: input.merchant_reference ?? null,
        amount: input.amount,
        currencyIso: input.currency.iso.toUpperCase(),
        mode: input.mode as PayoutMode,
        description: input.description ?? null,
        customMetadata: input.custom_metadata ?? null,
        customer: { firstname: input.customer.firstname ?? null, lastname: input.customer.lastname ?? null, email: input.customer.email ?? null, phone },
        phone,
        status: "pending",
        fees: deps.feeFor(input.amount),
        lastErrorCode: null,
        createdAt: now,
        updatedAt: now,
        scheduledAt: null,
        startedAt: null,
        sentAt: null,
        failedAt: null,
      };
      payouts.set(payout.id, payout);
      if (referenceKey) references.set(referenceKey, payout.id);
      return payout;
    },

    /** A payout as its account sees it; another account's is as absent as a missing one. */
    payoutOf(account: SimAccount, id: number): SimPayout | undefined {
      const payout = payouts.get(id);
      return payout && payout.accountId === account.id ? payout : undefined;
    },

    byMerchantReference(account: SimAccount, reference: string): SimPayout | undefined {
      const id = references.get(`${account.id}:${reference}`);
      return id === undefined ? undefined : payouts.get(id);
    },

    /** Any payout, whoever owns it (the control surface). */
    payout(id: number): SimPayout | undefined {
      return payouts.get(id);
    },

    /** The account's payouts, newest first. */
    listOf(account: SimAccount): SimPayout[] {
      return [...payouts.values()].filter((payout) => payout.accountId === account.id).reverse();
    },

    /** Every payout, newest first. */
    all(): SimPayout[] {
      return [...payouts.values()].reverse();
    },

    /**
     * Starts every payout of the call, or none: each must be the account's, `pending`, to a number of its
     * mode's country, and within the per-number limit.
     */
    start(account: SimAccount, items: StartPayoutsInput["payouts"], scheduledAt: (Date | undefined)[]): SimPayout[] {
      const now = deps.now();
      const chosen = items.map((item) => {
        const payout = this.payoutOf(account, item.id);
        if (!payout) throw new ProviderAError(404, `Payout ${item.id} not found`);
        const phone = item.phone_number ?? payout.customer.phone;
        refuseStart(payout, phone, now);
        return { payout, phone };
      });
      return chosen.map(({ payout, phone }, index) => {
        const at = scheduledAt[index];
        payout.phone = phone;
        payout.status = at && at.getTime() > now.getTime() ? "scheduled" : "started";
        payout.scheduledAt = at ?? now;
        payout.startedAt = now;
        payout.updatedAt = now;
        return payout;
      });
    },

    /** `scheduled` → `started` → `processing`: a step on the way, no webhook. */
    advance(payout: SimPayout, status: "started" | "processing"): void {
      payout.status = status;
      payout.updatedAt = deps.now();
    },

    /** Ends a payout in flight and reports it; refuses any other move. */
    settle(payout: SimPayout, status: FinalPayoutStatus, lastErrorCode: string | null = null): SimPayout {
      if (!IN_FLIGHT.includes(payout.status)) throw new ProviderAError(409, `Payout ${payout.id} is ${payout.status}: it cannot become ${status}`);
      const now = deps.now();
      payout.status = status;
      payout.updatedAt = now;
      if (status === "sent") payout.sentAt = now;
      else {
        payout.failedAt = now;
        payout.lastErrorCode = lastErrorCode;
      }
      deps.onStatusChange({ account: deps.accountOf(payout.accountId), payout, event: FINAL_EVENTS[status] });
      return payout;
    },

    /** Adds `amount` (negative: takes it) to one balance of the account, by hand. */
    credit(account: SimAccount, mode: string, currencyIso: string, amount: number): void {
      const key = `${account.id}:${mode}:${currencyIso.toUpperCase()}`;
      credits.set(key, (credits.get(key) ?? 0) + amount);
    },

    /** The account's balances, one per mode and currency that ever moved. */
    balancesOf(account: SimAccount): SimBalance[] {
      const amounts = new Map<string, number>();
      const add = (mode: string, currency: string, amount: number) => {
        const key = `${account.id}:${mode}:${currency}`;
        amounts.set(key, (amounts.get(key) ?? 0) + amount);
      };
      for (const [key, amount] of credits) if (key.startsWith(`${account.id}:`)) amounts.set(key, (amounts.get(key) ?? 0) + amount);
      for (const trx of deps.transactionsOf(account.id))
        if (trx.mode && (trx.status === "approved" || trx.status === "transferred")) add(trx.mode, trx.currencyIso, trx.amount);
      for (const payout of payouts.values())
        if (payout.accountId === account.id && payout.status === "sent") add(payout.mode, payout.currencyIso, -(payout.amount + payout.fees));
      return [...amounts].map(([key, amount]) => {
        const [, mode, currencyIso] = key.split(":") as [string, string, string];
        return { id: balanceId(key), accountId: account.id, mode, currencyIso, amount };
      });
    },

    /** Everything the payouts' memory holds, as plain data. */
    snapshot(): PayoutLedgerState {
      return { payouts: [...payouts.values()], credits: [...credits], balanceIds: [...balanceIds], next: { payout: nextPayoutId, balance: nextBalanceId } };
    },

    /** Replaces what it holds with a `snapshot()` (at start, before any request). */
    restore(state: PayoutLedgerState): void {
      for (const payout of state.payouts) {
        payouts.set(payout.id, payout);
        if (payout.merchantReference) references.set(`${payout.accountId}:${payout.merchantReference}`, payout.id);
      }
      for (const [key, amount] of state.credits) credits.set(key, amount);
      for (const [key, id] of state.balanceIds) balanceIds.set(key, id);
      nextPayoutId = state.next.payout;
      nextBalanceId = state.next.balance;
    },
  };
}
