/**
 * The one-way provider port holds (issue 26 points 1 and 3), read from the source the way a reviewer would:
 * no file in a provider's folder imports `services/`, `db/`, `jobs/` or `routers/` (type-only imports included); the
 * port's own files import none of `services/`, `http/` or `jobs/` (the clock and timers a provider waits on are
 * `src/timers.ts`'s); and no code in `services/` names a default provider (comments and the examples shown to a
 * reader aside).
 */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "..", "src");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") || name.endsWith(".tsx") ? [path] : [];
  });
}

/** Every relative import or re-export of a file (static, dynamic, type-only), as a path under `src/`. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map(
    (match) => match[1] ?? match[2]!,
  );
  return specifiers.filter((s) => s.startsWith(".")).map((s) => relative(SRC, resolve(dirname(file), s)));
}

/** The source without its comments (good enough for this code base: no `//` or `/*` inside its strings is read as one). */
function codeOf(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:])\/\/.*$/gm, "$1");
}

const PROVIDERS = join(SRC, "providers");
const providerFolders = readdirSync(PROVIDERS).filter((name) => statSync(join(PROVIDERS, name)).isDirectory());

describe("the provider port", () => {
  it("has provider folders to check", () => {
    expect(providerFolders).toEqual(expect.arrayContaining(["providerA", "providerB"]));
  });

  it("no file in a provider's folder imports services/, db/, jobs/ or routers/", () => {
    const offending = providerFolders.flatMap((folder) =>
      tsFiles(join(PROVIDERS, folder)).flatMap((file) =>
        importsOf(file)
          .filter((target) => /^(services|db|jobs|routers)(\/|$)/.test(target))
          .map((target) => `${relative(SRC, file)} → ${target}`),
      ),
    );
    expect(offending).toEqual([]);
  });

  it("the port's own files import none of services/, http/ or jobs/", () => {
    const portFiles = readdirSync(PROVIDERS)
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(PROVIDERS, name));
    const offending = portFiles.flatMap((file) =>
      importsOf(file)
        .filter((target) => /^(services|http|jobs)(\/|$)/.test(target))
        .map((target) => `${relative(SRC, file)} → ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it("no code in services/ names a default provider", () => {
    const offending = tsFiles(join(SRC, "services")).flatMap((file) =>
      codeOf(file)
        .split("\n")
        // An example shown to a reader (the OpenAPI document's, an error's "like providerA") names one on purpose.
        .filter((line) => /\bprovider[AB]\b/.test(line) && !/\bexample\b|\blike provider[AB]\b/.test(line))
        .map((line) => `${relative(SRC, file)}: ${line.trim()}`),
    );
    expect(offending).toEqual([]);
  });

  it("catches what it looks for", () => {
    // The checks above would see an import into services/ and a provider named in code.
    expect(importsOf(join(SRC, "mod.ts")).some((target) => target.startsWith("services/"))).toBe(true);
    expect(codeOf(join(SRC, "config.ts"))).toMatch(/\bproviderA\b/);
  });
});
