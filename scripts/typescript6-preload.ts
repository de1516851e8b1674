/**
 * Preload (`bun --preload ./scripts/typescript6-preload.ts <tool>`) for dev tools that parse TypeScript with
 * the compiler's JavaScript API, which TypeScript 7 (the project's compiler, native) does not have: their
 * `require("typescript")` gets TypeScript 6's API (the @typescript/typescript6 package, made to sit beside 7),
 * in that process only. Used by `bun run cycles` (madge, through @typescript-eslint/typescript-estree).
 */
import { createRequire } from "node:module";
import { plugin } from "bun";

const typescript6 = createRequire(import.meta.url)("@typescript/typescript6");
plugin({
  name: "typescript6-for-dev-tools",
  setup(build) {
    // TypeScript 7's package entry is lib/version.cjs; a require of "typescript" loads it.
    build.onLoad({ filter: /[\\/]node_modules[\\/]typescript[\\/]lib[\\/]version\.cjs$/ }, () => ({
      exports: { default: typescript6, ...typescript6 },
      loader: "object",
    }));
  },
});
