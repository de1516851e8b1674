/**
 * The `bun patch` of postgres.js (patches/, package.json `patchedDependencies`), which the driver's fault
 * handling relies on (`test/db/postgres-js-driver-faults.test.ts` shows the behaviour on a real server):
 * - a connection that closed rejects its statement in flight even when the socket closed with an error
 *   (Bun reports a reset socket without an 'error' event: the statement waited forever);
 * - the closed session's last statement and error are cleared, so the next session's first statement does not
 *   fail with the old backend's error (porsager/postgres#1223);
 * - a session lost while it fetches the array types does not throw an unhandled rejection (the same issue);
 * - a statement given to a connection whose socket closed (the next one of a transaction whose backend died) is
 *   rejected `CONNECTION_CLOSED` rather than written to no socket: a `TypeError: null is not an object (evaluating
 *   'socket.write')`, thrown to the statement (a 500) or uncaught from a timer (porsager/postgres#1208, #1066);
 *   and what the closed socket did not send is dropped, not sent ahead of the next session's startup message.
 * These tests fail when the patch stops applying (a version bump, a lockfile without it).
 */
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };

const PATCHED_VERSION = "3.4.9";
const packageDir = dirname(Bun.resolveSync("postgres/package.json", import.meta.dir));

describe("the postgres.js patch", () => {
  it("is declared for the installed, pinned version", () => {
    expect(JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).version).toBe(PATCHED_VERSION);
    expect(packageJson.dependencies.postgres).toBe(PATCHED_VERSION);
    expect(Object.keys(packageJson.patchedDependencies)).toContain(`postgres@${PATCHED_VERSION}`);
  });

  it("is applied to the module Bun loads and to the CommonJS build", () => {
    for (const file of ["src/connection.js", "cjs/src/connection.js"]) {
      const text = readFileSync(join(packageDir, file), "utf8");
      expect(text).toContain(";(query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))");
      expect(text).not.toContain("!hadError && (query || sent.length)");
      expect(text).toContain("query = results = errorResponse = null");
      expect(text).toContain("needsTypes = options.fetch_types");
      expect(text).toContain("if (!socket)\n      return queryError(q, Errors.connection('CONNECTION_CLOSED', options))");
      expect(text).toContain("    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)");
    }
    expect(Bun.resolveSync("postgres", import.meta.dir)).toBe(join(packageDir, "src/index.js"));
  });
});
