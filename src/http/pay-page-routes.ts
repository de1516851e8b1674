/**
 * `GET /pay/{id}` and `GET /pay-assets/{name}`: a payment link's pay page (`pay/`), which talks to the
 * gateway through the pay page's public calls only (`routers/pay-page.ts`). Every answer carries a strict
 * Content-Security-Policy — script, style and calls from this origin only, nothing inline, no framing, no
 * HTML written from strings. Built on first request and kept for the process, compressed once, answered by
 * `Accept-Encoding` with an `ETag`, as the dashboard is (`dashboard-routes.ts`).
 */
import { buildPayPage, PAY_PAGE_ASSET_PATH, type PayPageBuild } from "../../pay/build.ts";
import { AppError } from "../errors.ts";
import { prepareStaticBody, type StaticBody, staticResponse } from "./static-body.ts";

/** The pay page's policy: its own origin only, nothing inline, never in another site's frame. */
export const PAY_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": PAY_PAGE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

export const PAY_PAGE_ROUTES = [
  { method: "GET", path: "/pay/{link_id}" },
  { method: "GET", path: `${PAY_PAGE_ASSET_PATH}{name}` },
] as const;

interface PreparedPayPage {
  page: StaticBody;
  assets: Map<string, { contentType: string; body: StaticBody }>;
}

let prepared: Promise<PreparedPayPage> | undefined;

async function prepare(build: PayPageBuild): Promise<PreparedPayPage> {
  const assets = new Map<string, { contentType: string; body: StaticBody }>();
  for (const asset of build.assets) assets.set(asset.name, { contentType: asset.contentType, body: await prepareStaticBody(asset.bytes) });
  return { page: await prepareStaticBody(build.html), assets };
}

function payPageBuild(): Promise<PreparedPayPage> {
  prepared ??= buildPayPage()
    .then(prepare)
    .catch((error: unknown) => {
      prepared = undefined;
      throw error;
    });
  return prepared;
}

/** The page, the same for every link (its script reads the id from the address); revalidated on each visit. */
export async function payPage(request: Request): Promise<Response> {
  const { page } = await payPageBuild();
  return staticResponse(request, page, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" });
}

/** A built asset by name (its hash in the name: cached for good); 404 for any other name. */
export async function payPageAsset(request: Request, name: string): Promise<Response> {
  const asset = (await payPageBuild()).assets.get(name);
  if (!asset) throw new AppError(404, "not_found", "Route not found");
  return staticResponse(request, asset.body, {
    ...SECURITY_HEADERS,
    "content-type": asset.contentType,
    "cache-control": "public, max-age=31536000, immutable",
  });
}
