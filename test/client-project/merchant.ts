/**
 * A merchant's program, written against `@passerelle/client` as it would be installed: one call of each
 * kind (a tRPC query, a tRPC mutation, an openapi-fetch request). test/e2e/operations/client-package.test.ts type-checks
 * this folder with its stock tsconfig.json and runs it under Node against a test gateway.
 */
import createClient from "openapi-fetch";
import { createPasserelleClient, type paths } from "@passerelle/client";

export interface Credentials {
  baseUrl: string;
  /** The API key's id and secret, as `POST /tenants` answered them. */
  keyId: string;
  keySecret: string;
}

export async function run({ baseUrl, keyId, keySecret }: Credentials) {
  // tRPC mutation, public: the API key for an access token (OAuth2 client credentials).
  const anonymous = createPasserelleClient({ baseUrl });
  const token = await anonymous.auth.token.mutate({ grant_type: "client_credentials", client_id: keyId, client_secret: keySecret });

  // tRPC query and mutation with the access token.
  const passerelle = createPasserelleClient({ baseUrl, token: token.access_token });
  const me = await passerelle.auth.whoami.query();
  const created = await passerelle.webhooks.create.mutate({ url: "https://merchant.example/passerelle", events: ["payment.completed"] });
  const read = await passerelle.webhooks.get.query({ webhook_id: created.id });

  // openapi-fetch on the REST surface, the secret API key itself as the bearer token.
  const rest = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${keySecret}` } });
  const found = await rest.GET("/webhooks/{webhook_id}", { params: { path: { webhook_id: created.id } } });
  const missing = await rest.GET("/payments/{payment_id}", { params: { path: { payment_id: "pay_01ARZ3NDEKTSV4RRFFQ69G5FAV" } } });

  return {
    tokenType: token.token_type,
    expiresIn: token.expires_in,
    whoami: { role: me.role, tenantId: me.tenantId, keyId: me.keyId },
    created: { id: created.id, url: created.url, events: created.events, secretPrefix: created.secret.slice(0, 6) },
    read: { id: read.id, url: read.url, enabled: read.enabled },
    rest: { status: found.response.status, url: found.data?.url, environment: found.data?.environment },
    missing: { status: missing.response.status, code: missing.error?.code },
  };
}
