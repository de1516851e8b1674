/**
 * Hostile text is a 400, never a 500 (issue 13, point 5): a NUL character or an unpaired surrogate in any
 * string of any input — body, query string, path parameter, property name — is refused with a validation
 * entry naming the place, on the REST surface and on `/trpc`; provider B's IPN holding one is refused as
 * malformed, and nothing is stored. PostgreSQL can store neither, so each reached the database as a 500.
 *
 * The cases are generated from the router itself: every procedure with an OpenAPI route and an input,
 * its input schema walked to build a well-shaped input and to find every place a string goes.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { mintToken } from "../../../src/mod.ts";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { restRequest, routesWithInputs, takesBody, trpcRequest, type Place, type Route, type Segment } from "../../support/route-inputs.ts";

const VALUE_RULE = "must not contain a NUL character or an unpaired surrogate";
const KEY_RULE = "has a property name with a NUL character or an unpaired surrogate";

const HOSTILE = [
  { name: "a NUL character", text: "ab\u0000cd" },
  { name: "an unpaired surrogate", text: "ab\ud800cd" },
] as const;

/** Our tenant, made before the gateway starts so the inputs below can name it. */
const TENANT_ID = `ten_${ulid()}`;

const ROUTES: Route[] = routesWithInputs(TENANT_ID);

function withHostile(value: unknown, place: Place, text: string): unknown {
  const copy = structuredClone(value) as Record<Segment, unknown>;
  let parent = copy;
  for (const segment of place.path.slice(0, place.kind === "key" ? undefined : -1)) parent = parent[segment] as Record<Segment, unknown>;
  if (place.kind === "key") {
    parent[`k${text}`] = parent.k;
    delete parent.k;
  } else {
    parent[place.path[place.path.length - 1]!] = text;
  }
  return copy;
}

/** The one validation entry the gateway must answer for `place`. */
function expectedEntry(place: Place): string {
  const path = place.path.length > 0 ? place.path.join(".") : "body";
  return `${path} ${place.kind === "key" ? KEY_RULE : VALUE_RULE}`;
}

// ---------------------------------------------------------------------------------------------------------

let tg: TestGateway;
let headers: Record<string, string>;
/** A person signed in to the tenant (the session cookie and its CSRF token): what `/people/me/…` takes. */
let personHeaders: Record<string, string>;
const headersFor = (route: Route) => (route.path.startsWith("/people/me") ? personHeaders : headers);

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.gateway.deps.db
    .insertInto("tenants")
    .values({ id: TENANT_ID, name: "Hostile", store_name: "Hostile store", disabled: false, live_enabled: false })
    .execute();
  // An operator token reaches every route (admin, tenant, tenant-owner, public); it names the tenant.
  headers = { authorization: `Bearer ${await tg.adminToken()}`, "x-tenant-id": TENANT_ID };
  const personId = `per_${ulid()}`;
  const password = "a long enough passphrase";
  await tg.gateway.deps.db
    .insertInto("people")
    .values({ id: personId, email: "hostile@example.com", password_hash: await Bun.password.hash(password, "argon2id") })
    .execute();
  await tg.gateway.deps.db.insertInto("memberships").values({ tenant_id: TENANT_ID, person_id: personId, role: "owner" }).execute();
  const signedIn = await tg.request("/people/sign-in", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "hostile@example.com", password }),
  });
  expect(signedIn.status).toBe(200);
  personHeaders = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": ((await signedIn.json()) as { csrfToken: string }).csrfToken };
}, 60_000);
afterAll(() => tg.close(), 30_000);

async function validationEntries(response: Response, surface: "rest" | "trpc"): Promise<unknown> {
  const body = (await response.json()) as { message?: unknown; code?: string; error?: { data?: { httpBody?: { message?: unknown; code?: string } } } };
  const errorBody = surface === "rest" ? body : body.error?.data?.httpBody;
  expect(errorBody?.code).toBe("validation_failed");
  return errorBody?.message;
}

describe("the routes generated from the router", () => {
  it("cover every write route and every query with a string filter", () => {
    const writes = ROUTES.filter(takesBody).map((route) => `${route.method} ${route.path}`);
    expect(writes).toEqual(
      expect.arrayContaining([
        "POST /tenants",
        "PATCH /webhooks/{webhook_id}",
        "POST /providerB/checkout",
        "POST /providerB/permits/{permit_id}/charges",
        "POST /auth/token",
      ]),
    );
    expect(writes.length).toBeGreaterThanOrEqual(15);
    expect(
      ROUTES.filter((route) => route.method === "GET" && route.places.some((place) => !route.pathParams.includes(String(place.path[0])))).length,
    ).toBeGreaterThanOrEqual(5);
  });

  it("send the escape sequences themselves: JSON.stringify keeps a lone surrogate as \\ud800", () => {
    expect(JSON.stringify({ a: HOSTILE[1].text })).toBe('{"a":"ab\\ud800cd"}');
    expect(JSON.stringify({ a: HOSTILE[0].text })).toBe('{"a":"ab\\u0000cd"}');
  });
});

for (const route of ROUTES) {
  describe(`${route.method} ${route.path}`, () => {
    for (const place of route.places) {
      const where = place.kind === "key" ? `a property name of ${place.path.join(".") || "the body"}` : place.path.join(".");
      const inPath = place.kind === "value" && place.path.length === 1 && route.pathParams.includes(String(place.path[0]));
      const inBody = takesBody(route) && !inPath;
      for (const hostile of HOSTILE) {
        // A path or query parameter is percent-encoded UTF-8, which has no form for a lone surrogate (%ED%A0%80
        // decodes to U+FFFD); a JSON body, and any input on /trpc, carries its `\ud800` escape.
        if (inBody || hostile.text.includes("\u0000")) {
          it(`REST: ${where} holding ${hostile.name} is 400 naming it`, async () => {
            const { url, init } = restRequest(route, withHostile(route.input, place, hostile.text) as Record<string, unknown>, headersFor(route));
            const response = await tg.request(url, init);
            expect(response.status).toBe(400);
            expect(await validationEntries(response, "rest")).toEqual([expectedEntry(place)]);
          });
        }
        it(`/trpc: ${where} holding ${hostile.name} is 400 naming it`, async () => {
          const { url, init } = trpcRequest(route, withHostile(route.input, place, hostile.text), headersFor(route));
          const response = await tg.request(url, init);
          expect(response.status).toBe(400);
          expect(await validationEntries(response, "trpc")).toEqual([expectedEntry(place)]);
        });
      }
    }
  });
}

describe("the order of the checks", () => {
  it("answers a caller without a valid token 401 first, as for any other invalid input", async () => {
    const body = JSON.stringify({ name: "ab\u0000cd", storeName: "ab\ud800cd" });
    const anonymous = await tg.request("/tenants", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(anonymous.status).toBe(401);
    const trpc = await tg.request("/trpc/tenants.create", { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(trpc.status).toBe(401);
  });

  it("lists every place at once, in the body's order, property names by the object holding them", async () => {
    const response = await tg.request("/providerB/checkout", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({
        amount: 500,
        description: "a\u0000",
        returnUrl: "https://m.example/r",
        cancelUrl: "https://m.example/c",
        customer: { name: "\udc00x" },
        customData: { "k\u0000": "v" },
        channels: ["ok", "\ud800"],
      }),
    });
    expect(response.status).toBe(400);
    expect(await validationEntries(response, "rest")).toEqual([
      `description ${VALUE_RULE}`,
      `customer.name ${VALUE_RULE}`,
      `customData ${KEY_RULE}`,
      `channels.1 ${VALUE_RULE}`,
    ]);
  });
});

describe("a procedure without input", () => {
  it("GET /auth/whoami with a query string holding a NUL character is 400 naming it, as the document lists", async () => {
    // tg.request checks the answer against the OpenAPI document: an undocumented 400 fails here.
    const response = await tg.request("/auth/whoami?x=ab%00cd", { headers });
    expect(response.status).toBe(400);
    expect(await validationEntries(response, "rest")).toEqual([`x ${VALUE_RULE}`]);
  });
});

describe("a token's claims", () => {
  it("a key_id claim holding such text is 401, not 500 (the API key look-up never runs)", async () => {
    for (const keyId of ["key_\u0000", "key_\ud800"]) {
      const token = await mintToken(tg.config.jwt, { sub: "tenant", tenantId: TENANT_ID, keyId, environment: "sandbox" });
      const response = await tg.request("/payments", { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { message: string }).message).toBe("Token key_id claim is not accepted");
    }
  });
});

describe("POST /providerA/webhook/{environment} (no token)", () => {
  it("never reads such text: without the account's signature it is 401, not 500", async () => {
    for (const path of ["/providerA/webhook/sandbox", `/providerA/webhook/sandbox/${TENANT_ID}`]) {
      const body = JSON.stringify({ name: "transaction.approved\u0000", entity: { id: 412, merchant_reference: "pay_\ud800", description: "\u0000" } });
      const response = await tg.request(path, { method: "POST", headers: { "content-type": "application/json", "x-fedapay-signature": "t=1,s=00" }, body });
      expect(response.status).toBe(401);
    }
  });
});

describe("POST /providerB/webhook (provider B's IPN, no token)", () => {
  const ipn = (extra: Record<string, unknown>) => ({
    response_code: "00",
    status: "completed",
    hash: "ab".repeat(64),
    mode: "test",
    invoice: { token: `test_hostile${ulid()}`, total_amount: "5000", ...extra },
  });
  const stored = async () =>
    Number(
      (
        await tg.gateway.deps.db
          .selectFrom("ipn_messages")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const bodies: { name: string; contentType: string; body: () => string; field: string }[] = [
    {
      name: "a form field holding a NUL character",
      contentType: "application/x-www-form-urlencoded",
      body: () => encodePhpForm({ data: ipn({ description: "ab\u0000cd" }) }),
      field: "data.invoice.description",
    },
    {
      name: "a form token holding a NUL character",
      contentType: "application/x-www-form-urlencoded",
      body: () => encodePhpForm({ data: { ...ipn({}), invoice: { token: "test_\u0000" } } }),
      field: "data.invoice.token",
    },
    ...HOSTILE.map((hostile) => ({
      name: `a JSON field holding ${hostile.name}`,
      contentType: "application/json",
      body: () => JSON.stringify({ data: ipn({ description: hostile.text }) }),
      field: "data.invoice.description",
    })),
    ...HOSTILE.map((hostile) => ({
      name: `a data=<json> field holding ${hostile.name}`,
      contentType: "application/x-www-form-urlencoded",
      body: () => `data=${encodeURIComponent(JSON.stringify(ipn({ description: hostile.text })))}`,
      field: "data.invoice.description",
    })),
    {
      name: "a JSON property name holding an unpaired surrogate",
      contentType: "application/json",
      body: () => JSON.stringify({ data: { ...ipn({}), "x\ud800": "1" } }),
      field: "data",
    },
  ];

  for (const { name, contentType, body, field } of bodies) {
    it(`refuses ${name} as malformed, naming ${field}, and stores nothing`, async () => {
      const before = await stored();
      const response = await tg.request("/providerB/webhook", { method: "POST", headers: { "content-type": contentType }, body: body() });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { code: string; message: string };
      expect(answer.code).toBe("validation_failed");
      expect(answer.message).toStartWith("The IPN is malformed: ");
      expect(answer.message).toContain(`${field} `);
      expect(await stored()).toBe(before);
    });
  }

  it("still keeps a clean IPN for an unknown token as an orphan (the same body without the hostile text)", async () => {
    const before = await stored();
    const response = await tg.request("/providerB/webhook", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ data: ipn({ description: "abcd" }) }),
    });
    expect(response.status).toBe(200);
    expect(await stored()).toBe(before + 1);
  });
});
