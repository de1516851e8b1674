/**
 * The provider B simulator's memory: merchant accounts (with their balance per country), invoices, permits,
 * the answers of past permit charges by idempotency key, and disbursements. One store per simulator instance — nothing lives at module level.
 */
import { createHash } from "node:crypto";

/** The provider's own word for the environment: the sandbox API is `test`, the live API `live`. */
export type Mode = "test" | "live";

export interface MerchantAccount {
  masterKey: string;
  privateKey: string;
  publicKey: string;
  token: string;
  /** What every confirm answer and IPN carries as `hash`: lower-case hex SHA-512 of the master key. */
  hash: string;
  /** Whole XOF per country (`SN`, `CI`…): one account per country, as at provider B (`disburse/balances.ts`). */
  balances: Record<string, number>;
}

export interface Customer {
  name: string | null;
  phone: string | null;
  email: string | null;
}

export interface InvoiceActions {
  cancel_url: string | null;
  return_url: string | null;
  callback_url: string | null;
}

export type InvoiceStatus = "pending" | "completed" | "cancelled" | "failed";

export interface Invoice {
  token: string;
  mode: Mode;
  account: MerchantAccount;
  /** Where the simulator was reachable when the invoice was made; its page and receipt URLs start here. */
  baseUrl: string;
  totalAmount: number;
  description: string;
  items: Record<string, unknown>;
  taxes: Record<string, unknown>;
  storeName: string;
  customData: Record<string, unknown>;
  actions: InvoiceActions;
  customer: Customer;
  status: InvoiceStatus;
  failReason: string | null;
  paymentMethod: string | null;
  receiptIdentifier: string | null;
  providerReference: string | null;
  createdAt: Date;
  /** Set when the invoice is a permit charge. */
  permitToken: string | null;
}

export type PermitStatus = "pending" | "active" | "declined" | "revoked" | "expired";

/** How the permit's next charges end (the `fail-next` / `succeed-next` switch, and `pending-next`). */
export type ChargeSwitch = "by-amount" | "fail" | "pending";

export interface Permit {
  token: string;
  mode: Mode;
  account: MerchantAccount;
  baseUrl: string;
  description: string;
  maxAmount: number | null;
  customer: Customer;
  customData: Record<string, unknown>;
  actions: InvoiceActions;
  status: PermitStatus;
  paymentMethod: string | null;
  chargeSwitch: ChargeSwitch;
  createdAt: Date;
  authorizedAt: Date | null;
}

/** A permit charge's answer, kept so that the same idempotency key answers it again. */
export interface ChargeAnswer {
  response_code: string;
  response_text: string;
  invoice_token: string;
  permit_token: string;
  amount: number;
  status: "completed" | "failed" | "pending";
  fail_reason: string | null;
}

/** A disbursement's statuses (disburse v2): `created` by get-invoice, `pending` once submitted, then final. */
export type DisbursementStatus = "created" | "pending" | "success" | "failed";

export interface Disbursement {
  token: string;
  account: MerchantAccount;
  /** The merchant's id of it; provider B refuses a second submit under the same one (`5000`). */
  disburseId: string | null;
  accountAlias: string;
  amount: number;
  withdrawMode: string;
  /** The balance it is paid from (`SN`…), by its withdraw mode. */
  country: string;
  callbackUrl: string;
  status: DisbursementStatus;
  /** How many submits acted on it (one, or none). */
  submits: number;
  transactionId: string | null;
  disburseTxId: string | null;
  /** Waits for the console's Send or Fail (the sandbox rule of 1000 to 5000). */
  awaitingConsole: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A SoftPay call made on an invoice (a direct payment): how the customer completes it. */
export interface SoftpayPayment {
  /** The invoice's token. */
  token: string;
  slug: string;
  flow: "push" | "otp" | "redirect";
  /** The phone the call named. */
  phone: string;
  /** Waits for the console's Approve or Fail (the sandbox rule of 1000 to 5000). */
  awaitingConsole: boolean;
  createdAt: Date;
}

/**
 * What the next SoftPay call does, set by `POST /_sim/softpay/next`: refuse before any push
 * (`success: false`), drop the connection before answering (the client sees no answer and nothing
 * happened), or act and answer only after `delayMs` (a timeout after the push).
 */
export type SoftpayFault = { answer: "refuse" } | { answer: "unreachable" } | { answer: "timeout_after"; delayMs: number };

/** What the next submit does after acting, set by `POST /_sim/disburse/next-submit` (a lost answer). */
export type SubmitFault = { answer: "server_error" } | { answer: "timeout"; delayMs: number };

export interface SimulatorStore {
  accounts: Map<string, MerchantAccount>;
  invoices: Map<string, Invoice>;
  permits: Map<string, Permit>;
  /** Keyed by `masterKey mode idempotencyKey`. */
  charges: Map<string, ChargeAnswer>;
  /** Keyed by token. */
  disbursements: Map<string, Disbursement>;
  /** Consumed by the next submit-invoice. */
  submitFault: SubmitFault | null;
  /** SoftPay calls by invoice token. */
  softpays: Map<string, SoftpayPayment>;
  /** Consumed by the next SoftPay call. */
  softpayFault: SoftpayFault | null;
}

/** An empty store. */
export function createSimulatorStore(): SimulatorStore {
  return {
    accounts: new Map(),
    invoices: new Map(),
    permits: new Map(),
    charges: new Map(),
    disbursements: new Map(),
    submitFault: null,
    softpays: new Map(),
    softpayFault: null,
  };
}

/** What a new account holds in each country: a sandbox float, so payouts can be tried before any payment. */
export const OPENING_BALANCE = 1_000_000;

/** The countries of provider B's accounts (`Balance SN`…). */
export const BALANCE_COUNTRIES = ["SN", "CI", "BJ", "TG", "ML", "BF"] as const;

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A random string of letters and digits, e.g. `randomToken(20)` → `"LRWkyGfcnXSTvRAjUYN7"`. */
export function randomToken(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const byte of bytes) out += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return out;
}

/** The lower-case hex SHA-512 the provider puts in `hash`, e.g. `ipnHashOf(account.masterKey)`. */
export function ipnHashOf(masterKey: string): string {
  return createHash("sha512").update(masterKey).digest("hex");
}

/** A new merchant account with keys shaped like the provider's (master key in 8-4-4-4-12 groups). */
export function createMerchantAccount(store: SimulatorStore): MerchantAccount {
  const masterKey = [8, 4, 4, 4, 12].map((length) => randomToken(length)).join("-");
  const account: MerchantAccount = {
    masterKey,
    privateKey: `test_private_${randomToken(27)}`,
    publicKey: `test_public_${randomToken(27)}`,
    token: randomToken(20),
    hash: ipnHashOf(masterKey),
    balances: Object.fromEntries(BALANCE_COUNTRIES.map((country) => [country, OPENING_BALANCE])),
  };
  store.accounts.set(masterKey, account);
  return account;
}

/** A record that names its account, with the account replaced by its master key (for the state file). */
type ByMasterKey<T extends { account: MerchantAccount }> = Omit<T, "account"> & { account: string };

/** What a store keeps between runs (`snapshotStore` / `restoreStore`); the one-shot faults are not kept. */
export interface StoreState {
  accounts: MerchantAccount[];
  invoices: ByMasterKey<Invoice>[];
  permits: ByMasterKey<Permit>[];
  charges: [string, ChargeAnswer][];
  disbursements: ByMasterKey<Disbursement>[];
  softpays: SoftpayPayment[];
}

const byMasterKey = <T extends { account: MerchantAccount }>(record: T): ByMasterKey<T> => ({ ...record, account: record.account.masterKey });

/** Everything `store` holds, as plain data. */
export function snapshotStore(store: SimulatorStore): StoreState {
  return {
    accounts: [...store.accounts.values()],
    invoices: [...store.invoices.values()].map(byMasterKey),
    permits: [...store.permits.values()].map(byMasterKey),
    charges: [...store.charges],
    disbursements: [...store.disbursements.values()].map(byMasterKey),
    softpays: [...store.softpays.values()],
  };
}

/** Fills an empty `store` with a {@link snapshotStore}; records whose account is unknown are left out. */
export function restoreStore(store: SimulatorStore, state: StoreState): void {
  for (const account of state.accounts) store.accounts.set(account.masterKey, account);
  const withAccount = <T extends { account: MerchantAccount }>(record: ByMasterKey<T>): T | undefined => {
    const account = store.accounts.get(record.account);
    return account ? ({ ...record, account } as unknown as T) : undefined;
  };
  for (const saved of state.invoices) {
    const invoice = withAccount<Invoice>(saved);
    if (invoice) store.invoices.set(invoice.token, invoice);
  }
  for (const saved of state.permits) {
    const permit = withAccount<Permit>(saved);
    if (permit) store.permits.set(permit.token, permit);
  }
  for (const [key, answer] of state.charges) store.charges.set(key, answer);
  for (const saved of state.disbursements) {
    const disbursement = withAccount<Disbursement>(saved);
    if (disbursement) store.disbursements.set(disbursement.token, disbursement);
  }
  for (const softpay of state.softpays) store.softpays.set(softpay.token, softpay);
}
