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

/** Runs the project's tsc on one file, with the project's settings; answers its exit code and output. */
async function typecheck(source: string): Promise<{ code: number; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), "passerelle-dashboard-typed-"));
  try {
    await Bun.write(join(dir, "screen.ts"), source);
    await Bun.write(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: join(root, "tsconfig.json"),
        // The project's type packages (bun's), found from the project rather than from the scratch folder.
        compilerOptions: { typeRoots: [join(root, "node_modules/@types")] },
        include: [],
        files: [join(dir, "screen.ts")],
      }),
    );
    const child = Bun.spawn([join(root, "node_modules/.bin/tsc"), "-p", join(dir, "tsconfig.json")], { cwd: root, stdout: "pipe", stderr: "pipe" });
    const output = (await new Response(child.stdout).text()) + (await new Response(child.stderr).text());
    return { code: await child.exited, output };
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
    const good = await typecheck(
      `import type { Api } from ${api};\nexport async function f(api: Api) { const page = await api.payments.list.query({ state: "succeeded", limit: 20 }); return page.data[0]?.amount; }\n`,
    );
    expect(good.output).toBe("");
    expect(good.code).toBe(0);

    const wrongInput = await typecheck(`import type { Api } from ${api};\nexport const f = (api: Api) => api.payments.list.query({ state: "paid" });\n`);
    expect(wrongInput.code).not.toBe(0);
    expect(wrongInput.output).toContain("screen.ts");

    const wrongField = await typecheck(
      `import type { Api } from ${api};\nexport const f = async (api: Api) => (await api.payments.get.query({ payment_id: "pay_1" })).amountt;\n`,
    );
    expect(wrongField.code).not.toBe(0);
    expect(wrongField.output).toContain("amountt");
    // Three runs of tsc over the router's types: ~18 s alone, three times that with other test files running.
  }, 120_000);
});
