/**
 * The roles' matrix (issue 30 point 4), generated: the table of docs/team.md is read from the page, compared with
 * the router (every procedure, once) and the code's areas, then every procedure is called over REST as each of a
 * shop's four roles, the operator's two and the shop's API key — and over `/trpc` as a viewer — and each answer
 * must be what the table says: let through to the procedure, or refused for who the caller is.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import type { AnyTRPCProcedure } from "@trpc/server";
import { areaOf, PUBLIC_PROCEDURES } from "../../../src/routers/access.ts";
import { appRouter } from "../../../src/routers/app.ts";
import { roleMay } from "../../../src/services/people/roles.ts";
import type { Browser } from "../../support/people.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { type Route, restRequest, routesWithInputs, trpcRequest } from "../../support/route-inputs.ts";
import { type SmtpSink, startSmtpSink } from "../../support/smtp-sink.ts";
import { caller, type ShopRole, type StaffRole, signInAs, signInTeam } from "../../support/team.ts";

const CALLERS = ["owner", "developer", "finance", "viewer", "admin", "support", "API key"] as const;
type Caller = (typeof CALLERS)[number];

/** The table between the markers of docs/team.md: procedure → caller → let through (✓) or refused (—). */
function docsMatrix(): Map<string, Record<Caller, boolean>> {
  const page = readFileSync(joinPath(import.meta.dir, "../../../docs/team.md"), "utf8");
  const table = /<!-- roles-matrix:start -->\n([\s\S]*?)\n<!-- roles-matrix:end -->/.exec(page);
  if (!table) throw new Error("docs/team.md has no roles-matrix table");
  const [header, , ...rows] = table[1]!.trim().split("\n");
  const columns = header!.split("|").map((cell) => cell.trim());
  const matrix = new Map<string, Record<Caller, boolean>>();
  for (const row of rows) {
    const cells = row.split("|").map((cell) => cell.trim());
    const procedure = cells[columns.indexOf("procedure")]!.replaceAll("`", "");
    if (matrix.has(procedure)) throw new Error(`docs/team.md lists ${procedure} twice`);
    const allowed = {} as Record<Caller, boolean>;
    for (const who of CALLERS) {
      const cell = cells[columns.indexOf(who)];
      if (cell !== "✓" && cell !== "—") throw new Error(`docs/team.md: ${procedure} has "${cell}" for ${who}`);
      allowed[who] = cell === "✓";
    }
    matrix.set(procedure, allowed);
  }
  return matrix;
}

/** The docs' name of a procedure: a provider's credentials procedures are `credentials.*.<verb>`. */
const docsName = (path: string) => (/^credentials\.[^.]+\.[^.]+$/.test(path) ? `credentials.*.${path.split(".")[2]}` : path);

const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;

describe("the roles' table of docs/team.md", () => {
  it("names every procedure of the router but the public ones, once, and only those", () => {
    const matrix = docsMatrix();
    const named = new Set(
      Object.keys(procedures)
        .filter((path) => !PUBLIC_PROCEDURES.includes(path))
        .map(docsName),
    );
    expect([...matrix.keys()].sort()).toEqual([...named].sort());
    for (const path of PUBLIC_PROCEDURES) expect(Object.keys(procedures)).toContain(path);
  });

  it("says for each person's role what the code's areas say", () => {
    const disagreements: string[] = [];
    for (const [path, procedure] of Object.entries(procedures)) {
      if (PUBLIC_PROCEDURES.includes(path)) continue;
      const documented = docsMatrix().get(docsName(path))!;
      const area = areaOf(path);
      for (const role of ["owner", "developer", "finance", "viewer", "admin", "support"] as const) {
        const coded = area !== undefined && roleMay(role, area, procedure._def.type);
        if (coded !== documented[role]) disagreements.push(`${path} as ${role}: docs ${documented[role] ? "✓" : "—"}, code ${coded ? "✓" : "—"}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

let sink: SmtpSink;
let tg: TestGateway;
let base: string;
let shop: string;
let apiKey: string;
let people: Record<ShopRole | StaffRole, Browser>;

beforeAll(async () => {
  sink = await startSmtpSink();
  // The matrix makes some 800 calls on one shop: the shop's rate limit is not what is tested here.
  tg = await startTestGateway({ SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000", RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "100000" });
  base = (await tg.gateway.start()).url!;
  const admin = await tg.adminToken();
  const created = (await (await caller(base)("POST", "/tenants", { token: admin }, { name: "Boutique Matrice" })).json()) as {
    tenant: { id: string };
    apiKey: { secret: string };
  };
  shop = created.tenant.id;
  apiKey = created.apiKey.secret;
  people = await signInTeam(base, sink, admin, shop, "matrice.example");
}, 120_000);

afterAll(async () => {
  await tg?.close();
  await sink?.close();
}, 30_000);

/** The routes in a safe order: a person's sign-out last (it ends the session every other call uses). */
function orderedRoutes(): Route[] {
  const routes = routesWithInputs(shop).filter((route) => !PUBLIC_PROCEDURES.includes(route.procedurePath));
  const last = (route: Route) => (route.procedurePath === "me.signOut" ? 1 : 0);
  return routes.sort((a, b) => last(a) - last(b));
}

/** The input sent: a role a shop may give (an owner is the operator's to make), the rest as generated. */
function inputFor(route: Route): Record<string, unknown> {
  if (route.procedurePath === "people.invite" || route.procedurePath === "people.changeRole") return { ...route.input, role: "viewer" };
  return route.input;
}

// Every caller names the shop (the operator's staff must, as an admin token does; the permit calls require it of all).
function headersOf(who: Caller): Record<string, string> {
  if (who === "API key") return { authorization: `Bearer ${apiKey}`, "x-tenant-id": shop };
  return { cookie: people[who].cookie, "x-csrf-token": people[who].csrfToken, "x-tenant-id": shop };
}

/** Was the answer a refusal for who the caller is? A person's: the role's 403. A key's: 401 or 403. */
async function refused(who: Caller, response: Response): Promise<{ refused: boolean; status: number; message: string }> {
  const body = (await response.json().catch(() => null)) as { message?: unknown } | null;
  const message = typeof body?.message === "string" ? body.message : JSON.stringify(body?.message ?? "");
  const isRefusal = who === "API key" ? response.status === 401 || response.status === 403 : response.status === 403 && message.includes("role may not call");
  return { refused: isRefusal, status: response.status, message };
}

describe("every procedure, called as every role", () => {
  it("over REST, is let through or refused as the table says", async () => {
    const matrix = docsMatrix();
    const mismatches: string[] = [];
    for (const route of orderedRoutes()) {
      const documented = matrix.get(docsName(route.procedurePath))!;
      for (const who of CALLERS) {
        const { url, init } = restRequest(route, inputFor(route), headersOf(who));
        const answer = await refused(who, await fetch(`${base}${url}`, init));
        if (answer.refused === documented[who])
          mismatches.push(`${route.method} ${route.path} (${route.procedurePath}) as ${who}: ${answer.status} ${answer.message.slice(0, 120)}`);
        // A person's session must live through the whole run, and nothing may fail inside the gateway.
        if (who !== "API key" && answer.status === 401 && answer.message.includes("session has ended"))
          mismatches.push(`${route.procedurePath} as ${who}: the session ended`);
        if (answer.status === 500) mismatches.push(`${route.procedurePath} as ${who}: 500 ${answer.message}`);
      }
    }
    expect(mismatches).toEqual([]);
  }, 600_000);

  it("over /trpc, a viewer's and a finance member's calls are let through or refused alike", async () => {
    const matrix = docsMatrix();
    // The REST run signed everyone out at its end: new sessions.
    const browsers = { viewer: await signInAs(base, "viewer@matrice.example"), finance: await signInAs(base, "finance@matrice.example") };
    const mismatches: string[] = [];
    for (const route of orderedRoutes()) {
      for (const who of ["viewer", "finance"] as const) {
        const { url, init } = trpcRequest(route, inputFor(route), {
          cookie: browsers[who].cookie,
          "x-csrf-token": browsers[who].csrfToken,
          "x-tenant-id": shop,
        });
        const response = await fetch(`${base}${url}`, init);
        const body = (await response.json()) as { error?: { data: { httpStatus: number; httpBody: { message: unknown } } } };
        const isRefusal = body.error?.data.httpStatus === 403 && String(body.error.data.httpBody.message).includes("role may not call");
        if (isRefusal === matrix.get(docsName(route.procedurePath))![who])
          mismatches.push(`/trpc/${route.procedurePath} as ${who}: ${response.status} ${JSON.stringify(body.error?.data.httpBody.message ?? "")}`);
      }
    }
    expect(mismatches).toEqual([]);
  }, 600_000);
});
