/**
 * Headless Chromium for the browser tests: Debian's `chromium` (installed by `.ci/run` when missing)
 * driven by `playwright-core`, which brings no browser of its own. Each launch gets a fresh, empty
 * profile directory that is removed when it closes.
 *
 * Without `/usr/bin/chromium` the browser suites are skipped, visibly: the describe name says so, and
 * bun lists their tests as skipped, so `bun install && bun run test` still passes on a machine that has
 * only Node and npm.
 */
import { describe } from "bun:test";
import { EMBEDDED_PASS_NOTE, onServerPass } from "./passes.ts";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Debian's Chromium; `CHROMIUM_PATH` points elsewhere (or at nothing, to see the skip). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const chromiumInstalled = existsSync(CHROMIUM_PATH);

/** What the describe name says when the suite is skipped. */
export const SKIPPED_NOTE = "SKIPPED: chromium not installed (.ci/run installs it)";

/**
 * The flags this machine needs: as root, no sandbox; no GPU; and no background traffic (the machine's
 * closed network refuses Chromium's own connections, many at a time, and slows every start).
 * `--headless` is also what Playwright adds; `--user-data-dir` is the launch's own fresh directory.
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * `describe` when Chromium is there; otherwise `describe.skip` under a name that says why. With
 * `embeddedPassOnly`, the suite runs on CI's embedded pass only (`passes.ts`).
 *
 * @example
 * ```ts
 * describeWithChromium("console in a browser", () => { it("clicks Approve", async () => { … }); });
 * ```
 */
export function describeWithChromium(name: string, body: () => void, options: { embeddedPassOnly?: boolean } = {}): void {
  if (!chromiumInstalled) describe.skip(`${name} — ${SKIPPED_NOTE}`, body);
  else if (options.embeddedPassOnly && onServerPass) describe.skip(`${name} — ${EMBEDDED_PASS_NOTE}`, body);
  else describe(name, body);
}

export interface Chromium {
  context: BrowserContext;
  /** The fresh profile directory (`--user-data-dir`). */
  userDataDir: string;
  newPage(): Promise<Page>;
  /** Closes the browser and removes its profile directory; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts headless Chromium on a fresh profile. Call `close()` in `afterAll`.
 *
 * @example
 * ```ts
 * const browser = await launchChromium();
 * const page = await browser.newPage();
 * await page.goto("http://127.0.0.1:3000/sandbox/providerA/console");
 * await browser.close();
 * ```
 */
export async function launchChromium(options: { timeoutMs?: number } = {}): Promise<Chromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), "passerelle-chromium-"));
  let context: BrowserContext;
  try {
    // A persistent context is how Playwright takes a --user-data-dir of ours (it refuses the flag in args).
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      chromiumSandbox: false,
      args: CHROMIUM_FLAGS,
      timeout: options.timeoutMs ?? 30_000,
      viewport: { width: 1200, height: 800 },
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(10_000);
  let closed = false;
  return {
    context,
    userDataDir,
    newPage: () => context.newPage(),
    async close() {
      if (closed) return;
      closed = true;
      await context.close().catch(() => {});
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** True when `bytes` start with the PNG signature and carry more than the signature. */
export function isPng(bytes: Uint8Array): boolean {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  return bytes.length > signature.length && signature.every((byte, index) => bytes[index] === byte);
}
