/**
 * What the authentication step of `trpc.ts` does once it knows who is calling (issue 30 points 4 and 5), for
 * every procedure base, so for `/trpc` and REST alike: a person's role is checked against the procedure's area
 * (`access.ts`), and a call that changes something — by a person, an API key's token, any token — is written to
 * the audit log with its outcome, refusals included.
 *
 * The entry is written once the call's outcome is known, in a statement of its own or shared with the entries of
 * the shop's calls that ended meanwhile (`services/audit-log`, "One statement", "Group commit"):
 * the change and its entry are not one transaction, because the append locks its chain's head row, which would
 * otherwise be held across the call's own work (its provider calls included), serialising a shop's payments. A process
 * killed between the change's commit and the entry's write loses that entry (docs/team.md says so).
 *
 * @module
 */
import type { Environment } from "../config.ts";
import { ForbiddenError } from "../errors.ts";
import { mapError } from "../map-error.ts";
import { hostileTextMessages } from "../http/hostile-text.ts";
import type { RequestInfo } from "../http/request-info.ts";
import { appendAuditEntry, type NewAuditEntry, redactInput, targetsOf } from "../services/audit-log/mod.ts";
import type { Principal } from "../services/auth/tokens.ts";
import type { Deps } from "../services/deps.ts";
import { roleMay } from "../services/people/roles.ts";
import { areaOf, MUTATIONS_THAT_CHANGE_NOTHING } from "./access.ts";

type CallType = "query" | "mutation" | "subscription";

/** The part of a procedure's context the guard reads (`trpc.ts`'s `Context`). */
interface GuardContext {
  deps: Deps;
  headers: Headers;
  request: RequestInfo;
}

/** Where a call acts, as far as the base resolved it before the call went on or was refused. */
export interface CallScope {
  tenantId: string | null;
  environment: Environment;
}

/**
 * Refuses a person whose role may not call the procedure at `path` (403 `forbidden`, saying the role). Programs
 * (tokens, API keys) are not checked here: their bases say what they may do, as before people had roles.
 */
export function authorize(principal: Principal, path: string, type: CallType): void {
  const person = principal.person;
  if (!person) return;
  const area = areaOf(path);
  if (!area || !roleMay(person.role, area, type))
    throw new ForbiddenError(`The ${person.role} role may not call ${path}: ask the shop's owner (or the operator) for a role that may`);
}

/** Is a call at `path` written to the audit log? Every mutation that may change something. */
export function isAudited(path: string, type: CallType): boolean {
  return type === "mutation" && !MUTATIONS_THAT_CHANGE_NOTHING.has(path);
}

// A refusal by the rate limit changed nothing and let nobody in: not written, so that a flood of 429s does not
// become a flood of entries.
const NOT_RECORDED_OUTCOMES = new Set(["rate_limited"]);

/**
 * Runs the rest of a call (`proceed`: the base's own checks, the role's, then the procedure) and, for a call that
 * changes something, appends its audit log entry: success, or the error's code — thrown by the base (a refusal)
 * or answered by the procedure.
 */
export async function guardCall<R extends { ok: boolean }>(
  ctx: GuardContext,
  principal: Principal,
  call: { path: string; type: CallType; rawInput: unknown },
  scope: CallScope,
  proceed: () => Promise<R>,
): Promise<R> {
  if (!isAudited(call.path, call.type)) return proceed();
  let result: R;
  try {
    result = await proceed();
  } catch (error) {
    await record(ctx, principal, call, scope, { error });
    throw error;
  }
  const answer = result as R & { data?: unknown; error?: unknown };
  await record(ctx, principal, call, scope, answer.ok ? { output: answer.data } : { error: answer.error });
  return result;
}

async function record(
  ctx: GuardContext,
  principal: Principal,
  call: { path: string; type: CallType; rawInput: unknown },
  scope: CallScope,
  outcome: { output?: unknown; error?: unknown },
): Promise<void> {
  const code = "error" in outcome ? mapError(outcome.error, ctx.request.requestId).body.code : "success";
  if (NOT_RECORDED_OUTCOMES.has(code)) return;
  // Text PostgreSQL cannot store (a NUL, an unpaired surrogate) was refused with 400: the input is not kept.
  const storable = hostileTextMessages(call.rawInput).length === 0;
  const entry: NewAuditEntry = {
    tenantId: scope.tenantId,
    environment: scope.environment,
    ...actorOf(principal),
    action: call.path,
    targets: storable ? targetsOf(call.rawInput, outcome.output) : [],
    input: storable ? redactInput(call.rawInput, areaOf(call.path) === "credentials") : null,
    changes: ctx.request.auditChanges ?? null,
    outcome: code,
    address: ctx.request.clientAddress ?? "local",
    userAgent: ctx.headers.get("user-agent"),
    requestId: ctx.request.requestId,
  };
  try {
    await appendAuditEntry(ctx.deps, entry);
  } catch (error) {
    // The call's outcome stands (a change is committed): the missing entry is logged, never the input.
    ctx.deps.logger.error({ err: error, action: call.path, requestId: ctx.request.requestId }, "audit log entry not written");
  }
}

function actorOf(principal: Principal): Pick<NewAuditEntry, "actorType" | "actorId" | "actorRole"> {
  if (principal.person) return { actorType: "person", actorId: principal.person.personId, actorRole: principal.person.role };
  if (principal.keyId) return { actorType: "key", actorId: principal.keyId, actorRole: null };
  if (principal.role === "admin") return { actorType: "operator", actorId: principal.sub, actorRole: "admin" };
  return { actorType: "token", actorId: principal.sub, actorRole: null };
}
