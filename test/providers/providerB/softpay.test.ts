/**
 * Provider B's direct payments (SoftPay) against the standalone simulator over real HTTP, at the port's
 * level (`startSoftpay` with a tenant's clients, no database): every operator's body is one the simulator
 * takes, the code operators take the sandbox code and refuse another with the provider's message, Wave
 * answers its URL, the sandbox falls back to `make-payment` when the slug answers 404, and the simulator's
 * fault switch gives a refusal, a dropped connection and a timeout after the push.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { CollectionStarted, UssdPushRequest } from "../../../src/providers/provider.ts";
import { CollectionError } from "../../../src/providers/provider.ts";
import type { ProviderBAccount } from "../../../src/providers/providerB/accounts.ts";
import { providerBClient } from "../../../src/providers/providerB/client.ts";
import { providerB } from "../../../src/providers/providerB/provider.ts";
import { PROVIDER_B_METHODS, SOFTPAY_OPERATORS } from "../../../src/providers/providerB/softpay-methods.ts";
import { providerBSoftpayClient, startSoftpay } from "../../../src/providers/providerB/softpay.ts";
import { createProviderBSimulator } from "../../../src/providers/providerB/simulator/mod.ts";
import { SANDBOX_OTP } from "../../../src/providers/providerB/simulator/softpay.ts";
import { waitUntil } from "../../support/wait.ts";

let server: ReturnType<typeof Bun.serve>;
let simulator: ReturnType<typeof createProviderBSimulator>;
let url: string;
let keys: { masterKey: string; privateKey: string; publicKey: string; token: string };
/** The simulator's IPNs land nowhere (a closed port): these tests read the invoice by confirm. */
const CALLBACK = "http://127.0.0.1:9/providerB/webhook";

beforeAll(async () => {
  simulator = createProviderBSimulator({ approveDelayMs: 100, ipnRetryDelaysMs: [] });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => simulator.fetch(request) });
  url = server.url.toString().replace(/\/$/, "");
  keys = (await (await fetch(`${url}/_sim/accounts`, { method: "POST" })).json()) as typeof keys;
});

afterAll(async () => {
  simulator.close();
  await server.stop(true);
});

/** The tenant's clients on one mode's base URL (`baseUrl` overrides it). */
function account(mode: "sandbox" | "live", baseUrl?: string, timeoutMs = 3_000): ProviderBAccount {
  const options = { baseUrl: baseUrl ?? `${url}/${mode === "sandbox" ? "sandbox-api" : "api"}/v1`, timeoutMs, keys };
  return { credentialsId: "cred", version: 1, invoices: providerBClient(options), softpay: providerBSoftpayClient(options) } as ProviderBAccount;
}

function pushRequest(
  over: Partial<UssdPushRequest> & { method: string; phone: UssdPushRequest["phone"] },
  recorded: CollectionStarted[] = [],
): UssdPushRequest {
  return {
    kind: "ussd_push",
    paymentId: `pay_${crypto.randomUUID()}`,
    tenantId: "ten_1",
    environment: "sandbox",
    account: { accountId: "cred", credentialVersion: 1 },
    amount: 500,
    currency: "XOF",
    description: "Commande 42",
    customer: { firstname: "Awa", lastname: "Diop", email: "awa@example.com" },
    recorded: async (started) => void recorded.push(started),
    ...over,
  };
}

const context = { storeName: "Boutique Dakar", callbackUrl: CALLBACK, paymentIdKey: "passerelle_payment_id" };

async function statusOf(token: string, mode: "sandbox" | "live" = "sandbox"): Promise<string> {
  return (await account(mode).invoices.confirmCheckoutInvoice(token)).status;
}

async function softpayList(): Promise<{ token: string; slug: string; awaiting_console: boolean; status: string }[]> {
  return ((await (await fetch(`${url}/_sim/softpay`)).json()) as { payments: never[] }).payments;
}

const PHONES: Record<string, string> = {
  sn: "+221771234567",
  ci: "+2250701020304",
  bj: "+2290197000000",
  tg: "+22890112233",
  ml: "+22376543210",
  bf: "+22670123456",
};

describe("provider B's direct methods", () => {
  it("lists every operator × country of SoftPay with its flow, as ussd_push in XOF", () => {
    expect(providerB.capabilities.collect).toContain("ussd_push");
    expect(providerB.capabilities.methods).toBe(PROVIDER_B_METHODS);
    const byKey = Object.fromEntries(PROVIDER_B_METHODS.map((m) => [`${m.operator} ${m.country}`, m]));
    expect(Object.keys(byKey).sort()).toEqual(
      [
        "mtn bj",
        "moov bj",
        "togocel tg",
        "moov tg",
        "mtn ci",
        "orange ci",
        "moov ci",
        "wave ci",
        "free sn",
        "orange sn",
        "wave sn",
        "expresso sn",
        "orange ml",
        "moov ml",
        "orange bf",
        "moov bf",
      ].sort(),
    );
    expect(byKey["wave sn"]).toMatchObject({ method: "wave-senegal", flow: "redirect", collection: "ussd_push", currency: "XOF" });
    expect(byKey["orange sn"]).toMatchObject({ method: "new-orange-money-senegal", flow: "redirect" });
    expect(byKey["orange ci"]?.flow).toBe("otp");
    expect(byKey["orange ci"]?.otpHint).toContain("#144*82#");
    expect(byKey["orange bf"]?.flow).toBe("otp");
    expect(byKey["mtn bj"]?.flow).toBe("push");
  });
});

describe("startSoftpay against the simulator", () => {
  it("records the invoice before the push, and every operator's body is taken by the simulator (live paths)", async () => {
    for (const operator of SOFTPAY_OPERATORS) {
      const recorded: CollectionStarted[] = [];
      const request = pushRequest(
        {
          method: operator.slug,
          environment: "live",
          phone: { number: PHONES[operator.country]!, country: operator.country },
          ...(operator.flow === "otp" ? { otp: SANDBOX_OTP } : {}),
        },
        recorded,
      );
      const started = await startSoftpay(account("live"), context, request);
      expect(recorded, operator.slug).toEqual([{ providerPaymentId: started.providerPaymentId, reference: null, providerStatus: "pending" }]);
      if (operator.flow === "redirect") expect(started.redirectUrl, operator.slug).toStartWith(`${url}/softpay/pay/`);
      else expect(started.redirectUrl, operator.slug).toBeUndefined();
    }
    const slugs = (await softpayList()).map((payment) => payment.slug);
    for (const operator of SOFTPAY_OPERATORS) expect(slugs).toContain(operator.slug);
  });

  it("completes a push below 1000 after the delay, keeps 1000 to 5000 for the console, fails above 5000", async () => {
    const phone = { number: PHONES.bj!, country: "bj" };
    const small = await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone, amount: 500 }));
    const console_ = await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone, amount: 2500 }));
    const large = await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone, amount: 7000 }));
    await waitUntil(async () => (await statusOf(small.providerPaymentId)) === "completed", { what: "the small payment to complete" });
    await waitUntil(async () => (await statusOf(large.providerPaymentId)) === "failed", { what: "the large payment to fail" });
    expect(await statusOf(console_.providerPaymentId)).toBe("pending");
    expect((await softpayList()).find((p) => p.token === console_.providerPaymentId)?.awaiting_console).toBe(true);
    const page = await (await fetch(`${url}/console`)).text();
    expect(page).toContain(console_.providerPaymentId);
    expect(page).toContain("Payments waiting for you");
    const approved = await fetch(`${url}/_sim/softpay/${console_.providerPaymentId}/approve`, { method: "POST" });
    expect(approved.status).toBe(200);
    expect(await statusOf(console_.providerPaymentId)).toBe("completed");
  });

  it("takes the Orange Money CI code 123456 and refuses another with the provider's message, the invoice started", async () => {
    const phone = { number: PHONES.ci!, country: "ci" };
    const paid = await startSoftpay(account("sandbox"), context, pushRequest({ method: "orange-money-ci", phone, otp: SANDBOX_OTP }));
    await waitUntil(async () => (await statusOf(paid.providerPaymentId)) === "completed", { what: "the coded payment to complete" });
    const recorded: CollectionStarted[] = [];
    const wrong = await startSoftpay(account("sandbox"), context, pushRequest({ method: "orange-money-ci", phone, otp: "999999" }, recorded)).catch((e) => e);
    expect(wrong).toBeInstanceOf(CollectionError);
    expect(wrong.step).toBe("softpay");
    expect(wrong.mayHaveActed).toBe(false);
    expect(wrong.failure.kind).toBe("refused");
    expect(wrong.failure.status).toBe(422);
    expect(wrong.message).toBe("Invalid or expired OTP code!");
    expect(wrong.started?.providerPaymentId).toBe(recorded[0]?.providerPaymentId);
    // Without a code nothing is called.
    const none = await startSoftpay(account("sandbox"), context, pushRequest({ method: "orange-money-ci", phone })).catch((e) => e);
    expect(none).toBeInstanceOf(CollectionError);
    expect(none.started).toBeUndefined();
  });

  it("sends Orange Money Senegal's code variant when a code is given, its QR URL otherwise", async () => {
    const phone = { number: PHONES.sn!, country: "sn" };
    const coded = await startSoftpay(account("sandbox"), context, pushRequest({ method: "new-orange-money-senegal", phone, otp: SANDBOX_OTP }));
    expect(coded.redirectUrl).toBeUndefined();
    const qr = await startSoftpay(account("sandbox"), context, pushRequest({ method: "new-orange-money-senegal", phone }));
    expect(qr.redirectUrl).toStartWith(`${url}/softpay/pay/`);
  });

  it("answers Wave's URL; the customer pays on the simulator's page", async () => {
    const started = await startSoftpay(
      account("sandbox"),
      context,
      pushRequest({ method: "wave-senegal", phone: { number: PHONES.sn!, country: "sn" }, amount: 3000 }),
    );
    const page = await fetch(started.redirectUrl!);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("3 000 FCFA");
    expect(html).toContain(">Pay</button>");
    expect(html).not.toMatch(/<(script|link)\b/);
    const action = /formaction="([^"]+\/pay)"/.exec(html)![1]!;
    const pressed = await fetch(new URL(action, started.redirectUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "payment_method=wave-senegal",
    });
    expect(pressed.status).toBe(200);
    expect(await statusOf(started.providerPaymentId)).toBe("completed");
  });

  it("falls back to the sandbox's make-payment when softpay/{slug} answers 404", async () => {
    // A base URL whose softpay/{slug} is not found, as on the real sandbox: the simulator's make-payment answers.
    const around = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        const path = new URL(request.url).pathname;
        if (/\/softpay\/(?!checkout\/make-payment)/.test(path)) return new Response("Not Found", { status: 404 });
        const headers = Object.fromEntries([...request.headers].filter(([name]) => name.startsWith("paydunya-") || name === "content-type"));
        const body = request.method === "GET" ? undefined : await request.text();
        return fetch(`${url}${path}`, { method: request.method, headers, body });
      },
    });
    try {
      const base = `${around.url.toString().replace(/\/$/, "")}/sandbox-api/v1`;
      const started = await startSoftpay(
        account("sandbox", base),
        context,
        pushRequest({ method: "mtn-benin", phone: { number: PHONES.bj!, country: "bj" }, otp: "sandbox-password" }),
      );
      await waitUntil(async () => (await statusOf(started.providerPaymentId)) === "completed", { what: "the make-payment payment to complete" });
      expect((await softpayList()).find((p) => p.token === started.providerPaymentId)?.slug).toBe("checkout");
    } finally {
      await around.stop(true);
    }
  });

  it("follows the fault switch: a refusal and a dropped connection before any push, a timeout after it", async () => {
    const phone = { number: PHONES.bj!, country: "bj" };
    const next = (body: unknown) => fetch(`${url}/_sim/softpay/next`, { method: "POST", body: JSON.stringify(body) });
    expect((await next({ answer: "nonsense" })).status).toBe(400);

    expect((await next({ answer: "refuse" })).status).toBe(200);
    const refused = await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone })).catch((e) => e);
    expect(refused).toMatchObject({ step: "softpay", mayHaveActed: false });
    expect(refused.failure.kind).toBe("refused");
    expect(await statusOf(refused.started.providerPaymentId)).toBe("pending");

    await next({ answer: "unreachable" });
    const dropped = await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone })).catch((e) => e);
    expect(dropped).toMatchObject({ step: "softpay", mayHaveActed: false });
    expect(dropped.failure.kind).toBe("unreachable");

    await next({ answer: "timeout_after", delayMs: 1_500 });
    const late = await startSoftpay(account("sandbox", undefined, 500), context, pushRequest({ method: "mtn-benin", phone, amount: 500 })).catch((e) => e);
    expect(late).toMatchObject({ step: "softpay", mayHaveActed: true });
    expect(late.failure.kind).toBe("timeout");
    // The push went out: the payment completes at the provider all the same.
    await waitUntil(async () => (await statusOf(late.started.providerPaymentId)) === "completed", { what: "the timed-out payment to complete" });
    // The next call is normal again.
    await startSoftpay(account("sandbox"), context, pushRequest({ method: "mtn-benin", phone }));
  });
});
