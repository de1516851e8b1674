/**
 * The audit log (issue 30 point 5): who changed what, when, from where, and how it ended — append-only, each
 * entry chained to the one before it in its chain. See docs/team.md.
 *
 * @module
 */
export { type AuditEntry, appendAuditEntry, canonicalJson, chainOf, hashEntry, type NewAuditEntry } from "./entry.ts";
export { type AuditLogQuery, listAuditLog } from "./list.ts";
export { auditLogChainBreaks, type ChainBreak } from "./chain.ts";
export { REDACTED, redactInput, targetsOf } from "./redact.ts";
