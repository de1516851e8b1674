import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import * as oauth from "oauth4webapi";
import { createApiKey, type CreatedApiKey } from "../../../src/services/api-keys/api-keys.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let url: string;
let tenantId: string;
let key: CreatedApiKey;
/** The gateway as an OAuth2 authorization server, as an OAuth2 library sees it. */
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true };

const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;
const tokenRequest = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/auth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body });

beforeAll(async () => {
  tg = await startTestGateway();
  url = (await tg.gateway.start({ workers: false })).url!;
  as = { issuer: url, token_endpoint: `${url}/auth/token` };
  tenantId = await tg.insertTenant();
  key = await createApiKey(tg.gateway.deps, { tenantId, environment: "sandbox" });
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("POST /auth/token with an OAuth2 library (oauth4webapi)", () => {
  for (const [method, auth] of [
    ["client_secret_basic", () => oauth.ClientSecretBasic(key.secret)],
    ["client_secret_post", () => oauth.ClientSecretPost(key.secret)],
  ] as const) {
    it(`grants client credentials with ${method}, the token acting for the key`, async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, { client_id: key.id }, auth(), new URLSearchParams(), insecure);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const token = await oauth.processClientCredentialsResponse(as, { client_id: key.id }, response);
      expect(token).toMatchObject({ token_type: "bearer", expires_in: 3600 });
      const whoami = await fetch(`${url}/auth/whoami`, { headers: { authorization: `Bearer ${token.access_token}` } });
      expect(await whoami.json()).toMatchObject({ role: "tenant", tenantId, keyId: key.id, environment: "sandbox" });
    });
  }

  it("reads a wrong secret as an OAuth error: 401 invalid_client with a Basic challenge", async () => {
    for (const auth of [oauth.ClientSecretBasic(`${key.secret.slice(0, -2)}xx`), oauth.ClientSecretPost(`${key.secret.slice(0, -2)}xx`)]) {
      const response = await oauth.clientCredentialsGrantRequest(as, { client_id: key.id }, auth, new URLSearchParams(), insecure);
      const error = await oauth.processClientCredentialsResponse(as, { client_id: key.id }, response).catch((e: unknown) => e);
      // RFC 6749 §5.2 answers a refused client with a challenge: the library hands over the challenge and the response.
      expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const challenge = error as oauth.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause).toEqual([{ scheme: "basic", parameters: { realm: "passerelle" } }]);
      expect(await challenge.response.json()).toMatchObject({ error: "invalid_client", error_description: "Invalid client credentials" });
    }
  });

  it("reads an unsupported grant type as an OAuth error body", async () => {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      { client_id: key.id },
      oauth.ClientSecretBasic(key.secret),
      "password",
      { username: "u", password: "p" },
      insecure,
    );
    const error = await oauth.processGenericTokenEndpointResponse(as, { client_id: key.id }, response).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(error).toMatchObject({ status: 400, error: "unsupported_grant_type", error_description: "grant_type must be equal to client_credentials" });
  });
});

describe("POST /auth/token over plain HTTP", () => {
  it("decodes Basic credentials as RFC 6749 §2.3.1 says: form-urlencoded before base64", async () => {
    const encode = (value: string) => value.replaceAll("_", "%5F").replaceAll("-", "%2D");
    const response = await tokenRequest("grant_type=client_credentials", { authorization: basic(encode(key.id), encode(key.secret)) });
    expect(response.status).toBe(200);
    expect(response.headers.get("pragma")).toBe("no-cache");
    expect(Object.keys(await response.json()).sort()).toEqual(["access_token", "expires_in", "token_type"]);
  });

  it("refuses credentials in the header and in the body at once with invalid_request", async () => {
    const body = new URLSearchParams({ grant_type: "client_credentials", client_id: key.id, client_secret: key.secret }).toString();
    const response = await tokenRequest(body, { authorization: basic(key.id, key.secret) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_request", code: "validation_failed" });
  });

  it("answers a request without client authentication 401 invalid_client, with a challenge", async () => {
    const response = await tokenRequest("grant_type=client_credentials");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="passerelle"');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: "invalid_client", code: "unauthorized", statusCode: 401 });
    expect(body.requestId).toBe(response.headers.get("x-request-id")!);
  });

  it("keeps the contract's members beside the RFC's, and names a missing grant_type invalid_request", async () => {
    const response = await tokenRequest(new URLSearchParams({ client_id: key.id, client_secret: key.secret }).toString());
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      error: "invalid_request",
      error_description: "grant_type should not be empty",
      statusCode: 400,
      message: ["grant_type should not be empty"],
      code: "validation_failed",
      requestId: response.headers.get("x-request-id")!,
    });
  });

  it("answers a media type it does not take with invalid_request, its status unchanged", async () => {
    const response = await fetch(`${url}/auth/token`, { method: "POST", headers: { "content-type": "text/plain" }, body: "grant_type=client_credentials" });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: "invalid_request", code: "unsupported_media_type" });
  });

  it("keeps the contract's body on /trpc, where a tRPC client reads it in error.data.httpBody, and takes Basic there too", async () => {
    const refused = await fetch(`${url}/trpc/auth.token`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: basic(key.id, "psk_sandbox_wrong") },
      body: JSON.stringify({ grant_type: "client_credentials" }),
    });
    expect(refused.status).toBe(401);
    const envelope = (await refused.json()) as { error: { data: { httpStatus: number; httpBody: Record<string, unknown> } } };
    expect(envelope.error.data.httpStatus).toBe(401);
    expect(envelope.error.data.httpBody).toMatchObject({ error: "Unauthorized", code: "unauthorized", message: "Invalid client credentials" });
    const granted = await fetch(`${url}/trpc/auth.token`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: basic(key.id, key.secret) },
      body: JSON.stringify({ grant_type: "client_credentials" }),
    });
    expect(granted.status).toBe(200);
    expect(((await granted.json()) as { result: { data: { token_type: string } } }).result.data.token_type).toBe("Bearer");
  });
});
