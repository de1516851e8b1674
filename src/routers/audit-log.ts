/**
 * `GET /audit-log` (issue 30 point 5): a shop's own audit log — who changed what, when, from where, and how it
 * ended — newest first, in the contract's list shape. The operator reads every shop's at `GET /admin/audit-log`
 * (`admin.ts`). See docs/team.md.
 */
import { z } from "zod";
import { listAuditLog } from "../services/audit-log/mod.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { router, tenantProcedure } from "./trpc.ts";

const dateTime = z.string().meta({ format: "date-time" });

export const auditEntrySchema = z
  .object({
    id: z.string().meta({ description: "aud_…" }),
    at: dateTime,
    tenantId: z.string().nullable().meta({ description: "The shop the call acted on; null for an operator's call on no shop" }),
    environment: z.enum(["sandbox", "live"]),
    actorType: z.enum(["person", "key", "token", "operator"]),
    actorId: z.string().meta({ description: "A person's id (per_…), an API key's (key_…), or a token's subject" }),
    actorRole: z.string().nullable().meta({ description: "The person's role when they called (owner, developer, finance, viewer, admin, support)" }),
    action: z.string().meta({ description: "The procedure called", example: "payouts.refund" }),
    targets: z.array(z.string()).meta({ description: "The ids the call named or made" }),
    input: z.record(z.string(), z.unknown()).nullable().meta({ description: "What the call was given, every secret shown as [redacted]" }),
    changes: z
      .record(z.string(), z.object({ before: z.unknown(), after: z.unknown() }))
      .nullable()
      .meta({ description: "Fields changed, before and after, where the call tells them (a role change)" }),
    outcome: z.string().meta({ description: "success, or the error's code (forbidden for a refusal by role, not_found…)" }),
    address: z.string().meta({ description: "The caller's address (local for an in-process call)" }),
    userAgent: z.string().nullable(),
    requestId: z.string(),
    chain: z.string().meta({ description: "The chain the entry belongs to: <tenant or operator>:<environment>" }),
    seq: z.number().int().meta({ description: "Its place in the chain, from 1" }),
    prevHash: z.string().meta({ description: "SHA-256 (hex) of the entry before it in the chain; empty for the first" }),
    hash: z.string().meta({
      description:
        "Version 2: SHA-256 (hex) of prevHash followed by the SHA-256 (hex) of the canonical JSON (keys sorted) of every field but seq, prevHash, hash and hashVersion. Version 1: SHA-256 (hex) of the canonical JSON of every field but hash and hashVersion",
    }),
    hashVersion: z
      .union([z.literal(1), z.literal(2)])
      .meta({ description: "How hash is made: 1 for entries written before the chain's links were made by the database, 2 since" }),
  })
  .meta({ id: "AuditEntry" });

export const auditEntryListSchema = pageOf(auditEntrySchema).meta({ id: "AuditEntryList" });

export const auditFilters = {
  ...pageQuery,
  actor: z.string().min(1).max(200).optional().meta({ description: "Only this person's (per_…), API key's (key_…) or token subject's calls" }),
  action: z.string().min(1).max(100).optional().meta({ description: "Only this procedure's calls", example: "payouts.refund" }),
  target: z.string().min(1).max(200).optional().meta({ description: "Only the calls that named or made this id" }),
  outcome: z.string().min(1).max(50).optional().meta({ description: "success, or an error code such as forbidden" }),
  since: z.iso.datetime({ offset: true }).optional().meta({ description: "At or after this time" }),
  until: z.iso.datetime({ offset: true }).optional().meta({ description: "Before this time" }),
};

export const auditLogRouter = router({
  list: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/audit-log",
        tags: ["people"],
        summary: "The shop's audit log",
        description:
          "Every call that changed something (or tried to) on the shop, by a person, an API key or the operator: who, what, when, from where, " +
          "and the outcome, refusals by role included. Newest first; both environments. The shop's owner, its token, or the operator's staff.",
      },
    })
    .input(z.object(auditFilters))
    .output(auditEntryListSchema)
    .query(({ ctx, input }) => listAuditLog(ctx.deps, { ...input, tenantId: ctx.tenant.id })),
});
