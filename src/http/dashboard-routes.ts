/**
 * `GET /dashboard` and `GET /dashboard/assets/{name}`: the merchant's dashboard (`dashboard/`), a
 * single-page app that talks to the gateway through `/trpc` only. Every answer carries a strict
 * Content-Security-Policy — scripts, styles and calls from this origin only, no inline script or style,
 * no framing — so the page can run nothing the gateway did not bundle.
 *
 * The bundle is built in memory by Bun's bundler on the first request (`dashboard/build.ts`), not at
 * start-up: a gateway nobody opens in a browser (an API-only deployment, most tests) never pays for it.
 * The build is kept for the life of the process and shared by every app in it: its input is the
 * dashboard's source on disk, the same for all of them. Its files are compressed once, with the build
 * (`static-body.ts`), and answered by `Accept-Encoding` with an `ETag` (304 on `If-None-Match`).
 */
import { buildDashboard, DASHBOARD_ASSET_PATH, type DashboardBuild } from "../../dashboard/build.ts";
import { AppError } from "../errors.ts";
import { prepareStaticBody, type StaticBody, staticResponse } from "./static-body.ts";

/** The dashboard's policy: its own origin only, nothing inline, never inside another site's frame. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  // No script may write HTML from strings (innerHTML and the like): the page is built by Preact's DOM calls.
  "require-trusted-types-for 'script'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

/** The routes, as the route table and the metrics name them. */
export const DASHBOARD_ROUTES = [
  { method: "GET", path: "/dashboard" },
  { method: "GET", path: `${DASHBOARD_ASSET_PATH}{name}` },
] as const;

/** The build's files, each compressed once. */
interface PreparedDashboard {
  page: StaticBody;
  assets: Map<string, { contentType: string; body: StaticBody }>;
}

let prepared: Promise<PreparedDashboard> | undefined;

async function prepare(build: DashboardBuild): Promise<PreparedDashboard> {
  const assets = new Map<string, { contentType: string; body: StaticBody }>();
  for (const asset of build.assets) assets.set(asset.name, { contentType: asset.contentType, body: await prepareStaticBody(asset.bytes) });
  return { page: await prepareStaticBody(build.html), assets };
}

/** The process's build of the dashboard, made and compressed on first use; a failed build is tried again next time. */
function dashboardBuild(): Promise<PreparedDashboard> {
  prepared ??= buildDashboard()
    .then(prepare)
    .catch((error: unknown) => {
      prepared = undefined;
      throw error;
    });
  return prepared;
}

/** The page: revalidated on every visit (`no-cache`, 304 while unchanged), so a new gateway version's assets are picked up at once. */
export async function dashboardPage(request: Request): Promise<Response> {
  const { page } = await dashboardBuild();
  return staticResponse(request, page, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" });
}

/** A built asset by name; its name carries its content hash, so it is cached for good. 404 for any other name. */
export async function dashboardAsset(request: Request, name: string): Promise<Response> {
  const asset = (await dashboardBuild()).assets.get(name);
  if (!asset) throw new AppError(404, "not_found", "Route not found");
  return staticResponse(request, asset.body, {
    ...SECURITY_HEADERS,
    "content-type": asset.contentType,
    "cache-control": "public, max-age=31536000, immutable",
  });
}
