/**
 * CI runs the suite twice: on the embedded drivers, then on the real servers (`DATABASE_URL`, `REDIS_URL`).
 * A suite whose subject does not depend on the drivers — the README run against the quick start's own
 * embedded gateway, the dashboard's type check, its screens in a browser — runs on the embedded pass only,
 * and says so (bun lists it as skipped, under this note) on the server pass. It keeps `.ci/run` under its
 * time budget; everything that reads or writes the database or Redis runs on both passes.
 */
import { describe } from "bun:test";

/** True on the real-server pass. */
export const onServerPass = Boolean(process.env.DATABASE_URL);

/** What the describe name says on the server pass. */
export const EMBEDDED_PASS_NOTE = "SKIPPED on the real-server pass: it does not depend on the drivers; the embedded pass runs it";

/** `describe` on the embedded pass; `describe.skip` under a name that says why on the server pass. */
export function describeOnEmbeddedPass(name: string, body: () => void): void {
  if (onServerPass) describe.skip(`${name} — ${EMBEDDED_PASS_NOTE}`, body);
  else describe(name, body);
}
