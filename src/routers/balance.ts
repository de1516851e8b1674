/**
 * `/balance` and `/reports/…` (issue 15): the tenant's ledger and the accountant's reconciliation. A tenant
 * reads its own; an operator names a tenant with `x-tenant-id`, or reads every tenant's reconciliation at
 * `/admin/reports/reconciliation`.
 */
import { z } from "zod";
import { balanceSchema, getBalance, ledgerEntrySchema, listLedgerEntries } from "../services/ledger/balance.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { CSV_NOTE, csvListOf } from "../services/reports/csv-list.ts";
import {
  adminReconciliationReport,
  adminReconciliationSchema,
  differenceSchema,
  reconciliationCsv,
  reconciliationQuery,
  reconciliationReport,
  reconciliationSchema,
} from "../services/reports/reconciliation.ts";
import { listDifferences } from "../services/reports/difference-list.ts";
import { adminProcedure, router, tenantProcedure } from "./trpc.ts";

const csvNote = " Send `Accept: text/csv` for the same report as CSV (a `section` column tells totals from differences).";

export const balanceRouter = router({
  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/balance",
        tags: ["balance"],
        summary: "The tenant's balance",
        description:
          "Per holding account — where the money sits: the service's pooled account at a provider (pooled:<provider>) or the tenant's own " +
          "account there (own:<provider>) — and currency, in the token's environment: available (collected there, less payouts and refunds " +
          "sent or on their way from there) and pending (payouts and refunds not final yet), from the tenant's double-entry ledger; beside an " +
          "own account, what its provider reports; and the totals per currency. A payout or refund from a pooled account spends only what " +
          "the tenant holds on that account.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({}))
    .output(balanceSchema)
    .query(({ ctx }) => getBalance(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment })),

  entries: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/balance/entries",
        tags: ["balance"],
        summary: "The ledger's entries",
        description: `Newest first: each movement (a payment collected, a payout or refund reserved, sent, released, a fee) as legs that sum to zero.${CSV_NOTE}`,
      },
      tenantHeader: "accepted",
      csvList: csvListOf(ledgerEntrySchema),
    })
    .input(
      z.object({ ...pageQuery, subjectId: z.string().min(1).max(64).optional().meta({ description: "Only the entries of this payment, payout or refund" }) }),
    )
    .output(pageOf(ledgerEntrySchema).meta({ id: "LedgerEntryList" }))
    .query(({ ctx, input }) =>
      listLedgerEntries(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        limit: input.limit,
        ...(input.cursor !== undefined && { cursor: input.cursor }),
        ...(input.subjectId !== undefined && { subjectId: input.subjectId }),
      }),
    ),

  reconciliation: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/reports/reconciliation",
        tags: ["reports"],
        summary: "Reconciliation of the tenant's payments, refunds and payouts",
        description:
          "Per provider, operator, state and currency: counts and totals of what was created in [from, to); and the records whose " +
          "provider state differs from ours, as the sync schedule found them." +
          csvNote,
      },
      tenantHeader: "accepted",
      csv: reconciliationCsv,
    })
    .input(z.object(reconciliationQuery))
    .output(reconciliationSchema)
    .query(({ ctx, input }) => reconciliationReport(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, ...input })),

  differences: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/reports/reconciliation/differences",
        tags: ["reports"],
        summary: "The tenant's reconciliation differences, paged",
        description:
          "The records whose provider state differs from ours (the report's `differences`), last seen in [from, to) (default the last " +
          "30 days), newest sighting first, in the list shape every list has: `limit` and `cursor`, `{ data, nextCursor }`.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ ...reconciliationQuery, ...pageQuery }))
    .output(pageOf(differenceSchema))
    .query(({ ctx, input }) => listDifferences(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, ...input })),

  allDifferences: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/reports/reconciliation/differences",
        tags: ["admin"],
        summary: "Every tenant's reconciliation differences, paged",
        description:
          "As GET /reports/reconciliation/differences, for every tenant (or the one named by tenantId), in the token's environment or " +
          "x-environment. An admin token or the operator's staff.",
        requestHeaders: z.object({
          "x-environment": z.enum(["sandbox", "live"]).optional().meta({ description: "The environment to list (default: the token's)" }),
        }),
      },
    })
    .input(z.object({ ...reconciliationQuery, ...pageQuery, tenantId: z.string().min(1).max(64).optional() }))
    .output(pageOf(differenceSchema))
    .query(({ ctx, input }) => {
      const requested = ctx.headers.get("x-environment");
      const environment = requested === "live" || requested === "sandbox" ? requested : ctx.principal.environment;
      return listDifferences(ctx.deps, { environment, ...input });
    }),

  allReconciliation: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/reports/reconciliation",
        tags: ["admin"],
        summary: "Reconciliation across every tenant",
        description:
          "As GET /reports/reconciliation, for every tenant (or the one named by tenantId), in the token's environment or x-environment; " +
          "and the service's pooled accounts: per provider and currency, what the ledger says the service holds there for all tenants, " +
          `what the provider reports, and the difference. Admin token only.${csvNote}`,
        requestHeaders: z.object({
          "x-environment": z.enum(["sandbox", "live"]).optional().meta({ description: "The environment to report on (default: the token's)" }),
        }),
      },
      csv: reconciliationCsv,
    })
    .input(z.object({ ...reconciliationQuery, tenantId: z.string().min(1).max(64).optional() }))
    .output(adminReconciliationSchema)
    .query(({ ctx, input }) => {
      const requested = ctx.headers.get("x-environment");
      const environment = requested === "live" || requested === "sandbox" ? requested : ctx.principal.environment;
      return adminReconciliationReport(ctx.deps, { environment, ...input });
    }),
});
