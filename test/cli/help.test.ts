/**
 * `passerelle --help`, `-h`, `help` and each command's usage (test/support/cli.ts runs the command; the other
 * test/cli files hold its other topics).
 */
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cliFixtures, run } from "../support/cli.ts";
import { describeOnEmbeddedPass } from "../support/passes.ts";

// Each test starts `bun src/main.ts` up to eight times in turn, a second or so each, more on a busy machine
// (other test files run meanwhile).
setDefaultTimeout(60_000);

const { tempDir } = cliFixtures();

describe("passerelle (the command line)", () => {
  describeOnEmbeddedPass("--help, -h and usage errors", () => {
    const commands: [string[], string][] = [
      [["serve"], "usage: passerelle serve [--no-workers]"],
      [["worker"], "usage: passerelle worker"],
      [["migrate"], "usage: passerelle migrate"],
      [["token"], "usage: passerelle token --admin | --tenant <ten_…>"],
      [["sandbox"], "usage: passerelle sandbox [--port-a <n>]"],
      [["keys", "rotate"], "usage: passerelle keys rotate [--pause-ms <n>]"],
      [["prune"], "usage: passerelle prune [--batch-size <n>]"],
      [["openapi"], "usage: passerelle openapi"],
    ];

    it("passerelle --help, -h, help and no command at all print the list of commands and exit 0", async () => {
      for (const args of [["--help"], ["-h"], ["help"], []]) {
        const { stdout, stderr, code } = await run(args, {});
        expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: "" });
        expect(stdout).toStartWith("usage: passerelle <command> [options]\n");
        for (const [name] of commands) expect(stdout).toContain(`\n  ${name.join(" ")}`);
      }
    });

    for (const [name, usage] of commands) {
      it(`${name.join(" ")} --help and -h print its usage, exit 0 and do nothing else`, async () => {
        const dataDir = join(tempDir(), "data");
        // With a PORT that would stop anything that reads the configuration: the help never does.
        for (const flag of ["--help", "-h"]) {
          const { stdout, stderr, code } = await run([...name, flag], { DATA_DIR: dataDir, PORT: "abc" });
          expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
          expect(stdout).toStartWith(`${usage}`);
          expect(stdout.endsWith("\n")).toBe(true);
        }
        expect((await run(["help", ...name], {})).stdout).toStartWith(usage);
        expect(existsSync(dataDir)).toBe(false);
      });
    }
  });
});
