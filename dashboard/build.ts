/**
 * The merchant's dashboard as files: `dashboard/src/main.tsx` (Preact, `@trpc/client`) bundled by Bun's
 * bundler, in memory, into one script and one stylesheet whose names carry their content hash, plus the
 * HTML page that loads them. Nothing comes from a CDN and the page has no inline script or style, so the
 * gateway can serve it under a strict Content-Security-Policy (`src/http/dashboard-routes.ts`).
 *
 * The gateway builds it on the first request for `/dashboard` (a few hundred milliseconds, once per
 * process); `bun run dashboard:build` (scripts/build-dashboard.ts) runs the same build and writes the files
 * to `dashboard/dist/` (not committed) to look at, or to serve from elsewhere.
 */
import { join } from "node:path";
import type { BunPlugin } from "bun";

/** One built file, served at `/dashboard/assets/<name>`. */
export interface DashboardAsset {
  name: string;
  contentType: string;
  bytes: Uint8Array<ArrayBuffer>;
}

export interface DashboardBuild {
  /** The page served at `/dashboard`. */
  html: string;
  assets: DashboardAsset[];
}

/** Where the assets are served; the page refers to them by absolute path. */
export const DASHBOARD_ASSET_PATH = "/dashboard/assets/";

const ENTRY = join(import.meta.dir, "src", "main.tsx");

function contentTypeOf(name: string): string {
  if (name.endsWith(".js")) return "text/javascript; charset=utf-8";
  if (name.endsWith(".css")) return "text/css; charset=utf-8";
  if (name.endsWith(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

/**
 * The tab's icon: a bridge (a "passerelle") in the dashboard's accent colour, as a data URL — the page's
 * Content-Security-Policy allows `img-src 'self' data:`, and it costs no request.
 */
const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b5fff"/>' +
    '<path d="M4 21h24M7 21v-5M25 21v-5M4 16c6-7 18-7 24 0" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round"/></svg>',
)}`;

/** The page: a root element, the stylesheet and the script, nothing inline but the icon's data URL. */
function pageFor(assets: DashboardAsset[]): string {
  const links = assets.filter((asset) => asset.name.endsWith(".css")).map((asset) => `  <link rel="stylesheet" href="${DASHBOARD_ASSET_PATH}${asset.name}" />`);
  const scripts = assets
    .filter((asset) => asset.name.endsWith(".js"))
    .map((asset) => `  <script type="module" src="${DASHBOARD_ASSET_PATH}${asset.name}"></script>`);
  return [
    "<!doctype html>",
    '<html lang="fr">',
    "<head>",
    '  <meta charset="utf-8" />',
    '  <meta name="viewport" content="width=device-width, initial-scale=1" />',
    '  <meta name="referrer" content="no-referrer" />',
    "  <title>Passerelle</title>",
    `  <link rel="icon" type="image/svg+xml" href="${FAVICON}" />`,
    ...links,
    ...scripts,
    "</head>",
    "<body>",
    '  <div id="app"><noscript>Passerelle needs JavaScript. / Passerelle a besoin de JavaScript.</noscript></div>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/**
 * charts.css (the home screen's charts, `src/charts.tsx`) opens with `@property` rules typing its custom
 * properties and giving their initial values, some with syntaxes (`"<string>"`, `"<ratio>"`) or without the
 * initial value that Bun's CSS parser refuses ("Invalid value", "Invalid at-rule body"). Before it reads the
 * file, each rule becomes its initial value set on the page's root (inherited, as the rules say), or nothing
 * when it has none: only the typing (for animations) is lost.
 */
const chartsCssPlugin: BunPlugin = {
  name: "charts.css without its @property rules",
  setup(build) {
    build.onLoad({ filter: /[\\/]charts\.css[\\/]dist[\\/]charts\.css$/ }, async ({ path }) => ({
      contents: (await Bun.file(path).text()).replace(/@property\s+(--[\w-]+)\s*\{([^}]*)\}/g, (_rule, name: string, body: string) => {
        const initial = /initial-value:\s*([^;]+);/.exec(body)?.[1];
        return initial === undefined ? "" : `:root { ${name}: ${initial.trim()}; }`;
      }),
      loader: "css",
    }));
  },
};

/**
 * Bundles the dashboard for browsers (minified, no source map), in memory.
 *
 * @example
 * ```ts
 * const { html, assets } = await buildDashboard();
 * assets.map((asset) => asset.name); // ["main-3f9c2a1b.js", "main-77d0e4c2.css"]
 * ```
 */
export async function buildDashboard(): Promise<DashboardBuild> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    format: "esm",
    minify: true,
    sourcemap: "none",
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [chartsCssPlugin],
    throw: false,
  });
  if (!result.success) throw new Error(`the dashboard did not build:\n${result.logs.map((log) => String(log)).join("\n")}`);
  const assets = await Promise.all(
    result.outputs.map(async (output) => {
      const name = output.path.replace(/^.*[\\/]/, "");
      return { name, contentType: contentTypeOf(name), bytes: new Uint8Array(await output.arrayBuffer()) };
    }),
  );
  return { html: pageFor(assets), assets };
}
