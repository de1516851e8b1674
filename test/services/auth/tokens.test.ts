/**
 * The verified-token cache (`services/auth/tokens.ts`): keyed by the token string, bounded, and never an
 * answer the token itself would not give — `exp` and `nbf` are checked on every hit.
 */
import { describe, expect, it } from "bun:test";
import { createTokenVerifier, mintToken } from "../../../src/services/auth/tokens.ts";

const jwt = { secret: "test-secret-test-secret-test-secret-0123456789", issuer: undefined, audience: undefined, jwksUrl: undefined };

describe("the verified-token cache", () => {
  it("answers a verified token from the cache until exp (with its 30 s leeway) has passed", async () => {
    const verifier = createTokenVerifier(jwt);
    const token = await mintToken(jwt, { sub: "operator", role: "admin", ttlSeconds: 60 });
    expect(verifier.verifyCached!(token)).toBeUndefined();
    const now = Date.now();
    expect((await verifier.verify(token, now)).role).toBe("admin");
    expect(verifier.verifyCached!(token, now + 60_000)?.sub).toBe("operator");
    expect(() => verifier.verifyCached!(token, now + 91_000)).toThrow("Token has expired");
    // An expired token is dropped: asked again, it is verified again, and refused.
    expect(verifier.verifyCached!(token, now)).toBeUndefined();
    await expect(verifier.verify(token, now + 91_000)).rejects.toThrow("Token has expired");
  });

  it("keeps at most cacheSize tokens, dropping the oldest first", async () => {
    const verifier = createTokenVerifier(jwt, { cacheSize: 3 });
    const tokens = await Promise.all([1, 2, 3, 4].map((i) => mintToken(jwt, { sub: `tenant:${i}`, tenantId: `ten_${i}` })));
    for (const token of tokens) await verifier.verify(token);
    expect(verifier.verifyCached!(tokens[0]!)).toBeUndefined();
    for (const token of tokens.slice(1)) expect(verifier.verifyCached!(token)?.tenantId).toBe(`ten_${tokens.indexOf(token) + 1}`);
  });

  it("never caches a refusal: a token with a bad signature is refused every time", async () => {
    const verifier = createTokenVerifier(jwt);
    const forged = await mintToken({ ...jwt, secret: "another-secret-another-secret-another-01" }, { sub: "operator", role: "admin" });
    await expect(verifier.verify(forged)).rejects.toThrow("Token signature is invalid");
    expect(verifier.verifyCached!(forged)).toBeUndefined();
    await expect(verifier.verify(forged)).rejects.toThrow("Token signature is invalid");
  });
});
