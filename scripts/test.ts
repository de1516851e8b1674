#!/usr/bin/env bun
/**
 * `bun run test`: runs `bun test` and ends with the plain line `N passed, N failed` (CI reads that line,
 * not bun's own summary), keeping bun's exit code. Arguments are passed on to `bun test`.
 */
export {};

// Tests that start servers, workers or a PGlite snapshot get 15 s each unless they say otherwise
// (bun's default is 5 s; bunfig.toml has no setting for it).
//
// Files run in TEST_PARALLEL worker processes (default 4; 1 runs them one after the other in one process).
// Most of a file's time is spent waiting on servers, timers and subprocesses, so four workers keep two cores
// busy: the suite takes about half the time. Every file opens its own database, key prefix and ports, so
// files never see each other.
const args = process.argv.slice(2);
const workers = Number(process.env.TEST_PARALLEL ?? 4);
if (!Number.isInteger(workers) || workers < 1) throw new Error(`TEST_PARALLEL must be a whole number of at least 1, not ${process.env.TEST_PARALLEL}`);
// `--no-isolate`: a worker loads the gateway's modules and compiles PGlite's WebAssembly once, not once per file
// (half a second of CPU and more per file; the embedded pass went from 366 s to 223 s, the real-server pass from
// 366 s to 294 s). Files still never share a database, key prefix or port; what a file leaves in a module's
// state (a wrapped `fetch`, a warmed cache keyed by its own ids) is what the next file on that worker finds.
// `--isolate` (or TEST_ISOLATE=1) runs each file in a fresh registry, as before.
const isolationChosen = process.env.TEST_ISOLATE === "1" || args.some((arg) => arg === "--isolate" || arg === "--no-isolate");
const sharing = isolationChosen ? [] : ["--no-isolate"];
const parallel = workers > 1 && !args.some((arg) => arg.startsWith("--parallel")) ? [`--parallel=${workers}`, ...sharing] : [];
// test/timings.json (each file's duration, the longer of the two CI passes) only orders the work: the slowest
// files start first, so the run does not end waiting on one long file started last. A file it does not name
// still runs. Refresh it with `bun run test --timings=test/timings.json --update-timings`.
const timings = parallel.length > 0 && !args.some((arg) => arg.startsWith("--timings")) ? ["--timings=test/timings.json"] : [];
const child = Bun.spawn(["bun", "test", "--timeout", "15000", ...parallel, ...timings, ...args], {
  stdout: "inherit",
  stderr: "pipe",
  stdin: "inherit",
  env: process.env,
});

let passed = 0;
let failed = 0;
let skipped = 0;
// The failed tests' lines, printed again under the summary: a CI log shown only in part still names them.
const failures: string[] = [];
// For CI's failures file, each failed test's line with what bun printed for it just before (the expectation that
// failed, its stack, the end of what the test wrote to stderr): at most DETAIL_LINES lines of each.
const DETAIL_LINES = 40;
const details = new Map<string, string[]>();
let recent: string[] = [];
const decoder = new TextDecoder();
let pending = "";
for await (const chunk of child.stderr) {
  const text = decoder.decode(chunk, { stream: true });
  process.stderr.write(text);
  pending += text;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    // bun prints a failed test's line twice (as it ends, and again in its summary): keep one.
    if (line.startsWith("(fail)") && !failures.includes(line)) {
      failures.push(line);
      details.set(line, recent.slice(-DETAIL_LINES));
    }
    // What comes after a test's line (or a file's name) is the next test's.
    if (/^\((pass|fail|skip|todo)\)/.test(line) || /\.test\.[jt]sx?:$/.test(line)) recent = [];
    else if (line.trim() !== "") {
      recent.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (recent.length > 2 * DETAIL_LINES) recent = recent.slice(-DETAIL_LINES);
    }
    const match = /^\s*(\d+) (pass|fail|skip)\s*$/.exec(line);
    if (!match) continue;
    if (match[2] === "pass") passed = Number(match[1]);
    else if (match[2] === "fail") failed = Number(match[1]);
    else skipped = Number(match[1]);
  }
}
const code = await child.exited;
const summary = `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
if (failures.length > 0) process.stdout.write(`\nfailed:\n${failures.join("\n")}\n`);
// CI names a file per pass (TEST_FAILURES_FILE) and prints them all again at its very end.
if (process.env.TEST_FAILURES_FILE) {
  const block = (line: string) => [line, ...(details.get(line) ?? []).map((detail) => `    ${detail}`)].join("\n");
  await Bun.write(process.env.TEST_FAILURES_FILE, failures.map((line) => `${block(line)}\n`).join(""));
}
process.stdout.write(`\n${summary}\n`);
process.exit(code);
