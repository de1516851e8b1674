/**
 * The command line refusing what it cannot do, in one line and an exit status: unknown options and arguments
 * (2, with the usage), bad configuration and an unreachable database (1); and `token --admin`'s one line
 * (test/support/cli.ts runs the command; the other test/cli files hold its other topics).
 */
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { createTokenVerifier } from "../../src/services/auth/tokens.ts";
import { run } from "../support/cli.ts";
import { TEST_ENV } from "../support/gateway.ts";
import { describeOnEmbeddedPass } from "../support/passes.ts";

// Each test starts `bun src/main.ts` up to nine times in turn, a second or so each, more on a busy machine
// (other test files run meanwhile).
setDefaultTimeout(60_000);

describe("passerelle (the command line)", () => {
  it("token --admin prints one admin token that the gateway accepts", async () => {
    const { stdout, code } = await run(["token", "--admin", "--env", "live"], TEST_ENV);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines.length).toBe(1);
    const principal = await createTokenVerifier({ secret: TEST_ENV.JWT_SECRET!, issuer: undefined, audience: undefined, jwksUrl: undefined }).verify(lines[0]!);
    expect(principal).toMatchObject({ role: "admin", environment: "live", tenantId: null });
  });

  it("token refuses unclear arguments with its usage and exit status 2", async () => {
    const { stdout, stderr, code } = await run(["token"], TEST_ENV);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toStartWith("passerelle: token needs exactly one of --admin or --tenant <ten_…>\nusage: passerelle token --admin | --tenant <ten_…>");
  });

  it("stops on bad configuration with one line naming the variable", async () => {
    const { stderr, code } = await run(["serve"], { NODE_ENV: "production", JWT_SECRET: "x".repeat(40) });
    expect(code).toBe(1);
    expect(stderr).toBe("passerelle: Invalid configuration: ENCRYPTION_KEYS is required when NODE_ENV=production\n");
    const bad = await run(["serve"], { ...TEST_ENV, PORT: "http" });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining("Invalid configuration: PORT")]);
  });

  describeOnEmbeddedPass("says in one plain line what a bad variable must be", () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: "abc" }, 'PORT must be an integer from 0 to 65535 (got "abc")'],
      [{ PORT: "70000" }, 'PORT must be an integer from 0 to 65535 (got "70000")'],
      [{ METRICS_PORT: "-1" }, 'METRICS_PORT must be an integer from 0 to 65535 (got "-1")'],
      [{ MAX_AMOUNT: "0" }, 'MAX_AMOUNT must be a positive integer (got "0")'],
      [{ IDEMPOTENCY_LOCK_MS: "10" }, 'IDEMPOTENCY_LOCK_MS must be an integer of at least 1000 (got "10")'],
      [{ NODE_ENV: "prod" }, 'NODE_ENV must be one of development, production, test (got "prod")'],
      [{ LOG_LEVEL: "loud" }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
      // A URL may carry a password: it is never echoed.
      [{ DATABASE_URL: "mysql://root:hunter2@db/x" }, "DATABASE_URL must be a postgres:// or postgresql:// URL"],
      [{ REDIS_URL: "http://:hunter2@cache" }, "REDIS_URL must be a redis:// or rediss:// URL"],
      [{ JWT_SECRET: "hunter2" }, "JWT_SECRET must be at least 32 bytes"],
    ];
    for (const [variables, line] of cases) {
      it(`${Object.entries(variables)[0]!.join("=")}`, async () => {
        const { stdout, stderr, code } = await run(["serve"], { ...TEST_ENV, ...variables });
        expect(code).toBe(1);
        expect(stdout).toBe("");
        expect(stderr).toBe(`passerelle: Invalid configuration: ${line}\n`);
        expect(stderr).not.toContain("hunter2");
      });
    }
  });

  it("stops with one line when the database cannot be reached", async () => {
    const { stderr, code } = await run(["serve"], { ...TEST_ENV, DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split("\n");
    expect(lines.length).toBe(1);
    expect(lines[0]).toStartWith("passerelle: ");
    expect(lines[0]).toContain("ECONNREFUSED");
  });

  describeOnEmbeddedPass("--help, -h and usage errors", () => {
    it("refuses an unknown option or argument with one line, the command's usage, and exit status 2", async () => {
      const cases: [string[], string, string][] = [
        [["serve", "--bogus"], "unknown option '--bogus'", "usage: passerelle serve"],
        [["keys", "rotate", "--dry-run"], "unknown option '--dry-run'", "usage: passerelle keys rotate"],
        [["migrate", "now"], "unexpected argument 'now'", "usage: passerelle migrate"],
        [["token", "--admin", "--ttl", "soon"], '--ttl must be a positive number of seconds (got "soon")', "usage: passerelle token"],
        [["keys", "rotate", "--pause-ms", "x"], '--pause-ms must be a whole number of milliseconds (got "x")', "usage: passerelle keys rotate"],
        [["prune", "--batch-size", "lots"], '--batch-size must be a whole number from 1 to 50000 (got "lots")', "usage: passerelle prune"],
        [["keys"], "keys needs a command: rotate", "usage: passerelle keys rotate"],
        [["keys", "turn"], "unknown keys command 'turn' (did you mean 'keys rotate'?)", "usage: passerelle keys rotate"],
        [["serv"], "unknown command 'serv'", "usage: passerelle <command>"],
      ];
      for (const [args, message, usage] of cases) {
        const { stdout, stderr, code } = await run(args, TEST_ENV);
        expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: "" });
        const [first, second] = stderr.split("\n");
        expect({ args, first, second: second?.slice(0, usage.length) }).toEqual({ args, first: `passerelle: ${message}`, second: usage });
      }
    });
  });
});
