#!/usr/bin/env bun
/**
 * `bun run test`: runs `bun test` and ends with the plain line `N passed, N failed` (CI reads that line,
 * not bun's own summary), keeping bun's exit code. Arguments are passed on to `bun test`.
 */
export {};

// Tests that start servers, workers or a PGlite snapshot get 15 s each unless they say otherwise
// (bun's default is 5 s; bunfig.toml has no setting for it).
const child = Bun.spawn(["bun", "test", "--timeout", "15000", ...process.argv.slice(2)], {
  stdout: "inherit",
  stderr: "pipe",
  stdin: "inherit",
  env: process.env,
});

let passed = 0;
let failed = 0;
let skipped = 0;
const decoder = new TextDecoder();
let pending = "";
for await (const chunk of child.stderr) {
  const text = decoder.decode(chunk, { stream: true });
  process.stderr.write(text);
  pending += text;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const match = /^\s*(\d+) (pass|fail|skip)\s*$/.exec(line);
    if (!match) continue;
    if (match[2] === "pass") passed = Number(match[1]);
    else if (match[2] === "fail") failed = Number(match[1]);
    else skipped = Number(match[1]);
  }
}
const code = await child.exited;
const summary = `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
process.stdout.write(`\n${summary}\n`);
process.exit(code);
