/**
 * `/docs`: the interactive API reference (Scalar), served from `node_modules` — these machines are offline,
 * so nothing may load from a CDN.
 */
import { dirname, join } from "node:path";
import { prepareStaticBody, type StaticBody } from "./static-body.ts";

/** Where the Scalar browser bundle lives in the installed package. */
export function scalarBundlePath(): string {
  const entry = Bun.resolveSync("@scalar/api-reference", import.meta.dir);
  return join(dirname(entry), "browser", "standalone.js");
}

let bundle: Promise<StaticBody> | undefined;

/**
 * Scalar's bundle (4 MB), read and compressed once per process on its first request (about a second on
 * zlib's threads; 1.0 MB in brotli) and shared by every gateway in it: its input is the installed package.
 */
export function scalarBundle(): Promise<StaticBody> {
  bundle ??= Bun.file(scalarBundlePath())
    .bytes()
    .then(prepareStaticBody)
    .catch((error: unknown) => {
      bundle = undefined;
      throw error;
    });
  return bundle;
}

/**
 * Scalar's configuration (option names of @scalar/api-reference 1.72): the document from `/openapi.json`
 * and nothing that calls out to Scalar's cloud — no fonts from a CDN, no telemetry, no "Open API client"
 * button, no AI agent chat or "Ask AI" button (`agent`), no MCP install button (`mcp`), no developer
 * toolbar with its "deploy" and share-to-registry buttons (`showDeveloperTools`). Scalar turns the agent,
 * MCP and the toolbar on by itself when the page is on localhost, so each is switched off explicitly.
 */
export const SCALAR_CONFIGURATION = {
  url: "/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
} as const;

/** The `/docs` page: loads the bundle from `/docs/scalar.js` and the document from `/openapi.json`. */
export function docsPage(): string {
  const config = JSON.stringify(SCALAR_CONFIGURATION);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>Passerelle API reference</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/scalar.js"></script>
  <script>Scalar.createApiReference('#app', ${config});</script>
</body>
</html>`;
}
