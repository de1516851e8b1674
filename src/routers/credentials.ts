/**
 * `/tenants/{tenant_id}/credentials/{provider}` (spec 2.5, contract §3): a tenant's provider B
 * credentials, and its optional own provider A account. Values go in once and come out masked only.
 */
import { z } from "zod";
import type { Environment } from "../config.ts";
import type { Provider } from "../db/schema.ts";
import {
  CREDENTIAL_VALUE_PATTERN,
  CREDENTIAL_VALUE_RULE,
  deactivateCredentials,
  listCredentials,
  listCredentialVersions,
  putCredentials,
  readableCredentialEnvironments,
} from "../services/credentials/provider-credentials.ts";
import { assertMayActIn, router, tenantOwnerProcedure } from "./trpc.ts";

const tenantId = z.string().min(1).max(64);
const environment = z.enum(["sandbox", "live"]);
const secretValue = z
  .string()
  .min(1)
  .max(1000)
  .regex(CREDENTIAL_VALUE_PATTERN, { error: CREDENTIAL_VALUE_RULE })
  .meta({ example: "value-from-the-provider-dashboard" });

const MASKED = "Masked: `…` and the last four characters of each value, or `…` alone for a value shorter than 12 characters";

const providerBSet = z
  .object({
    environment,
    masterKey: z.string(),
    privateKey: z.string(),
    token: z.string(),
    publicKey: z.string().nullable(),
    version: z.number().int(),
    updatedAt: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "ProviderBCredentials", description: MASKED });

const providerASet = z
  .object({ environment, secretKey: z.string(), webhookSecret: z.string(), version: z.number().int(), updatedAt: z.string().meta({ format: "date-time" }) })
  .meta({ id: "ProviderACredentials", description: MASKED });

const versionView = z
  .object({
    environment,
    version: z.number().int(),
    active: z.boolean().meta({ description: "True for the set payments are made with now" }),
    masked: z.record(z.string(), z.string().nullable()).meta({ description: MASKED }),
    createdAt: z.string().meta({ format: "date-time" }),
    deactivatedAt: z.string().nullable().meta({ format: "date-time", description: "When it was replaced or deactivated; null while active" }),
  })
  .meta({ id: "CredentialVersion" });

const READ_RULE = "A sandbox token sees the sandbox set only; an operator or a live token sees both environments.";

const deactivated = z.object({ environment, version: z.number().int(), deactivatedAt: z.string().meta({ format: "date-time" }) });

function credentialRoutes<S extends z.ZodObject, V extends z.ZodObject>(provider: Provider, fields: S, setView: V, label: string) {
  const base = `/tenants/{tenant_id}/credentials/${provider}` as const;
  return router({
    put: tenantOwnerProcedure
      .meta({
        openapi: {
          method: "PUT",
          path: base,
          tags: ["credentials"],
          summary: `Store ${label}`,
          description: "Replaces the active set of that environment; the old version stays sealed for payments made with it.",
        },
      })
      .input(fields.extend({ tenant_id: tenantId, environment }))
      .output(setView)
      .mutation(async ({ ctx, input }) => {
        // The generic schema hides the field types; they are the ones `fields` and `environment` declare.
        const {
          tenant_id: _tenant,
          environment: env,
          ...values
        } = input as unknown as { tenant_id: string; environment: Environment } & Record<string, string>;
        assertMayActIn(ctx.principal, ctx.tenant, env);
        return putCredentials(ctx.deps, { tenantId: ctx.tenant.id, provider, environment: env, fields: values }) as never;
      }),
    get: tenantOwnerProcedure
      .meta({
        openapi: {
          method: "GET",
          path: base,
          tags: ["credentials"],
          summary: `Read ${label}, masked`,
          description: READ_RULE,
        },
      })
      .input(z.object({ tenant_id: tenantId }))
      .output(z.object({ data: z.array(setView) }))
      .query(async ({ ctx }) => ({
        data: (await listCredentials(ctx.deps, ctx.tenant.id, provider, readableCredentialEnvironments(ctx.principal))) as never[],
      })),
    versions: tenantOwnerProcedure
      .meta({
        openapi: {
          method: "GET",
          path: `${base}/versions`,
          tags: ["credentials"],
          summary: `Every version of ${label}, masked`,
          description: `Newest first per environment, the active one and those it replaced: a payment's credentialVersion is one of them. ${READ_RULE}`,
        },
      })
      .input(z.object({ tenant_id: tenantId }))
      .output(z.object({ data: z.array(versionView) }))
      .query(async ({ ctx }) => ({ data: await listCredentialVersions(ctx.deps, ctx.tenant.id, provider, readableCredentialEnvironments(ctx.principal)) })),
    delete: tenantOwnerProcedure
      .meta({ openapi: { method: "DELETE", path: `${base}/{environment}`, tags: ["credentials"], summary: `Deactivate ${label} of an environment` } })
      .input(z.object({ tenant_id: tenantId, environment }))
      .output(deactivated)
      .mutation(({ ctx, input }) => {
        assertMayActIn(ctx.principal, ctx.tenant, input.environment);
        return deactivateCredentials(ctx.deps, { tenantId: ctx.tenant.id, provider, environment: input.environment });
      }),
  });
}

export const credentialsRouter = router({
  providerB: credentialRoutes(
    "providerB",
    z.object({ masterKey: secretValue, privateKey: secretValue, token: secretValue, publicKey: secretValue.optional() }),
    providerBSet,
    "provider B credentials",
  ),
  providerA: credentialRoutes(
    "providerA",
    z.object({ secretKey: secretValue, webhookSecret: secretValue }),
    providerASet,
    "the tenant's own provider A account",
  ),
});
