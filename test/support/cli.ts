/**
 * What the command line's tests (test/cli/*.test.ts) share: `bun src/main.ts` run to its end or read line by
 * line, temporary folders removed after the file, and a database for the CLI to work on. The tests are split
 * by topic into several files so that CI's parallel workers run them side by side; each `bun src/main.ts` is
 * a second or so, more on a busy machine.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DatabaseHandle } from "../../src/db/connect.ts";
import { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } from "../../src/db/pglite-snapshot.ts";
import { createScratchDatabase } from "./db.ts";
import { cleanEnv } from "./spawned-gateway.ts";

/** The `passerelle` command's entry point. */
export const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/** Runs `passerelle <args>` to its end with only `env` (and PATH, HOME) set. */
export async function run(args: string[], env: Record<string, string>, cwd?: string) {
  const child = Bun.spawn(["bun", MAIN, ...args], { env: cleanEnv(env), stdout: "pipe", stderr: "pipe", ...(cwd ? { cwd } : {}) });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

/** Reads a child's output line by line as it comes: `waitFor` a line, then the `rest` once it ends. */
export function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const lines: string[] = [];
  let buffer = "";
  let ended = false;
  const readMore = async () => {
    const { done, value } = await reader.read();
    if (done) ended = true;
    buffer += decoder.decode(value, { stream: !done });
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts);
    if (ended && buffer) lines.push(buffer);
  };
  return {
    lines,
    /** The first line (from the start) that `match` accepts, or undefined when the stream ends without one. */
    async waitFor(match: (line: string) => boolean): Promise<string | undefined> {
      for (;;) {
        const found = lines.find(match);
        if (found !== undefined || ended) return found;
        await readMore();
      }
    },
    /** Every line, once the stream has ended. */
    async rest(): Promise<string[]> {
      while (!ended) await readMore();
      return lines;
    },
  };
}

/**
 * A test file's temporary folders, removed after the file (call it once, at the file's top level):
 * `tempDir()` makes one; `cliDatabase()` makes a database for the CLI to work on, on the driver the tests run
 * on — a scratch database on the server `DATABASE_URL` names, or a PGlite data directory. Its `env` points the
 * CLI at it; `open` opens it here.
 */
export function cliFixtures() {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "passerelle-cli-"));
    dirs.push(dir);
    return dir;
  }

  async function cliDatabase(options: { snapshot: boolean } = { snapshot: true }) {
    const serverUrl = process.env.DATABASE_URL;
    if (serverUrl) {
      const scratch = await createScratchDatabase(serverUrl);
      afterAll(() => scratch.drop());
      return {
        env: { DATABASE_URL: scratch.url } as Record<string, string>,
        open: (): Promise<DatabaseHandle> => openDatabase({ driver: "postgres", url: scratch.url }),
      };
    }
    const dataDir = tempDir();
    return {
      env: { DATA_DIR: dataDir } as Record<string, string>,
      open: (): Promise<DatabaseHandle> =>
        openDatabase({
          driver: "pglite",
          dataDir: join(dataDir, "pglite"),
          ...(options.snapshot ? { snapshot: () => loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR) } : {}),
        }),
    };
  }

  return { tempDir, cliDatabase };
}
