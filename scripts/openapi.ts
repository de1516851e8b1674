#!/usr/bin/env bun
/**
 * `bun run openapi` writes `openapi/openapi.json` from the routers; `bun run openapi:check` fails when the
 * committed file differs from a fresh generation.
 */
import { generateOpenApi } from "../src/mod.ts";

const path = new URL("../openapi/openapi.json", import.meta.url).pathname;
const fresh = `${JSON.stringify(await generateOpenApi(), null, 2)}\n`;

if (process.argv.includes("--check")) {
  const file = Bun.file(path);
  const committed = (await file.exists()) ? await file.text() : "";
  if (committed !== fresh) {
    process.stderr.write("openapi/openapi.json is stale: run `bun run openapi` and commit the result\n");
    process.exit(1);
  }
  process.stdout.write("openapi/openapi.json is up to date\n");
} else {
  await Bun.write(path, fresh);
  process.stdout.write(`wrote ${path}\n`);
}
