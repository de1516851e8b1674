/**
 * The simulator's memory: test merchant accounts and their transactions, with the only state changes the
 * provider allows (pending → approved / declined / canceled, approved → refunded). No HTTP and no timers
 * here; every status change is reported to `onStatusChange`, which sends the webhook.
 */
import { randomBytes } from "node:crypto";
import { ProviderAError, type CreateTransactionInput, type TransactionStatus, type WireMode, type WirePhoneNumber } from "./wire.ts";

export interface SimAccount {
  id: number;
  environment: "sandbox" | "live";
  secretKey: string;
  webhookSecret: string;
  webhookUrl: string | null;
}

export interface SimTransaction {
  id: number;
  accountId: number;
  reference: string;
  transactionKey: string;
  merchantReference: string | null;
  amount: number;
  description: string;
  currencyIso: string;
  callbackUrl: string | null;
  mode: WireMode | null;
  customMetadata: Record<string, unknown> | null;
  customerId: number | null;
  customer: { firstname: string | null; lastname: string | null; email: string | null; phone: WirePhoneNumber | null } | null;
  status: TransactionStatus;
  lastErrorCode: string | null;
  createdAt: Date;
  updatedAt: Date;
  approvedAt: Date | null;
  declinedAt: Date | null;
  canceledAt: Date | null;
  refundedAt: Date | null;
  /** When part of it was refunded on the dashboard (`approved_partially_refunded_at`). */
  partiallyRefundedAt: Date | null;
  /** Set by `POST /v1/transactions/{id}/token`; one per transaction, handed out again on each call. */
  token: string | null;
  /** The USSD push, once `POST /v1/{mode}` sent it (a second call answers the same and pushes nothing). */
  push: { mode: WireMode; phone: WirePhoneNumber; sentAt: Date } | null;
}

/** The status changes the provider knows, with the webhook event each one sends. */
const TRANSITIONS = {
  approved: { from: ["pending"], event: "transaction.approved", stamp: "approvedAt" },
  declined: { from: ["pending"], event: "transaction.declined", stamp: "declinedAt" },
  canceled: { from: ["pending"], event: "transaction.canceled", stamp: "canceledAt" },
  refunded: { from: ["approved", "approved_partially_refunded"], event: "transaction.refunded", stamp: "refundedAt" },
  // A refund of part of it on the dashboard: the provider reports no amount, only the status (and `transaction.updated`).
  approved_partially_refunded: { from: ["approved"], event: "transaction.updated", stamp: "partiallyRefundedAt" },
} as const satisfies Record<string, { from: TransactionStatus[]; event: string; stamp: keyof SimTransaction }>;

export type SettledStatus = keyof typeof TRANSITIONS;

export interface LedgerDeps {
  now: () => Date;
  onStatusChange: (change: { account: SimAccount; trx: SimTransaction; event: string }) => void;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomToken(length: number, alphabet = ALPHABET): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

/** Stable text of a JSON value (object keys sorted), to tell a repeated request from a different one. */
function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, inner) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}

export type Ledger = ReturnType<typeof createLedger>;

/** What a ledger keeps between runs (`snapshot()` / `restore()`): its accounts, transactions and counters. */
export interface LedgerState {
  accounts: SimAccount[];
  transactions: SimTransaction[];
  /** `[accountId, Idempotency-Key, fingerprint, transactionId]`. */
  idempotency: [number, string, string, number][];
  /** `[accountId:email, customerId]`. */
  customers: [string, number][];
  next: { account: number; transaction: number; customer: number };
}

/** A fresh, empty simulator memory. */
export function createLedger(deps: LedgerDeps) {
  const accountsByKey = new Map<string, SimAccount>();
  const accountsById = new Map<number, SimAccount>();
  const transactions = new Map<number, SimTransaction>();
  const byToken = new Map<string, SimTransaction>();
  /** Per account: `Idempotency-Key` → the request it first came with and the transaction it made. */
  const idempotency = new Map<number, Map<string, { fingerprint: string; transactionId: number }>>();
  const merchantReferences = new Map<number, Map<string, number>>();
  const customers = new Map<string, number>();
  let nextAccountId = 1;
  let nextTransactionId = 1;
  let nextCustomerId = 1;
  /** Set by `repeatTransactionId`: the id the next transaction gets instead of a new one. */
  let forcedTransactionId: number | undefined;

  function customerIdFor(accountId: number, email: string | null | undefined): number {
    // The provider identifies a customer by email within an account; one without email is a new customer.
    if (!email) return nextCustomerId++;
    const key = `${accountId}:${email.toLowerCase()}`;
    let id = customers.get(key);
    if (id === undefined) {
      id = nextCustomerId++;
      customers.set(key, id);
    }
    return id;
  }

  return {
    /** A new account; with `keys`, one with exactly those keys (a test account whose keys were chosen beforehand). */
    createAccount(environment: "sandbox" | "live", keys?: { secretKey: string; webhookSecret: string }): SimAccount {
      const account: SimAccount = {
        id: nextAccountId++,
        environment,
        secretKey: keys?.secretKey ?? `sk_${environment}_${randomToken(32)}`,
        webhookSecret: keys?.webhookSecret ?? `wh_${environment}_${randomToken(32)}`,
        webhookUrl: null,
      };
      accountsByKey.set(account.secretKey, account);
      accountsById.set(account.id, account);
      return account;
    },

    accountByKey(secretKey: string): SimAccount | undefined {
      return accountsByKey.get(secretKey);
    },

    accountOf(trx: SimTransaction): SimAccount {
      return accountsById.get(trx.accountId)!;
    },

    /**
     * Creates a pending transaction, or — when `idempotencyKey` was seen before on this account with the
     * same body — returns the one that key made. The same key with another body is refused.
     */
    createTransaction(account: SimAccount, input: CreateTransactionInput, idempotencyKey: string | null): SimTransaction {
      const keyed = idempotency.get(account.id) ?? new Map();
      idempotency.set(account.id, keyed);
      const print = fingerprint(input);
      if (idempotencyKey) {
        const seen = keyed.get(idempotencyKey);
        if (seen && seen.fingerprint !== print)
          throw new ProviderAError(409, "This Idempotency-Key was already used with different parameters", {
            "Idempotency-Key": ["was already used with different parameters"],
          });
        if (seen) return transactions.get(seen.transactionId)!;
      }
      const references = merchantReferences.get(account.id) ?? new Map<string, number>();
      merchantReferences.set(account.id, references);
      if (input.merchant_reference && references.has(input.merchant_reference))
        throw new ProviderAError(422, "Transaction could not be created", { merchant_reference: ["has already been taken"] });

      const now = deps.now();
      const customer = input.customer ?? null;
      const trx: SimTransaction = {
        id: forcedTransactionId ?? nextTransactionId++,
        accountId: account.id,
        reference: `trx_${randomToken(6)}_${now.getTime()}`,
        transactionKey: randomToken(7, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
        merchantReference: input.merchant_reference ?? null,
        amount: input.amount,
        description: input.description,
        currencyIso: input.currency.iso.toUpperCase(),
        callbackUrl: input.callback_url ?? null,
        mode: input.mode ?? null,
        customMetadata: input.custom_metadata ?? null,
        customerId: customer ? customerIdFor(account.id, customer.email) : null,
        customer: customer
          ? {
              firstname: customer.firstname ?? null,
              lastname: customer.lastname ?? null,
              email: customer.email ?? null,
              phone: customer.phone_number ?? null,
            }
          : null,
        status: "pending",
        lastErrorCode: null,
        createdAt: now,
        updatedAt: now,
        approvedAt: null,
        declinedAt: null,
        canceledAt: null,
        refundedAt: null,
        partiallyRefundedAt: null,
        token: null,
        push: null,
      };
      forcedTransactionId = undefined;
      transactions.set(trx.id, trx);
      if (idempotencyKey) keyed.set(idempotencyKey, { fingerprint: print, transactionId: trx.id });
      if (trx.merchantReference) references.set(trx.merchantReference, trx.id);
      return trx;
    },

    /** Any transaction, whoever owns it (the control surface). */
    transaction(id: number): SimTransaction | undefined {
      return transactions.get(id);
    },

    /** A transaction as its account sees it; another account's is as absent as a missing one. */
    transactionOf(account: SimAccount, id: number): SimTransaction | undefined {
      const trx = transactions.get(id);
      return trx && trx.accountId === account.id ? trx : undefined;
    },

    transactionByMerchantReference(account: SimAccount, reference: string): SimTransaction | undefined {
      const id = merchantReferences.get(account.id)?.get(reference);
      return id === undefined ? undefined : transactions.get(id);
    },

    /** The payment token of a transaction (the same one on every call). */
    tokenFor(trx: SimTransaction): string {
      if (!trx.token) {
        trx.token = randomToken(48);
        byToken.set(trx.token, trx);
      }
      return trx.token;
    },

    transactionByToken(account: SimAccount, token: string): SimTransaction | undefined {
      const trx = byToken.get(token);
      return trx && trx.accountId === account.id ? trx : undefined;
    },

    recordPush(trx: SimTransaction, mode: WireMode, phone: WirePhoneNumber): void {
      const now = deps.now();
      trx.push = { mode, phone, sentAt: now };
      trx.mode = mode;
      trx.updatedAt = now;
    },

    /** Moves a transaction to a settled status and reports it; refuses a move the provider does not make. */
    settle(trx: SimTransaction, status: SettledStatus, lastErrorCode: string | null = null): SimTransaction {
      const transition = TRANSITIONS[status];
      if (!(transition.from as readonly TransactionStatus[]).includes(trx.status))
        throw new ProviderAError(409, `Transaction ${trx.id} is ${trx.status}: it cannot become ${status}`);
      const now = deps.now();
      trx.status = status;
      trx.updatedAt = now;
      trx[transition.stamp] = now;
      if (status === "declined") trx.lastErrorCode = lastErrorCode;
      deps.onStatusChange({ account: accountsById.get(trx.accountId)!, trx, event: transition.event });
      return trx;
    },

    /** Every transaction of one account, oldest first. */
    transactionsOf(accountId: number): SimTransaction[] {
      return [...transactions.values()].filter((trx) => trx.accountId === accountId);
    },

    accountById(id: number): SimAccount | undefined {
      return accountsById.get(id);
    },

    /** Every transaction still pending, oldest first. */
    pending(): SimTransaction[] {
      return [...transactions.values()].filter((trx) => trx.status === "pending");
    },

    /** The most recently changed settled transactions, newest first. */
    recentlySettled(limit: number): SimTransaction[] {
      const settled: SimTransaction[] = [];
      for (const trx of transactions.values()) if (trx.status !== "pending") settled.push(trx);
      return settled.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || b.id - a.id).slice(0, limit);
    },

    /**
     * A fault for tests: the next transaction gets `id` again, as a provider that forgot its transactions
     * would hand it out; the simulator's own memory then knows only the new one by that id.
     */
    repeatTransactionId(id: number): void {
      forcedTransactionId = id;
    },

    /** Everything the ledger holds, as plain data. */
    snapshot(): LedgerState {
      const keyed: LedgerState["idempotency"] = [];
      for (const [accountId, keys] of idempotency) for (const [key, seen] of keys) keyed.push([accountId, key, seen.fingerprint, seen.transactionId]);
      return {
        accounts: [...accountsById.values()],
        transactions: [...transactions.values()],
        idempotency: keyed,
        customers: [...customers],
        next: { account: nextAccountId, transaction: nextTransactionId, customer: nextCustomerId },
      };
    },

    /** Replaces what the ledger holds with a `snapshot()` (at start, before any request). */
    restore(state: LedgerState): void {
      for (const account of state.accounts) {
        accountsByKey.set(account.secretKey, account);
        accountsById.set(account.id, account);
      }
      for (const trx of state.transactions) {
        transactions.set(trx.id, trx);
        if (trx.token) byToken.set(trx.token, trx);
        if (trx.merchantReference) {
          const references = merchantReferences.get(trx.accountId) ?? new Map<string, number>();
          merchantReferences.set(trx.accountId, references);
          references.set(trx.merchantReference, trx.id);
        }
      }
      for (const [accountId, key, print, transactionId] of state.idempotency) {
        const keys = idempotency.get(accountId) ?? new Map();
        idempotency.set(accountId, keys);
        keys.set(key, { fingerprint: print, transactionId });
      }
      for (const [key, id] of state.customers) customers.set(key, id);
      nextAccountId = state.next.account;
      nextTransactionId = state.next.transaction;
      nextCustomerId = state.next.customer;
    },
  };
}
