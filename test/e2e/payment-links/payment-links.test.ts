/**
 * `/payment-links` and the pay page's public calls (issue 31 points 1 and 2), against provider A's simulator
 * over real HTTP: a link's URL, QR code and share texts; its payments made through the public calls as the
 * tenant's own payments (`POST /payments`'s service), `payment_link.paid` with each that succeeds; a reusable
 * link paid three times; an expired, a deactivated and a used single-use link refused; tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { TestGateway } from "../../support/gateway.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { freePort } from "../../support/ports.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { waitUntil } from "../../support/wait.ts";

let rig: ProviderARig;
let tg: TestGateway;
let base: string;
let tenantA: string;
let tenantB: string;
let tokenA: string;
let tokenB: string;

type Body = Record<string, any>;

async function call(method: string, path: string, options: { token?: string; json?: unknown } = {}): Promise<{ status: number; body: Body; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${base}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  return { status: response.status, body: (await response.json()) as Body, headers: response.headers };
}

/** A 400's messages, as one string. */
const messagesOf = (body: Body): string => [body.message].flat().join("; ");

const mtnBenin = { operator: "mtn", phone: { number: "+22997000000", country: "bj" } };

/** Pays `linkId` from an MTN Benin phone and waits until the payment succeeded. */
async function payAndSettle(linkId: string, extra: Body = {}): Promise<string> {
  const paid = await call("POST", `/pay/${linkId}/payments`, { json: { ...mtnBenin, ...extra } });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  await waitUntil(async () => (await call("GET", `/payments/${paid.body.id}`, { token: tokenA })).body.state === "succeeded", {
    timeoutMs: 10_000,
    what: "the link's payment to succeed",
  });
  return paid.body.id as string;
}

beforeAll(async () => {
  // A public base URL at the gateway's own port, as `bun run start` has; a pay page budget a test can use up.
  const port = await freePort();
  rig = await startProviderARig({
    approveDelayMs: 100,
    env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, PAY_PAGE_RATE_LIMIT_RPS: "1", PAY_PAGE_RATE_LIMIT_BURST: "40" },
  });
  ({ tg, base } = rig);
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant({ liveEnabled: true });
  tokenA = await tg.tenantToken(tenantA);
  tokenB = await tg.tenantToken(tenantB);
});

afterAll(async () => {
  await rig?.close();
});

describe("POST /payment-links", () => {
  it("answers the link's URL, a QR code of it (SVG and PNG) and the SMS and WhatsApp texts in French and English", async () => {
    const created = await call("POST", "/payment-links", {
      token: tokenA,
      json: { amount: 2500, description: "Commande 42", countries: ["bj"], merchantReference: "order-42", returnUrl: "https://shop.example/merci" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const link = created.body;
    expect(link.id).toMatch(/^pl_[0-9A-Z]{16}$/);
    expect(link).toMatchObject({ url: `${base}/pay/${link.id}`, status: "active", amount: 2500, currency: "XOF", reusable: false, paidCount: 0, payments: [] });
    expect(link.qr.svg).toStartWith("<svg");
    expect(link.qr.png).toStartWith("data:image/png;base64,");
    const png = Buffer.from(link.qr.png.slice("data:image/png;base64,".length), "base64");
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join("")).toBe("PNG");
    expect(link.share.sms.fr).toContain("Commande 42, 2 500 FCFA. Payez depuis votre téléphone");
    expect(link.share.sms.fr).toContain(link.url);
    expect(link.share.sms.en).toContain("Commande 42, 2,500 FCFA. Pay from your phone");
    expect(link.share.whatsapp.fr.url).toBe(`https://wa.me/?text=${encodeURIComponent(link.share.whatsapp.fr.text)}`);
    expect(decodeURIComponent(link.share.whatsapp.en.url.split("text=")[1])).toContain(link.url);
  });

  it("refuses bounds out of order or no amount, a currency its countries do not pay in, an unknown wallet, a past expiry", async () => {
    const reversed = await call("POST", "/payment-links", { token: tokenA, json: { amount: { min: 900, max: 100 }, description: "x" } });
    expect(reversed.status).toBe(400);
    expect(messagesOf(reversed.body)).toContain("amount.min must not be greater than amount.max");
    const neither = await call("POST", "/payment-links", { token: tokenA, json: { description: "x" } });
    expect(neither.status).toBe(400);
    expect(messagesOf(neither.body)).toContain("amount");
    const gnf = await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, currency: "GNF", countries: ["bj"], description: "x" } });
    expect(messagesOf(gnf.body)).toContain("currency must be XOF for the countries given");
    const wallet = await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, wallets: ["nopay"], description: "x" } });
    expect(messagesOf(wallet.body)).toContain("wallets: nopay is not an operator");
    const past = await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, expiresAt: "2020-01-01T00:00:00Z", description: "x" } });
    expect(messagesOf(past.body)).toContain("expiresAt must be in the future");
  });
});

describe("GET /payment-links", () => {
  it("lists the tenant's links newest first, a page at a time, and only its own", async () => {
    const made: string[] = [];
    for (const amount of [100, 200, 300])
      made.push((await call("POST", "/payment-links", { token: tokenB, json: { amount, description: `B ${amount}` } })).body.id);
    const first = await call("GET", "/payment-links?limit=2", { token: tokenB });
    expect(first.body.data.map((l: Body) => l.id)).toEqual([made[2], made[1]]);
    const second = await call("GET", `/payment-links?limit=2&cursor=${first.body.nextCursor}`, { token: tokenB });
    expect(second.body.data.map((l: Body) => l.id)).toEqual([made[0]]);
    expect(second.body.nextCursor).toBeNull();
    const ofA = await call("GET", "/payment-links?limit=100", { token: tokenA });
    expect(ofA.body.data.some((l: Body) => made.includes(l.id))).toBe(false);
  });
});

describe("paying a link on its pay page's calls", () => {
  it("makes the payment as the tenant's own, with the link's reference; the link shows it, and payment_link.paid follows", async () => {
    const link = (
      await call("POST", "/payment-links", { token: tokenA, json: { amount: 700, description: "Panier", merchantReference: "cart-7", metadata: { cart: 7 } } })
    ).body;
    const face = await call("GET", `/pay/${link.id}/link`);
    expect(face.status).toBe(200);
    expect(face.body).toMatchObject({ id: link.id, status: "active", description: "Panier", amount: 700, currency: "XOF" });
    expect(face.body.wallets).toContainEqual({ country: "bj", operator: "mtn", flow: "push", otpHint: null });
    expect(Object.keys(face.body).sort()).toEqual([
      "amount",
      "amountMax",
      "amountMin",
      "currency",
      "description",
      "environment",
      "id",
      "rescue",
      "returnUrl",
      "shop",
      "status",
      "wallets",
    ]);
    // A link's face rescues nothing (a rescue URL's names its payment: test/e2e/payment-links/rescue.test.ts).
    expect(face.body.rescue).toBeNull();
    const paymentId = await payAndSettle(link.id);
    const payment = (await call("GET", `/payments/${paymentId}`, { token: tokenA })).body;
    expect(payment).toMatchObject({
      paymentLinkId: link.id,
      amount: 700,
      description: "Panier",
      merchantReference: "cart-7",
      customData: { cart: 7 },
      operator: "mtn",
    });
    const detail = (await call("GET", `/payment-links/${link.id}`, { token: tokenA })).body;
    expect(detail).toMatchObject({ status: "used", paidCount: 1 });
    expect(detail.payments.map((p: Body) => p.id)).toEqual([paymentId]);
    const events = (await call("GET", "/events?type=payment_link.paid", { token: tokenA })).body.data as Body[];
    expect(events.find((e) => e.data.paymentId === paymentId)?.data).toMatchObject({
      paymentLinkId: link.id,
      amount: 700,
      paidCount: 1,
      linkStatus: "used",
      merchantReference: "cart-7",
    });
    const status = await call("GET", `/pay/${link.id}/payments/${paymentId}`);
    expect(status.body).toMatchObject({ id: paymentId, state: "succeeded", amount: 700 });
  });

  it("takes a reusable link's payments three times, each counted and listed", async () => {
    const link = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 300, description: "Cotisation", reusable: true } })).body;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await payAndSettle(link.id));
    const detail = (await call("GET", `/payment-links/${link.id}`, { token: tokenA })).body;
    expect(detail).toMatchObject({ status: "active", paidCount: 3 });
    expect(detail.payments.map((p: Body) => p.id)).toEqual(ids.reverse());
    const events = (await call("GET", "/events?type=payment_link.paid&limit=100", { token: tokenA })).body.data as Body[];
    expect(
      events
        .filter((e) => e.data.paymentLinkId === link.id)
        .map((e) => e.data.paidCount)
        .sort(),
    ).toEqual([1, 2, 3]);
  });

  it("refuses a used single-use link, an expired link and a deactivated one, and the pay page's call says which", async () => {
    const single = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 400, description: "Une fois" } })).body;
    await payAndSettle(single.id);
    const used = await call("POST", `/pay/${single.id}/payments`, { json: mtnBenin });
    expect(used.status).toBe(409);
    expect(used.body.message).toBe("This payment link has already been paid");
    expect((await call("GET", `/pay/${single.id}/link`)).body).toMatchObject({ status: "used", wallets: [] });

    const soon = new Date(Date.now() + 1500).toISOString();
    const expiring = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 400, description: "Bientôt", expiresAt: soon } })).body;
    await Bun.sleep(1600);
    const expired = await call("POST", `/pay/${expiring.id}/payments`, { json: mtnBenin });
    expect(expired.status).toBe(409);
    expect(expired.body.message).toBe("This payment link has expired");
    expect((await call("GET", `/pay/${expiring.id}/link`)).body.status).toBe("expired");

    const other = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 400, description: "Retiré" } })).body;
    const patched = await call("PATCH", `/payment-links/${other.id}`, { token: tokenA, json: { active: false } });
    expect(patched.body).toMatchObject({ status: "deactivated" });
    expect(patched.body.deactivatedAt).not.toBeNull();
    const refused = await call("POST", `/pay/${other.id}/payments`, { json: mtnBenin });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe("This payment link was deactivated by the merchant");
  });

  it("holds the customer's amount between the link's bounds, and its wallets and countries", async () => {
    const link = (
      await call("POST", "/payment-links", { token: tokenA, json: { amount: { min: 200, max: 900 }, description: "Don", wallets: ["mtn"], countries: ["bj"] } })
    ).body;
    const low = await call("POST", `/pay/${link.id}/payments`, { json: { ...mtnBenin, amount: 100 } });
    expect(low.status).toBe(400);
    expect(messagesOf(low.body)).toContain("amount must be between 200 and 900");
    const moov = await call("POST", `/pay/${link.id}/payments`, { json: { operator: "moov", phone: { number: "+22995000000", country: "bj" }, amount: 300 } });
    expect(messagesOf(moov.body)).toContain("operator moov is not taken by this link");
    const togo = await call("POST", `/pay/${link.id}/payments`, { json: { operator: "mtn", phone: { number: "+22890000000", country: "tg" }, amount: 300 } });
    expect(messagesOf(togo.body)).toContain("phone.country tg is not taken by this link");
    const id = await payAndSettle(link.id, { amount: 650 });
    expect((await call("GET", `/payments/${id}`, { token: tokenA })).body.amount).toBe(650);
  });

  it("shows a payment only through the link it was paid through", async () => {
    const one = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, description: "Un", reusable: true } })).body;
    const two = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, description: "Deux" } })).body;
    const paid = await call("POST", `/pay/${one.id}/payments`, { json: mtnBenin });
    expect((await call("GET", `/pay/${one.id}/payments/${paid.body.id}`)).status).toBe(200);
    const elsewhere = await call("GET", `/pay/${two.id}/payments/${paid.body.id}`);
    expect(elsewhere.status).toBe(404);
    expect(JSON.stringify(elsewhere.body)).not.toContain(paid.body.id.slice(4));
    expect((await call("GET", "/pay/pl_0000000000000000/link")).status).toBe(404);
  });
});

describe("tenant isolation", () => {
  it("tenant B can neither read nor deactivate tenant A's link", async () => {
    const link = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, description: "Secret de A", merchantReference: "a-only" } })).body;
    const { qr: _qr, share: _share, ...shown } = link;
    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [{ path: `/payment-links/${link.id}` }, { method: "PATCH", path: `/payment-links/${link.id}`, body: { active: false } }],
      object: shown,
      readBack: `/payment-links/${link.id}`,
    });
  });
});

describe("the pay page's calls are limited per address", () => {
  it("answers 429 with Retry-After once the address used its burst", async () => {
    const link = (await call("POST", "/payment-links", { token: tokenA, json: { amount: 500, description: "Limite" } })).body;
    const answers: Response[] = [];
    for (let i = 0; i < 60 && !answers.some((r) => r.status === 429); i++) answers.push(await fetch(`${base}/pay/${link.id}/link`));
    const limited = answers.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await limited!.json()) as Body).code).toBe("rate_limited");
    // A tenant's own API is not counted in the pay page's bucket.
    expect((await call("GET", `/payment-links/${link.id}`, { token: tokenA })).status).toBe(200);
  });
});
