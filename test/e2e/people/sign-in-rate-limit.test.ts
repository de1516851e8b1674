/**
 * Sign-in attempts are limited per address (issue 30 point 2): `SIGN_IN_ADDRESS_LIMIT` attempts, then 429 with
 * `Retry-After`, whatever the account — while another address still signs in. Each refusal is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let base: string;

const signIn = (email: string, via: "network" | "in-process") => {
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "a wrong password" }) };
  return via === "network" ? fetch(`${base}/people/sign-in`, init) : tg.request("/people/sign-in", init);
};

beforeAll(async () => {
  tg = await startTestGateway({ SIGN_IN_ADDRESS_LIMIT: "3" });
  base = (await tg.gateway.start({ workers: false })).url!;
}, 60_000);

afterAll(() => tg?.close(), 30_000);

describe("POST /people/sign-in from one address", () => {
  it("refuses the attempt past the limit with 429 and Retry-After, for any account; another address is not held back", async () => {
    for (const email of ["a@example.com", "b@example.com", "c@example.com"]) await expectError(await signIn(email, "network"), 401, "unauthorized");
    const limited = await signIn("d@example.com", "network");
    const body = await expectError(limited.clone(), 429, "rate_limited");
    expect(body.message).toBe("Too many sign-in attempts from this address: try again later");
    // 3 attempts refilled over 15 minutes: one every 300 s, less the seconds the attempts took (argon2id on a loaded machine).
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(240);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(300);
    await expectError(await signIn("d@example.com", "in-process"), 401, "unauthorized");
    const rows = await tg.database.db.selectFrom("sign_ins").select(["email", "address", "outcome"]).orderBy("id").execute();
    expect(rows).toEqual([
      { email: "a@example.com", address: "127.0.0.1", outcome: "unknown_email" },
      { email: "b@example.com", address: "127.0.0.1", outcome: "unknown_email" },
      { email: "c@example.com", address: "127.0.0.1", outcome: "unknown_email" },
      { email: "d@example.com", address: "127.0.0.1", outcome: "limited" },
      { email: "d@example.com", address: "local", outcome: "unknown_email" },
    ]);
    // Each refused attempt still hashes a password (argon2id), as a known address's would: seconds on a loaded machine.
  }, 60_000);
});

describe("POST /people/sign-in through the gateway's own balancer (TRUSTED_PROXIES)", () => {
  let behind: TestGateway;
  let behindBase: string;

  beforeAll(async () => {
    // The test's requests come from loopback: as from a balancer on loopback that names each client in X-Forwarded-For.
    behind = await startTestGateway({ SIGN_IN_ADDRESS_LIMIT: "2", TRUSTED_PROXIES: "loopback" });
    behindBase = (await behind.gateway.start({ workers: false })).url!;
  }, 60_000);

  afterAll(() => behind?.close(), 30_000);

  const from = (client: string | undefined, email: string) =>
    fetch(`${behindBase}/people/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(client ? { "x-forwarded-for": client } : {}) },
      body: JSON.stringify({ email, password: "a wrong password" }),
    });

  it("counts each client the balancer names, not the balancer", async () => {
    await expectError(await from("203.0.113.7", "a@example.com"), 401, "unauthorized");
    await expectError(await from("203.0.113.7", "b@example.com"), 401, "unauthorized");
    await expectError(await from("203.0.113.7", "c@example.com"), 429, "rate_limited");
    // Another client behind the same balancer is not held back.
    await expectError(await from("203.0.113.8", "c@example.com"), 401, "unauthorized");
    // A client's own X-Forwarded-For, passed on by the balancer, only adds to the left of the address the balancer saw.
    await expectError(await from("198.51.100.1, 203.0.113.7", "d@example.com"), 429, "rate_limited");
    const rows = await behind.database.db.selectFrom("sign_ins").select(["address", "outcome"]).orderBy("id").execute();
    expect(rows.map((row) => row.address)).toEqual(["203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.8", "203.0.113.7"]);
  }, 60_000);

  it("reads no X-Forwarded-For without TRUSTED_PROXIES: a client cannot pick its own bucket", async () => {
    // The first describe's gateway trusts no proxy: its address is used up, whatever the header says.
    const spoofed = await fetch(`${base}/people/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "192.0.2.99" },
      body: JSON.stringify({ email: "e@example.com", password: "a wrong password" }),
    });
    await expectError(spoofed, 429, "rate_limited");
  }, 60_000);
});
