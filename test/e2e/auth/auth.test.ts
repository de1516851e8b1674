import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { createHttpApp, type HttpApp } from "../../../src/http/app.ts";
import { createMetrics } from "../../../src/http/metrics.ts";
import { createTokenVerifier, mintToken } from "../../../src/services/auth/tokens.ts";
import { expectError } from "../../support/errors.ts";
import { routerWithFixtures } from "../../support/fixture-router.ts";
import { startTestGateway, TEST_ENV, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let http: HttpApp;
let tenantA: string;
let tenantB: string;
const secret = new TextEncoder().encode(TEST_ENV.JWT_SECRET);

const whoami = (headers: Record<string, string> = {}) => tg.request("/auth/whoami", { headers });
const item = (headers: Record<string, string>) => http.fetch(new Request("http://localhost/fixture/items/1", { headers }));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  tg = await startTestGateway();
  http = createHttpApp({ deps: tg.gateway.deps, router: routerWithFixtures, openapi: {} as never, metrics: createMetrics(), readiness: {} });
  tenantA = await tg.insertTenant();
  tenantB = await tg.insertTenant();
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("GET /auth/whoami", () => {
  it("describes an admin token", async () => {
    const response = await whoami(bearer(await tg.adminToken("live")));
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ sub: "operator", role: "admin", tenantId: null, environment: "live", keyId: null });
    expect(new Date(body.expiresAt as string).getTime()).toBeGreaterThan(Date.now());
  });

  it("describes a tenant token, defaulting to sandbox", async () => {
    const token = await new SignJWT({ tenant_id: tenantA }).setProtectedHeader({ alg: "HS256" }).setSubject("app").setExpirationTime("5m").sign(secret);
    const body = await (await whoami(bearer(token))).json();
    expect(body).toMatchObject({ sub: "app", role: "tenant", tenantId: tenantA, environment: "sandbox", keyId: null });
  });

  it("is the same procedure over /trpc", async () => {
    const response = await tg.request("/trpc/auth.whoami", { headers: bearer(await tg.tenantToken(tenantA)) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { data: { tenantId: string } } };
    expect(body.result.data.tenantId).toBe(tenantA);
  });
});

describe("bearer token verification", () => {
  it("refuses a request without an Authorization header", async () => {
    await expectError(await whoami(), 401, "unauthorized", "Missing Authorization header");
  });

  it("refuses a malformed Authorization header", async () => {
    await expectError(await whoami({ authorization: "Basic dXNlcjpwYXNz" }), 401, "unauthorized", "Authorization header must be 'Bearer <token>'");
    await expectError(await whoami({ authorization: "Bearer not-a-jwt" }), 401, "unauthorized");
  });

  it("refuses a token signed with another secret", async () => {
    const forged = await new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("mallory")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("another-secret-another-secret-another-secret"));
    await expectError(await whoami(bearer(forged)), 401, "unauthorized", "Token signature is invalid");
  });

  it("refuses alg: none", async () => {
    const unsigned = new UnsecuredJWT({ role: "admin" }).setSubject("mallory").setExpirationTime("5m").encode();
    await expectError(await whoami({ authorization: `Bearer ${unsigned}` }), 401, "unauthorized", "Token algorithm is not accepted");
  });

  it("refuses an expired token (beyond the 30 s leeway), and a token not yet valid", async () => {
    const expired = await mintToken(tg.config.jwt, { sub: "operator", role: "admin", now: new Date(Date.now() - 3_700_000), ttlSeconds: 3600 });
    await expectError(await whoami(bearer(expired)), 401, "unauthorized", "Token has expired");
    const early = await new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("operator")
      .setNotBefore(Math.floor(Date.now() / 1000) + 600)
      .setExpirationTime("1h")
      .sign(secret);
    await expectError(await whoami(bearer(early)), 401, "unauthorized");
  });

  it("refuses a token without sub or exp, or with neither tenant_id nor role admin", async () => {
    const noExp = await new SignJWT({ role: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("x").sign(secret);
    await expectError(await whoami(bearer(noExp)), 401, "unauthorized");
    const nobody = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("x").setExpirationTime("5m").sign(secret);
    await expectError(await whoami(bearer(nobody)), 401, "unauthorized", "Token has neither a tenant_id claim nor role admin");
  });

  it("re-checks exp on every cache hit", async () => {
    const verifier = createTokenVerifier(tg.config.jwt);
    const token = await mintToken(tg.config.jwt, { sub: "operator", role: "admin", ttlSeconds: 60 });
    const first = await verifier.verify(token);
    expect(first.role).toBe("admin");
    // Same token, same cache entry, but the clock has moved past exp + leeway.
    await expect(verifier.verify(token, Date.now() + 120_000)).rejects.toThrow("Token has expired");
  });

  it("refuses a wrong issuer or audience when they are configured", async () => {
    const strict = await startTestGateway({ JWT_ISSUER: "https://auth.passerelle.test", JWT_AUDIENCE: "passerelle" });
    try {
      const good = await mintToken(strict.config.jwt, { sub: "operator", role: "admin" });
      expect((await strict.request("/auth/whoami", { headers: bearer(good) })).status).toBe(200);
      const wrongIssuer = await new SignJWT({ role: "admin" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("operator")
        .setIssuer("https://elsewhere.test")
        .setAudience("passerelle")
        .setExpirationTime("5m")
        .sign(secret);
      await expectError(await strict.request("/auth/whoami", { headers: bearer(wrongIssuer) }), 401, "unauthorized", "Token iss claim is not accepted");
      const wrongAudience = await new SignJWT({ role: "admin" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("operator")
        .setIssuer("https://auth.passerelle.test")
        .setAudience("someone-else")
        .setExpirationTime("5m")
        .sign(secret);
      await expectError(await strict.request("/auth/whoami", { headers: bearer(wrongAudience) }), 401, "unauthorized", "Token aud claim is not accepted");
    } finally {
      await strict.close();
    }
  }, 60_000);
});

describe("tokens from the operator's identity provider (JWT_JWKS_URL)", () => {
  it("accepts RS256 and ES256 tokens whose key is in the JWKS, and refuses them when no JWKS is configured", async () => {
    const rsa = await generateKeyPair("RS256");
    const ec = await generateKeyPair("ES256");
    const jwks = {
      keys: [
        { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256" },
        { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256" },
      ],
    };
    const idp = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json(jwks) });
    const withJwks = await startTestGateway({ JWT_JWKS_URL: `http://127.0.0.1:${idp.port}/.well-known/jwks.json` });
    try {
      const rs = await new SignJWT({ role: "admin" })
        .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
        .setSubject("idp-user")
        .setExpirationTime("5m")
        .sign(rsa.privateKey);
      const es = await new SignJWT({ tenant_id: tenantA })
        .setProtectedHeader({ alg: "ES256", kid: "ec-1" })
        .setSubject("idp-app")
        .setExpirationTime("5m")
        .sign(ec.privateKey);
      const rsBody = await (await withJwks.request("/auth/whoami", { headers: bearer(rs) })).json();
      expect(rsBody).toMatchObject({ sub: "idp-user", role: "admin" });
      const esBody = await (await withJwks.request("/auth/whoami", { headers: bearer(es) })).json();
      expect(esBody).toMatchObject({ sub: "idp-app", role: "tenant", tenantId: tenantA });
      // Our own HS256 tokens keep working beside the identity provider's.
      expect((await withJwks.request("/auth/whoami", { headers: bearer(await withJwks.adminToken()) })).status).toBe(200);
      // A key the JWKS does not hold is refused.
      const stranger = await generateKeyPair("RS256");
      const forged = await new SignJWT({ role: "admin" })
        .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
        .setSubject("x")
        .setExpirationTime("5m")
        .sign(stranger.privateKey);
      await expectError(await withJwks.request("/auth/whoami", { headers: bearer(forged) }), 401, "unauthorized");
      // Without JWT_JWKS_URL, asymmetric tokens are not accepted at all.
      await expectError(await whoami(bearer(rs)), 401, "unauthorized", "Token algorithm is not accepted");
    } finally {
      await withJwks.close();
      idp.stop(true);
    }
  }, 60_000);
});

describe("tenant-scoped procedures", () => {
  it("act on the token's own tenant", async () => {
    const response = await item(bearer(await tg.tenantToken(tenantA)));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ tenantId: tenantA, environment: "sandbox" });
  });

  it("refuse a tenant token naming another tenant in x-tenant-id with 403 tenant_mismatch", async () => {
    const response = await item({ ...bearer(await tg.tenantToken(tenantA)), "x-tenant-id": tenantB });
    await expectError(response, 403, "tenant_mismatch");
  });

  it("refuse an admin token without x-tenant-id with 400", async () => {
    await expectError(await item(bearer(await tg.adminToken())), 400, "validation_failed", "x-tenant-id header is required with an admin token");
  });

  it("let an admin act on a named tenant, in the environment of x-environment", async () => {
    const response = await item({ ...bearer(await tg.adminToken()), "x-tenant-id": tenantB, "x-environment": "live" });
    expect(await response.json()).toMatchObject({ tenantId: tenantB, environment: "live" });
  });

  it("answer 404 to an admin naming a tenant that does not exist", async () => {
    const response = await item({ ...bearer(await tg.adminToken()), "x-tenant-id": "ten_01JAAAAAAAAAAAAAAAAAAAAAAA" });
    await expectError(response, 404, "not_found", "Tenant not found");
  });

  it("require x-tenant-id where the procedure says so, even for a tenant token", async () => {
    const token = await tg.tenantToken(tenantA);
    const without = await http.fetch(
      new Request("http://localhost/fixture/checkout", {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: JSON.stringify({ amount: 1 }),
      }),
    );
    await expectError(without, 400, "validation_failed", "x-tenant-id header is required");
    const withHeader = await http.fetch(
      new Request("http://localhost/fixture/checkout", {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json", "x-tenant-id": tenantA },
        body: JSON.stringify({ amount: 1 }),
      }),
    );
    expect(withHeader.status).toBe(200);
  });

  it("refuse a disabled tenant's tokens with 403", async () => {
    const disabled = await tg.insertTenant({ disabled: true });
    await expectError(await item(bearer(await tg.tenantToken(disabled))), 403, "forbidden", "Tenant is disabled");
  });
});

describe("WWW-Authenticate on every 401 (RFC 6750 §3)", () => {
  const challenge = (response: Response) => response.headers.get("www-authenticate");

  it("challenges a request without a token, or with another scheme, without naming an error", async () => {
    expect(challenge(await whoami())).toBe('Bearer realm="passerelle"');
    expect(challenge(await whoami({ authorization: "Basic dXNlcjpwYXNz" }))).toBe('Bearer realm="passerelle"');
    expect(challenge(await item({}))).toBe('Bearer realm="passerelle"');
    const post = await tg.request("/tenants", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x" }) });
    expect(post.status).toBe(401);
    expect(challenge(post)).toBe('Bearer realm="passerelle"');
  });

  it("names invalid_token, with the reason, when a token was sent and refused", async () => {
    const expired = await mintToken(tg.config.jwt, { sub: "operator", role: "admin", now: new Date(Date.now() - 3_700_000), ttlSeconds: 3600 });
    expect(challenge(await whoami(bearer(expired)))).toBe('Bearer realm="passerelle", error="invalid_token", error_description="Token has expired"');
    const tenantRoute = await tg.request(`/tenants/${tenantA}`, { headers: bearer("not-a-jwt") });
    expect(tenantRoute.status).toBe(401);
    expect(challenge(tenantRoute)).toBe('Bearer realm="passerelle", error="invalid_token", error_description="Token is malformed or cannot be verified"');
    const ghost = await tg.tenantToken("ten_01JAAAAAAAAAAAAAAAAAAAAAAA");
    expect(challenge(await item(bearer(ghost)))).toBe(
      'Bearer realm="passerelle", error="invalid_token", error_description="The token\'s tenant does not exist"',
    );
  });

  it("is on 401s only", async () => {
    const forbidden = await item({ ...bearer(await tg.tenantToken(tenantA)), "x-tenant-id": tenantB });
    expect(forbidden.status).toBe(403);
    expect(challenge(forbidden)).toBeNull();
  });
});
