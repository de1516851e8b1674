/**
 * The one router: the typed tRPC API at `/trpc`, and — through each procedure's `meta.openapi` — the REST
 * surface and the OpenAPI document.
 */
import { adminRouter } from "./admin.ts";
import { apiKeysRouter } from "./api-keys.ts";
import { auditLogRouter } from "./audit-log.ts";
import { authRouter } from "./auth.ts";
import { balanceRouter } from "./balance.ts";
import { credentialFieldsRouterFor, credentialsRouterFor } from "./credentials.ts";
import { eventsRouter } from "./events.ts";
import { meRouter } from "./me.ts";
import { paymentLinksRouter } from "./payment-links.ts";
import { payPageRouter } from "./pay-page.ts";
import { paymentsRouter } from "./payments.ts";
import { peopleRouter } from "./people.ts";
import { payoutsRouter } from "./payouts.ts";
import { permitSchedulesRouter } from "./permit-schedules.ts";
import { permitsRouter } from "./permits.ts";
import { providerARouter } from "./providerA.ts";
import { providerBRouter } from "./providerB.ts";
import { reportsRouter } from "./reports.ts";
import { routingRouter } from "./routing.ts";
import { tenantsRouter } from "./tenants.ts";
import { webhooksRouter } from "./webhooks.ts";
import { router } from "./trpc.ts";
import type { PaymentProvider } from "../providers/provider.ts";
import { DEFAULT_PROVIDERS } from "../providers/registry.ts";

/**
 * The router of a gateway running `providers`: the routes are the same for every gateway but the
 * credentials', which each provider that declares credentials adds under its name.
 */
export function createAppRouter(providers: readonly PaymentProvider[]) {
  return router({
    auth: authRouter,
    tenants: tenantsRouter,
    credentials: credentialsRouterFor(providers),
    providers: credentialFieldsRouterFor(providers),
    apiKeys: apiKeysRouter,
    people: peopleRouter,
    auditLog: auditLogRouter,
    me: meRouter,
    events: eventsRouter,
    webhooks: webhooksRouter,
    payments: paymentsRouter,
    paymentLinks: paymentLinksRouter,
    payPage: payPageRouter,
    providerA: providerARouter,
    providerB: providerBRouter,
    permits: permitsRouter,
    permitSchedules: permitSchedulesRouter,
    payouts: payoutsRouter,
    balance: balanceRouter,
    reports: reportsRouter,
    routing: routingRouter,
    admin: adminRouter,
  });
}

/** The router of a gateway running {@link DEFAULT_PROVIDERS}: the published document and the typed client's. */
export const appRouter = createAppRouter(DEFAULT_PROVIDERS);

/** The router's type, for `@trpc/client`. */
export type AppRouter = typeof appRouter;
