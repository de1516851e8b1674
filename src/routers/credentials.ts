/**
 * `/tenants/{tenant_id}/credentials/{provider}` (spec 2.5, contract §3): a tenant's credentials at each
 * provider that declares some (`PaymentProvider.credentials`: provider B's keys, the tenant's optional own
 * provider A account, and any provider a gateway is built with). Values go in once and come out masked only.
 * `GET /credentials/providers` lists what each provider asks for, as the dashboard's Settings shows it.
 */
import { z } from "zod";
import type { Environment } from "../config.ts";
import type { PaymentProvider, ProviderCredentials } from "../providers/provider.ts";
import {
  CREDENTIAL_VALUE_PATTERN,
  CREDENTIAL_VALUE_RULE,
  deactivateCredentials,
  listCredentials,
  listCredentialVersions,
  putCredentials,
  readableCredentialEnvironments,
} from "../services/credentials/provider-credentials.ts";
import { assertMayActIn, authedProcedure, router, tenantOwnerProcedure } from "./trpc.ts";

const tenantId = z.string().min(1).max(64);
const environment = z.enum(["sandbox", "live"]);
const secretValue = z
  .string()
  .min(1)
  .max(1000)
  .regex(CREDENTIAL_VALUE_PATTERN, { error: CREDENTIAL_VALUE_RULE })
  .meta({ example: "value-from-the-provider-dashboard" });

const MASKED = "Masked: `…` and the last four characters of each value, or `…` alone for a value shorter than 12 characters";

/** The masked set of a provider, as its declared fields make it (`ProviderBCredentials`…). */
function maskedSetOf(provider: string, declared: ProviderCredentials) {
  const fields = Object.fromEntries(declared.fields.map((field) => [field.name, field.optional ? z.string().nullable() : z.string()]));
  return z
    .object({ environment, ...fields, version: z.number().int(), updatedAt: z.string().meta({ format: "date-time" }) })
    .meta({ id: `${provider[0]!.toUpperCase()}${provider.slice(1)}Credentials`, description: MASKED });
}

/** What a set of a provider takes: each declared field, an optional one may be left out. */
function fieldsOf(declared: ProviderCredentials) {
  return z.object(Object.fromEntries(declared.fields.map((field) => [field.name, field.optional ? secretValue.optional() : secretValue])));
}

const localized = z.object({ en: z.string(), fr: z.string() });
const providerCredentialsView = z
  .object({
    provider: z.string().meta({ example: "providerB" }),
    label: z.string().meta({ example: "Provider B" }),
    title: localized,
    hint: localized,
    fields: z.array(z.object({ name: z.string(), optional: z.boolean(), label: localized })),
  })
  .meta({ id: "ProviderCredentialFields" });

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

function credentialRoutes<S extends z.ZodObject, V extends z.ZodObject>(provider: string, fields: S, setView: V, label: string) {
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

/**
 * The credential routes of every provider in `providers` that declares credentials, under its name, and
 * the list of what each takes (`credentialFieldsRouterFor`).
 */
export function credentialsRouterFor(providers: readonly PaymentProvider[]) {
  return router(
    Object.fromEntries(
      providers.flatMap((provider) =>
        provider.credentials
          ? [
              [
                provider.name,
                credentialRoutes(provider.name, fieldsOf(provider.credentials), maskedSetOf(provider.name, provider.credentials), provider.credentials.summary),
              ],
            ]
          : [],
      ),
    ) as Record<string, ReturnType<typeof credentialRoutes<z.ZodObject, z.ZodObject>>>,
  );
}

/** `GET /credentials/providers`: what each provider of `providers` that declares credentials takes, for the dashboard's Settings. */
export function credentialFieldsRouterFor(providers: readonly PaymentProvider[]) {
  const declaring = providers.flatMap((provider) => (provider.credentials ? [{ provider, declared: provider.credentials }] : []));
  const listed = declaring.map(({ provider, declared }) => ({
    provider: provider.name,
    label: provider.label,
    title: declared.title,
    hint: declared.hint,
    fields: declared.fields.map((field) => ({ name: field.name, optional: field.optional ?? false, label: field.label })),
  }));
  return router({
    credentials: authedProcedure
      .meta({
        openapi: {
          method: "GET",
          path: "/credentials/providers",
          tags: ["credentials"],
          summary: "The credentials each provider takes",
          description: "Every provider this gateway runs whose credentials a tenant stores: its fields, in order, and how the dashboard names them.",
        },
      })
      .input(z.object({}))
      .output(z.object({ data: z.array(providerCredentialsView) }))
      .query(() => ({ data: listed })),
  });
}
