/**
 * `/docs`: the interactive API reference (Scalar), served from `node_modules` — these machines are offline,
 * so nothing may load from a CDN.
 */
import { dirname, join } from "node:path";

/** Where the Scalar browser bundle lives in the installed package. */
export function scalarBundlePath(): string {
  const entry = Bun.resolveSync("@scalar/api-reference", import.meta.dir);
  return join(dirname(entry), "browser", "standalone.js");
}

/** The `/docs` page: loads the bundle from `/docs/scalar.js` and the document from `/openapi.json`. */
export function docsPage(): string {
  const config = JSON.stringify({ url: "/openapi.json", withDefaultFonts: false, hideClientButton: true, telemetry: false });
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
