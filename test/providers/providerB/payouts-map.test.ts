/**
 * Provider B's money-out words to ours, without a server: where its disburse API is, a disbursement's status
 * as a payout report, its balance answer, and who paid a checkout (where a refund goes).
 */
import { describe, expect, it } from "bun:test";
import type { Payment } from "../../../src/db/schema.ts";
import { providerB } from "../../../src/providers/providerB/provider.ts";
import { disburseBaseUrl } from "../../../src/providers/providerB/disburse.ts";
import { nationalNumberOf, toPayoutReport, toProviderBalances, withdrawModeOf } from "../../../src/providers/providerB/map.ts";

describe("toPayoutReport", () => {
  it("maps created to pending with nothing sent, pending to pending, success to sent, failed to failed", () => {
    expect(toPayoutReport("t", { status: "created" })).toMatchObject({ state: "pending", notSentYet: true, providerStatus: "created" });
    expect(toPayoutReport("t", { status: "pending" })).toMatchObject({ state: "pending", notSentYet: false });
    expect(toPayoutReport("t", { status: "success", updated_at: "2026-11-26 10:15:00", fee: 50 })).toEqual({
      providerPayoutId: "t",
      providerStatus: "success",
      state: "sent",
      notSentYet: false,
      errorCode: null,
      fee: 50,
      sentAt: new Date("2026-11-26T10:15:00Z"),
    });
    expect(toPayoutReport("t", { status: "failed", updated_at: "2026-11-26 10:15:00" })).toMatchObject({ state: "failed", sentAt: null, fee: null });
  });

  it("answers undefined for a status it does not know", () => {
    expect(toPayoutReport("t", { status: "processing" })).toBeUndefined();
  });
});

describe("toProviderBalances", () => {
  it("reads one balance per country and leaves other fields out", () => {
    const answer = { success: true, description: "ok", "Balance SN": "738612.00 XOF", "Balance CI": "0.00 XOF", "Balance CM": "100.00 XAF", note: "x" };
    expect(toProviderBalances(answer)).toEqual([
      { currency: "XOF", amount: 738612, label: "sn" },
      { currency: "XOF", amount: 0, label: "ci" },
    ]);
  });
});

describe("disburseBaseUrl", () => {
  it("puts the one disburse API (v2, no sandbox) beside either environment's v1 API, on the same host and mount path", () => {
    expect(disburseBaseUrl("https://app.paydunya.com/sandbox-api/v1")).toBe("https://app.paydunya.com/api/v2");
    expect(disburseBaseUrl("https://app.paydunya.com/api/v1/")).toBe("https://app.paydunya.com/api/v2");
    expect(disburseBaseUrl("http://localhost:3000/sandbox/providerB/sandbox-api/v1")).toBe("http://localhost:3000/sandbox/providerB/api/v2");
  });
});

describe("withdrawModeOf", () => {
  it("follows the operator × country table", () => {
    expect(withdrawModeOf("orange", "sn")).toBe("orange-money-senegal");
    expect(withdrawModeOf("orange", "ci")).toBe("orange-money-ci");
    expect(withdrawModeOf("togocel", "tg")).toBe("t-money-togo");
    expect(withdrawModeOf("orange", "bf")).toBe("orange-money-burkina");
    expect(withdrawModeOf("moov", "ml")).toBeUndefined();
    expect(withdrawModeOf("mtn", "gn")).toBeUndefined();
  });
});

describe("nationalNumberOf", () => {
  it("drops the country's calling code when the number carries it", () => {
    expect(nationalNumberOf("771234567", "sn")).toBe("771234567");
    expect(nationalNumberOf("+221 77 123 45 67", "sn")).toBe("771234567");
    expect(nationalNumberOf("00221771234567", "sn")).toBe("771234567");
    expect(nationalNumberOf("221771234567", "sn")).toBe("771234567");
    expect(nationalNumberOf("2290161000000", "bj")).toBe("0161000000");
    expect(nationalNumberOf("", "sn")).toBeNull();
  });
});

describe("providerB.payerOf", () => {
  const payment = (customer: Payment["customer"], paymentMethod: string | null) => ({ customer, payment_method: paymentMethod }) as Payment;

  it("answers the confirmed phone and the wallet of the reported channel", () => {
    expect(providerB.payerOf!(payment({ name: "Awa Diop Ndiaye", phone: "+221771234567", email: "awa@example.com" }, "wave_senegal"))).toEqual({
      phone: { number: "771234567", country: "sn" },
      operator: "wave",
      firstname: "Awa",
      lastname: "Diop Ndiaye",
      email: "awa@example.com",
    });
    expect(providerB.payerOf!(payment({ phone: "0701020304" }, "orange-money-ci"))).toEqual({
      phone: { number: "0701020304", country: "ci" },
      operator: "orange",
    });
    expect(providerB.payerOf!(payment({ phone: "771234567" }, "new_orange_money_senegal"))?.operator).toBe("orange");
  });

  it("answers null for a card, an unknown channel, or no phone", () => {
    expect(providerB.payerOf!(payment({ phone: "771234567" }, "card"))).toBeNull();
    expect(providerB.payerOf!(payment({ phone: "771234567" }, null))).toBeNull();
    expect(providerB.payerOf!(payment({ name: "Awa" }, "wave-senegal"))).toBeNull();
    expect(providerB.payerOf!(payment(null, "wave-senegal"))).toBeNull();
  });

  it("declares payouts and refunds", () => {
    expect(providerB.capabilities).toMatchObject({ payout: true, refund: true });
  });
});
