/**
 * The reference every REST scenario is compared with: a bare Elysia app answering a constant on `GET /`,
 * in its own process, so that its rate shows what this machine and load generator can do at all.
 *
 *   bun bench/reference-servers/elysia-constant.ts <port>
 *
 * It prints `listening <url>` once bound and stops on SIGTERM/SIGINT.
 */
import { Elysia } from "elysia";

const port = Number(process.argv[2] ?? "0");
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`elysia-constant: bad port '${process.argv[2]}'\n`);
  process.exit(1);
}

const app = new Elysia().get("/", () => "ok").listen({ port, hostname: "127.0.0.1" });
process.stdout.write(`listening http://127.0.0.1:${app.server?.port}\n`);

const stop = () => {
  void app.stop().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
