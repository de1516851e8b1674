/**
 * The `bun patch` of @trpc/server (patches/, package.json `patchedDependencies`): tRPC 11.25 ships object
 * spread compiled to a `_objectSpread2` helper (getOwnPropertyDescriptors + defineProperties) that Bun
 * runs slowly — a third of a procedure call. The patch makes the helper an `Object.assign`, and writes the
 * per-call middleware chain (`callRecursive`, the input merge, the output wrap) with native spread.
 * These tests fail when the patch stops applying (a version bump, a lockfile without it).
 */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { initTRPC } from "@trpc/server";
import { z } from "zod";
import packageJson from "../../package.json" with { type: "json" };

const PATCHED_VERSION = "11.25.2";
const packageDir = dirname(Bun.resolveSync("@trpc/server/package.json", import.meta.dir));
const distFiles = readdirSync(join(packageDir, "dist"), { recursive: true, encoding: "utf8" })
  .filter((name) => /\.(c|m)?js$/.test(name))
  .map((name) => ({ name, text: readFileSync(join(packageDir, "dist", name), "utf8") }));

/** The text of `function <name>(…) { … }` up to its closing brace at the start of a line. */
function functionBody(text: string, name: string): string {
  const start = text.indexOf(`function ${name}(`);
  if (start === -1) return "";
  return text.slice(start, text.indexOf("\n}\n", start));
}

describe("the @trpc/server patch", () => {
  it("is declared for the installed, pinned version", () => {
    const installed = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).version;
    expect(installed).toBe(PATCHED_VERSION);
    expect(packageJson.dependencies["@trpc/server"]).toBe(PATCHED_VERSION);
    expect(Object.keys(packageJson.patchedDependencies)).toContain(`@trpc/server@${PATCHED_VERSION}`);
  });

  it("replaces the descriptor-copying spread helper with Object.assign wherever it is defined", () => {
    const helpers = distFiles.filter((file) => file.text.includes("function _objectSpread2("));
    expect(helpers.map((file) => file.name).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/\.mjs$/), expect.stringMatching(/\.cjs$/)]));
    for (const file of helpers) {
      const body = functionBody(file.text, "_objectSpread2");
      expect(body).toContain("passerelle patch");
      expect(body).toContain("Object.assign(e, t)");
      expect(body).not.toContain("getOwnPropertyDescriptors");
    }
  });

  it("calls middlewares with native spread, not the helper", () => {
    const chains = distFiles.filter((file) => file.text.includes("async function callRecursive("));
    expect(chains.length).toBeGreaterThanOrEqual(2); // the ESM and CommonJS builds
    for (const file of chains) {
      const body = functionBody(file.text, "callRecursive");
      expect(body).toContain("passerelle patch");
      expect(body).not.toContain("_objectSpread2");
      expect(body).toContain("...opts.ctx, ...nextOpts.ctx");
    }
  });

  it("keeps tRPC's semantics: contexts merge down the chain, inputs merge, outputs pass through", async () => {
    const t = initTRPC.context<{ a: number }>().create();
    const withB = t.procedure.use(({ ctx, next }) => next({ ctx: { b: ctx.a + 1 } }));
    const router = t.router({
      sum: withB
        .use(({ ctx, next }) => next({ ctx: { c: ctx.b + 1 } }))
        .input(z.object({ x: z.number() }))
        .input(z.object({ y: z.number() }))
        .query(({ ctx, input }) => ({ ctx, total: ctx.a + ctx.b + ctx.c + input.x + input.y })),
    });
    const caller = t.createCallerFactory(router)({ a: 1 });
    expect(await caller.sum({ x: 10, y: 100 })).toEqual({ ctx: { a: 1, b: 2, c: 3 }, total: 116 });
  });
});
