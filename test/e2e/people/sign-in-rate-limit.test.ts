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
