/**
 * Finding a payment the way a merchant remembers it: by its own order reference (given to `POST /payments`),
 * by words of the description, by the customer's name — over real HTTP, the payments made through provider
 * A's simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";

let rig: ProviderARig;
let token: string;
let otherToken: string;

type Body = Record<string, any>;

async function call(path: string, init: { method?: string; json?: unknown; as?: string } = {}) {
  const response = await fetch(`${rig.base}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${init.as ?? token}`, ...(init.json === undefined ? {} : { "content-type": "application/json" }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

async function pay(fields: { description: string; firstname?: string; lastname?: string; merchantReference?: string }, as = token) {
  const { description, firstname, lastname, merchantReference } = fields;
  const created = await call("/payments", {
    method: "POST",
    as,
    json: {
      amount: 700,
      description,
      operator: "mtn",
      customer: { phone: { number: "+22997000001", country: "bj" }, ...(firstname && { firstname }), ...(lastname && { lastname }) },
      ...(merchantReference && { merchantReference }),
    },
  });
  expect(created.status).toBe(200);
  return created.body;
}

const ids = async (query: string, as = token) => {
  const listed = await call(`/payments?${query}`, { as });
  expect(listed.status).toBe(200);
  return (listed.body.data as Body[]).map((payment) => payment.id as string);
};

const made: Record<string, Body> = {};

beforeAll(async () => {
  rig = await startProviderARig();
  const tenant = await rig.tg.insertTenant();
  token = await rig.tg.tenantToken(tenant);
  otherToken = await rig.tg.tenantToken(await rig.tg.insertTenant());
  made.shoes = await pay({ description: "Chaussures taille 42", firstname: "Awa", lastname: "Diallo", merchantReference: "order-1042" });
  made.rice = await pay({ description: "Rice 25 kg (100% local)", firstname: "Kofi", lastname: "Mensah", merchantReference: "order-1043" });
  made.tea = await pay({ description: "Thé vert", firstname: "Aminata", merchantReference: "ORDER-1044" });
  made.other = await pay({ description: "Chaussures d'une autre boutique", firstname: "Awa", merchantReference: "order-1042" }, otherToken);
}, 60_000);
afterAll(() => rig?.close(), 30_000);

describe("GET /payments by what a merchant remembers", () => {
  it("shows the merchant's own reference back, and finds the payment by it (exactly, within the tenant)", async () => {
    expect(made.shoes!.merchantReference).toBe("order-1042");
    expect((await call(`/payments/${made.shoes!.id}`)).body.merchantReference).toBe("order-1042");
    expect(await ids("merchantReference=order-1042")).toEqual([made.shoes!.id]);
    expect(await ids("merchantReference=order-104")).toEqual([]);
    expect(await ids("merchantReference=order-1042", otherToken)).toEqual([made.other!.id]);
  });

  it("finds words of the description and the customer's names, in any case, newest first", async () => {
    expect(await ids("q=chaussures")).toEqual([made.shoes!.id]);
    expect(await ids("q=AWA%20DIALLO")).toEqual([made.shoes!.id]);
    expect(await ids("q=mensah")).toEqual([made.rice!.id]);
    expect(await ids("q=ta")).toEqual([made.tea!.id, made.shoes!.id]);
    expect(await ids("q=th%C3%A9")).toEqual([made.tea!.id]);
    // % and _ are the text itself, not wildcards.
    expect(await ids("q=100%25")).toEqual([made.rice!.id]);
    expect(await ids("q=__")).toEqual([]);
    expect(await ids("q=%25%25")).toEqual([]);
  });

  it("finds the payments made to one wallet's operator", async () => {
    expect(await ids("operator=mtn")).toEqual([made.tea!.id, made.rice!.id, made.shoes!.id]);
    expect(await ids("operator=moov")).toEqual([]);
    const bad = await call("/payments?operator=MTN!");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(["operator must be an operator's code in lower case, like mtn"]);
  });

  it("keeps the other filters, and refuses a search of one letter", async () => {
    expect(await ids("q=awa&amountMin=701")).toEqual([]);
    expect(await ids("q=awa&merchantReference=order-1042")).toEqual([made.shoes!.id]);
    const short = await call("/payments?q=a");
    expect(short.status).toBe(400);
    expect(short.body.message).toEqual(["q must be longer than or equal to 2 characters"]);
  });

  it("takes a merchant reference no longer than 255 characters", async () => {
    const long = await call("/payments", {
      method: "POST",
      json: {
        amount: 700,
        description: "x",
        operator: "mtn",
        customer: { phone: { number: "+22997000001", country: "bj" } },
        merchantReference: "r".repeat(256),
      },
    });
    expect(long.status).toBe(400);
    expect(long.body.message).toEqual(["merchantReference must be shorter than or equal to 255 characters"]);
  });
});
