/**
 * The `bun patch` of ioredis (patches/, package.json `patchedDependencies`): ioredis traces a command through
 * `diagnostics_channel` unless its tracing channel says nobody listens (`hasSubscribers === false`). Bun's
 * `TracingChannel` has no `hasSubscribers`, so every command of the gateway's queues was traced with nobody
 * listening — its arguments (a job's data among them) turned to strings and its promise wrapped: 1–1.6 % of the
 * gateway's CPU on the checkout, IPN and fan-out paths (docs/performance.md, issue 27 point 3). The patch asks the
 * tracing channel's own channels instead, as Node's getter does. These tests fail when the patch stops applying.
 */
import { describe, expect, it } from "bun:test";
import { tracingChannel } from "node:diagnostics_channel";
import { type CommandTraceContext, traceCommand } from "ioredis/built/tracing.js";
import packageJson from "../../package.json" with { type: "json" };

const context = (command: string, args: string[] = []): CommandTraceContext => ({ command, args, database: 0, serverAddress: "127.0.0.1", serverPort: 6379 });
const noop = () => {};

describe("the ioredis tracing patch", () => {
  it("is declared for the installed version", () => {
    const installed = (require("ioredis/package.json") as { version: string }).version;
    expect(Object.keys(packageJson.patchedDependencies)).toContain(`ioredis@${installed}`);
  });

  it("runs a command untraced when nobody listens: the command's own promise, no trace context built", async () => {
    let contexts = 0;
    const sent = Promise.resolve("PONG");
    const traced = traceCommand(
      () => sent,
      () => {
        contexts += 1;
        return context("ping");
      },
    );
    expect(traced).toBe(sent);
    expect(await traced).toBe("PONG");
    expect(contexts).toBe(0);
  });

  it("still traces a command when someone listens, and stops when they leave", async () => {
    const seen: unknown[] = [];
    const handlers = {
      start: (message: unknown) => {
        seen.push(message);
      },
      end: noop,
      asyncStart: noop,
      asyncEnd: noop,
      error: noop,
    };
    tracingChannel("ioredis:command").subscribe(handlers);
    try {
      expect(
        await traceCommand(
          () => Promise.resolve("OK"),
          () => context("set", ["key", "?"]),
        ),
      ).toBe("OK");
      expect(seen).toEqual([expect.objectContaining({ command: "set", args: ["key", "?"] })]);
    } finally {
      tracingChannel("ioredis:command").unsubscribe(handlers);
    }
    const sent = Promise.resolve("OK");
    expect(
      traceCommand(
        () => sent,
        () => context("get"),
      ),
    ).toBe(sent);
    expect(seen).toHaveLength(1);
  });
});
