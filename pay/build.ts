/**
 * The pay page of a payment link (`/pay/{id}`, issue 31 point 2) as files: `pay/src/main.ts` — plain DOM
 * calls, no framework, so that the page and its script stay far under 50 kB compressed for a 2G connection —
 * bundled by Bun's bundler, in memory, into one script and one stylesheet whose names carry their content
 * hash, and the HTML page that loads them. Nothing inline, so the gateway serves it under a strict
 * Content-Security-Policy (`src/http/pay-page-routes.ts`).
 */
import { join } from "node:path";

export interface PayPageAsset {
  name: string;
  contentType: string;
  bytes: Uint8Array<ArrayBuffer>;
}

export interface PayPageBuild {
  html: string;
  assets: PayPageAsset[];
}

/** Where the assets are served (not under `/pay/`, whose next segment is a link's id). */
export const PAY_PAGE_ASSET_PATH = "/pay-assets/";

const ENTRY = join(import.meta.dir, "src", "main.ts");

function contentTypeOf(name: string): string {
  if (name.endsWith(".js")) return "text/javascript; charset=utf-8";
  if (name.endsWith(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

/** The page: the stylesheet, the script, and what a browser without JavaScript says. */
function pageFor(assets: PayPageAsset[]): string {
  const css = assets.filter((a) => a.name.endsWith(".css")).map((a) => `<link rel="stylesheet" href="${PAY_PAGE_ASSET_PATH}${a.name}">`);
  const js = assets.filter((a) => a.name.endsWith(".js")).map((a) => `<script type="module" src="${PAY_PAGE_ASSET_PATH}${a.name}"></script>`);
  return [
    "<!doctype html>",
    '<html lang="fr">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    "<title>Paiement</title>",
    ...css,
    ...js,
    "</head>",
    "<body>",
    '<main id="app"><noscript>Cette page a besoin de JavaScript. / This page needs JavaScript.</noscript></main>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** Bundles the pay page for browsers (minified, no source map), in memory. */
export async function buildPayPage(): Promise<PayPageBuild> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    format: "esm",
    minify: true,
    sourcemap: "none",
    naming: { entry: "pay-[hash].[ext]", chunk: "pay-[hash].[ext]", asset: "pay-[hash].[ext]" },
    throw: false,
  });
  if (!result.success) throw new Error(`the pay page did not build:\n${result.logs.map((log) => String(log)).join("\n")}`);
  const assets = await Promise.all(
    result.outputs.map(async (output) => {
      const name = output.path.replace(/^.*[\\/]/, "");
      return { name, contentType: contentTypeOf(name), bytes: new Uint8Array(await output.arrayBuffer()) };
    }),
  );
  return { html: pageFor(assets), assets };
}
