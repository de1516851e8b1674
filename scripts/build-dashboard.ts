#!/usr/bin/env bun
/**
 * `bun run dashboard:build` bundles the merchant's dashboard (`dashboard/build.ts`) and writes it to
 * `dashboard/dist/` (not committed): `index.html` and `assets/<name>-<hash>.{js,css}`, as the gateway
 * serves them at `/dashboard`. The gateway does not need this step: it runs the same build in memory on
 * the first request for `/dashboard`. This is for looking at the output (its size) or serving it elsewhere.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { buildDashboard } from "../dashboard/build.ts";

const dist = join(import.meta.dir, "..", "dashboard", "dist");
const started = performance.now();
const { html, assets } = await buildDashboard();
await rm(dist, { recursive: true, force: true });
await mkdir(join(dist, "assets"), { recursive: true });
await Bun.write(join(dist, "index.html"), html);
for (const asset of assets) await Bun.write(join(dist, "assets", asset.name), asset.bytes);
const sizes = assets.map((asset) => `${asset.name} ${(asset.bytes.length / 1024).toFixed(1)} KiB`).join(", ");
process.stdout.write(`built dashboard/dist in ${Math.round(performance.now() - started)} ms: index.html, ${sizes}\n`);
