/**
 * The dashboard is typed by the gateway's router (issue 17 point 1): `bun run typecheck` covers
 * `dashboard/`, and a screen that calls a procedure with an input the router does not take, or reads a
 * field its output does not have, fails the type check.
 */
import { expect, it } from "bun:test";
import { describeOnEmbeddedPass } from "../../support/passes.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..", "..");

/**
 * Runs the project's tsc once, with the project's settings, over several files (name → source); answers its
 * exit code and each file's error lines (tsc prints `<path>(line,col): error …`).
 */
async function typecheck(sources: Record<string, string>): Promise<{ code: number; errors: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), "passerelle-dashboard-typed-"));
  try {
    const files = Object.keys(sources).map((name) => join(dir, `${name}.ts`));
    for (const [name, source] of Object.entries(sources)) await Bun.write(join(dir, `${name}.ts`), source);
    await Bun.write(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: join(root, "tsconfig.json"),
        // The project's type packages (bun's), found from the project rather than from the scratch folder.
        compilerOptions: { typeRoots: [join(root, "node_modules/@types")] },
        include: [],
        files,
      }),
    );
    const child = Bun.spawn([join(root, "node_modules/.bin/tsc"), "-p", join(dir, "tsconfig.json"), "--pretty", "false"], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    });
    const output = (await new Response(child.stdout).text()) + (await new Response(child.stderr).text());
    const lines = output.split("\n");
    const errors = Object.fromEntries(Object.keys(sources).map((name) => [name, lines.filter((line) => line.includes(`${name}.ts(`)).join("\n")]));
    return { code: await child.exited, errors };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const api = JSON.stringify(join(root, "dashboard/src/api.ts"));

describeOnEmbeddedPass("the dashboard's types", () => {
  it("are in the project's type check", async () => {
    const tsconfig = (await Bun.file(join(root, "tsconfig.json")).json()) as { include: string[] };
    expect(tsconfig.include).toContain("dashboard");
  });

  it("accept a call the router takes, and refuse a wrong input and a field the output does not have", async () => {
    // One tsc run over the three screens (each run loads the router's types: ~6 s alone).
    const { code, errors } = await typecheck({
      good: `import type { Api } from ${api};\nexport async function f(api: Api) { const page = await api.payments.list.query({ state: "succeeded", limit: 20 }); return page.data[0]?.amount; }\n`,
      wrongInput: `import type { Api } from ${api};\nexport const f = (api: Api) => api.payments.list.query({ state: "paid" });\n`,
      wrongField: `import type { Api } from ${api};\nexport const f = async (api: Api) => (await api.payments.get.query({ payment_id: "pay_1" })).amountt;\n`,
    });
    expect(code).not.toBe(0);
    expect(errors.good).toBe("");
    expect(errors.wrongInput).toContain("error TS");
    expect(errors.wrongField).toContain("amountt");
  }, 120_000);
});
