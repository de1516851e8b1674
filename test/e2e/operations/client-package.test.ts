/**
 * `@passerelle/client` as a merchant uses it: test/client-project is copied to a folder of its own with
 * `@passerelle/client` (this repository's client/, built by `bun run client:build`) and `openapi-fetch` in its
 * node_modules, type-checked by `tsc` with its stock tsconfig.json (module NodeNext, strict) and with the one
 * `tsc --init` writes, then compiled and run under Node against a test gateway served over HTTP. (The packed
 * tarball, installed from the registry's packages alone into new projects, is scripts/check-client-package.sh's.)
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

const root = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
const tsc = join(root, "node_modules/.bin/tsc");

let project: string;
let tg: TestGateway;
let server: ReturnType<typeof Bun.serve>;

/** Runs a command to its end, without blocking this process (the gateway it may call is served here). */
async function run(command: string[], cwd: string) {
  const child = Bun.spawn(command, { cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, output: `${stdout}${stderr}` };
}

beforeAll(async () => {
  const build = await run([tsc, "-p", "client/tsconfig.json"], root);
  if (build.exitCode !== 0) throw new Error(`bun run client:build failed:\n${build.output}`);

  project = await mkdtemp(join(tmpdir(), "passerelle-merchant-"));
  await cp(join(root, "test/client-project"), project, { recursive: true });
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({ name: "merchant", private: true, type: "module", dependencies: { "@passerelle/client": `file:${root}/client`, "openapi-fetch": "*" } }),
  );
  await mkdir(join(project, "node_modules/@passerelle"), { recursive: true });
  await symlink(join(root, "client"), join(project, "node_modules/@passerelle/client"), "dir");
  await symlink(join(root, "node_modules/openapi-fetch"), join(project, "node_modules/openapi-fetch"), "dir");

  tg = await startTestGateway();
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: tg.gateway.fetch });
}, 60_000);

afterAll(async () => {
  await server?.stop(true);
  await tg?.close();
  if (project) await rm(project, { recursive: true, force: true });
}, 30_000);

describe("@passerelle/client in a merchant's project", () => {
  it("type-checks with a stock tsconfig (NodeNext, strict) from the built declarations alone, no gateway source", async () => {
    const checked = await run([tsc, "-p", ".", "--noEmit"], project);
    expect(checked.output).toBe("");
    expect(checked.exitCode).toBe(0);

    // What the compiler read: the client's built .d.ts files, and no file of the gateway's source.
    const files = (await run([tsc, "-p", ".", "--listFilesOnly"], project)).output.trim().split("\n");
    expect(files).toContain(join(root, "client/generated/router.d.ts"));
    expect(files).toContain(join(root, "client/generated/openapi.d.ts"));
    expect(files.filter((file) => file.startsWith(`${root}/src/`))).toEqual([]);
  }, 60_000);

  it("type-checks with the tsconfig.json `tsc --init` writes (exactOptionalPropertyTypes, noUncheckedIndexedAccess…), the README's example too", async () => {
    // The README's "Typed client" example, as a file of the project, as it is (no @types/node here).
    const readme = await Bun.file(join(root, "README.md")).text();
    const section = readme.slice(readme.indexOf("\n## Typed client\n"));
    const example = /^```ts\n([\s\S]*?)^```$/m.exec(section.slice(0, section.indexOf("\n## ", 1)))?.[1];
    expect(example).toContain('from "@passerelle/client"');
    await writeFile(join(project, "readme.ts"), example ?? "");

    const scratch = await mkdtemp(join(tmpdir(), "passerelle-tsc-init-"));
    try {
      expect((await run([tsc, "--init"], scratch)).exitCode).toBe(0);
      await cp(join(scratch, "tsconfig.json"), join(project, "tsconfig.init.json"));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    try {
      const checked = await run([tsc, "-p", "tsconfig.init.json", "--noEmit"], project);
      expect(checked.output).toBe("");
      expect(checked.exitCode).toBe(0);
    } finally {
      await rm(join(project, "readme.ts"), { force: true });
    }
  }, 60_000);

  it("refuses wrong calls of each kind: the types are the gateway's, not any", async () => {
    const lines = [
      'import createClient from "openapi-fetch";',
      'import { createPasserelleClient, type paths } from "@passerelle/client";',
      'const passerelle = createPasserelleClient({ baseUrl: "http://localhost:3000", token: "psk_x" });',
      'const rest = createClient<paths>({ baseUrl: "http://localhost:3000" });',
      "export async function wrong() {",
      '  await passerelle.webhooks.get.query({ webhook: "whe_1" }); // WRONG: a query input with a misspelt field',
      "  await passerelle.webhooks.create.mutate({ url: 42 }); // WRONG: a mutation input of the wrong type",
      "  const me = await passerelle.auth.whoami.query(); return me.tenant; // WRONG: an output field that does not exist",
      "  await passerelle.payments.refund.mutate({}); // WRONG: no such procedure",
      '  await rest.GET("/webhooks/{id}", {}); // WRONG: no such REST path',
      '  const found = await rest.GET("/payments/{payment_id}", { params: { path: { payment_id: "pay_x" } } }); return found.data?.amont; // WRONG: a misspelt response field',
      "}",
    ];
    const wrongLines = lines.flatMap((line, index) => (line.includes("// WRONG") ? [index + 1] : []));
    await writeFile(join(project, "wrong.ts"), `${lines.join("\n")}\n`);
    try {
      const checked = await run([tsc, "-p", ".", "--noEmit"], project);
      expect(checked.exitCode).not.toBe(0);
      const reported = new Set([...checked.output.matchAll(/^wrong\.ts\((\d+),\d+\): error/gm)].map((match) => Number(match[1])));
      expect([...reported].sort((a, b) => a - b)).toEqual(wrongLines);
      expect(checked.output).not.toContain("merchant.ts(");
    } finally {
      await rm(join(project, "wrong.ts"), { force: true });
    }
  }, 60_000);

  it("runs under Node against a gateway over HTTP: a tRPC mutation and query, and an openapi-fetch call", async () => {
    const compiled = await run([tsc, "-p", "."], project);
    expect(compiled.output).toBe("");
    expect(compiled.exitCode).toBe(0);

    // An operator makes the tenant and its first API key, as in the README.
    const created = await fetch(new URL("/tenants", server.url), {
      method: "POST",
      headers: { authorization: `Bearer ${await tg.adminToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Boutique Client" }),
    });
    expect(created.status).toBe(200);
    const { tenant, apiKey } = (await created.json()) as { tenant: { id: string }; apiKey: { id: string; secret: string } };

    const baseUrl = server.url.toString().replace(/\/$/, "");
    const node = await run(["node", "main.mjs", JSON.stringify({ baseUrl, keyId: apiKey.id, keySecret: apiKey.secret })], project);
    expect(node.exitCode).toBe(0);
    const answers = JSON.parse(node.output);
    expect(answers.tokenType).toBe("Bearer");
    expect(answers.expiresIn).toBeGreaterThan(0);
    expect(answers.whoami).toEqual({ role: "tenant", tenantId: tenant.id, keyId: apiKey.id });
    expect(answers.created).toMatchObject({ url: "https://merchant.example/passerelle", events: ["payment.completed"], secretPrefix: "whsec_" });
    expect(answers.created.id).toMatch(/^whe_/);
    expect(answers.read).toEqual({ id: answers.created.id, url: "https://merchant.example/passerelle", enabled: true });
    expect(answers.rest).toEqual({ status: 200, url: "https://merchant.example/passerelle", environment: "sandbox" });
    expect(answers.missing).toEqual({ status: 404, code: "not_found" });

    // The endpoint the tRPC mutation made is the tenant's, as the gateway's own REST surface lists it.
    const listed = await fetch(new URL("/webhooks", server.url), { headers: { authorization: `Bearer ${apiKey.secret}` } });
    expect(((await listed.json()) as { data: { id: string }[] }).data.map((endpoint) => endpoint.id)).toEqual([answers.created.id]);
  }, 60_000);
});
