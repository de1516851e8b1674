#!/usr/bin/env bash
# `bun run client:check` (and CI): the client package (client/, @passerelle/client) as a merchant gets it.
#
# 1. client/generated/ is fresh: the router's and the REST API's declarations equal a new generation from the
#    gateway's source (`bun scripts/client-types.ts --check`; skipped, and said so, where Bun or the gateway's
#    install is absent, except under CI=true).
# 2. It builds and packs with npm alone: `npm ci` and `npm pack` in client/ (prepack runs tsc). The tarball
#    holds exactly the built files, the generated declarations, package.json and the README, under 100 kB.
# 3. A new Node project (`npm init`, ES module, the tsconfig.json `tsc --init` writes): the tarball and
#    openapi-fetch install alone (only @trpc/client, @trpc/server, openapi-fetch and their own dependencies
#    and peers come with them), then the package README's example, the gateway README's example and
#    test/client-project/merchant.ts type-check with 0 errors (with skipLibCheck as written and off), and
#    wrong calls of each kind are errors at their lines (the types are the gateway's, not any).
# 4. A new Vite project (the files of create-vite 9.3's vanilla-ts template, written here) whose src/main.ts
#    is the package README's example: `npm run build` (`tsc && vite build`) passes.
#
# Needs Node and npm (the npm registry, or npm's cache); prints what it checks; exits non-zero on the first
# failure. Works in a temporary folder, removed at the end.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/passerelle-client-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The versions the gateway pins (package.json), and the Vite the template asks for (^8.3.4) at its latest.
TYPESCRIPT=7.0.2
OPENAPI_FETCH=0.17.0
VITE=8.4.0

say() { printf -- '--- %s\n' "$*"; }
fail() {
  printf 'client:check FAILED: %s\n' "$*" >&2
  exit 1
}
npm_install() { npm install --no-audit --no-fund --prefer-offline --loglevel=error "$@"; }

# The first ```ts block after the heading $2 in the Markdown file $1.
example() {
  node -e '
    const [file, heading] = process.argv.slice(1);
    const text = require("fs").readFileSync(file, "utf8");
    const at = text.indexOf(`\n${heading}\n`);
    const block = at < 0 ? null : /^```ts\n([\s\S]*?)^```$/m.exec(text.slice(at));
    if (!block) { console.error(`no ts example under "${heading}" in ${file}`); process.exit(1); }
    process.stdout.write(block[1]);
  ' "$1" "$2"
}

# What installing the tarball and openapi-fetch brought into the project $1: every package of its tree.
check_tree() {
  (cd "$1" && npm ls --all --parseable --omit=dev) | node -e '
    const { readFileSync } = require("fs");
    const paths = readFileSync(0, "utf8").trim().split("\n").slice(1);
    const names = [...new Set(paths.map((p) => JSON.parse(readFileSync(`${p}/package.json`, "utf8")).name))].sort();
    // @trpc/client peers on @trpc/server (the router types refer to it) and typescript (npm installs peers);
    // typescript 7 brings its compiler as one native package per platform.
    const allowed = /^(@passerelle\/client|@trpc\/client|@trpc\/server|openapi-fetch|openapi-typescript-helpers|typescript|@typescript\/typescript-[a-z0-9-]+)$/;
    console.log(`installed ${names.length} packages: ${names.join(", ")}`);
    const others = names.filter((name) => !allowed.test(name));
    if (others.length > 0) { console.error(`client:check FAILED: the tarball brought ${others.join(", ")}`); process.exit(1); }
  '
}

# Type-checks the project in the current folder: no output, exit 0.
typecheck() { # tsc arguments…
  local output
  if ! output="$(./node_modules/.bin/tsc "$@" 2>&1)" || [ -n "$output" ]; then
    printf '%s\n' "$output"
    fail "tsc $* in $(basename "$PWD") reported errors"
  fi
  echo "tsc $*: 0 errors"
}

# --- 1. generated declarations --------------------------------------------------------------------
if command -v bun >/dev/null 2>&1 && [ -d "$root/node_modules" ]; then
  say "client/generated/ is fresh: bun scripts/client-types.ts --check"
  (cd "$root" && bun scripts/client-types.ts --check) || fail "client/generated/ is stale: run \`bun run client:types\`"
elif [ -n "${CI:-}" ]; then
  fail "client/generated/ freshness needs Bun and the gateway's bun install, which CI has"
else
  say "client/generated/ freshness: skipped (needs Bun and the gateway's bun install)"
fi

# --- 2. build and pack --------------------------------------------------------------------------
say "client/: npm ci, npm pack (prepack: npm run build, tsc)"
(cd "$root/client" && rm -rf dist && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
(cd "$root/client" && npm pack --json --pack-destination "$work" >"$work/pack.json") || fail "npm pack in client/"
tarball="$(node -e '
  const [pack] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const files = pack.files.map((file) => file.path).sort();
  const expected = ["README.md", "dist/index.d.ts", "dist/index.js", "generated/openapi.d.ts", "generated/router.d.ts", "package.json"];
  console.error(`${pack.filename}: ${files.length} files (${files.join(", ")}), ${pack.size} bytes packed, ${pack.unpackedSize} unpacked`);
  if (JSON.stringify(files) !== JSON.stringify(expected)) { console.error(`client:check FAILED: the tarball should hold ${expected.join(", ")}`); process.exit(1); }
  if (pack.size >= 100000) { console.error("client:check FAILED: the tarball is not under 100 kB"); process.exit(1); }
  console.log(pack.filename);
' "$work/pack.json")"
tarball="$work/$tarball"

# --- 3. a tsc --init project (module NodeNext) --------------------------------------------------
node_project="$work/node-project"
mkdir "$node_project" && cd "$node_project"
say "a new Node project (npm init, type module): npm install the tarball and openapi-fetch@$OPENAPI_FETCH"
npm init -y >/dev/null && npm pkg set type=module
npm_install "$tarball" "openapi-fetch@$OPENAPI_FETCH"
check_tree "$node_project"
npm_install -D "typescript@$TYPESCRIPT"
./node_modules/.bin/tsc --init >/dev/null
example node_modules/@passerelle/client/README.md "## Use" >package-readme.ts
example "$root/README.md" "## Typed client" >gateway-readme.ts
cp "$root/test/client-project/merchant.ts" merchant.ts
say "type check (tsc --init's tsconfig.json): the package README's example, the gateway README's, test/client-project/merchant.ts"
typecheck --noEmit
typecheck --noEmit --skipLibCheck false
# Proof that the types came through (an unresolved import in a .d.ts under skipLibCheck would make them any).
cat >wrong.ts <<'EOF'
import createClient from "openapi-fetch";
import { createPasserelleClient, type paths } from "@passerelle/client";
const passerelle = createPasserelleClient({ baseUrl: "http://localhost:3000", token: "psk_x" });
const rest = createClient<paths>({ baseUrl: "http://localhost:3000" });
export async function wrong() {
  await passerelle.webhooks.get.query({ webhook: "whe_1" }); // WRONG: a query input with a misspelt field
  await passerelle.webhooks.create.mutate({ url: 42 }); // WRONG: a mutation input of the wrong type
  const me = await passerelle.auth.whoami.query(); if (me.tenant) return; // WRONG: an output field that does not exist
  await passerelle.payments.refund.mutate({}); // WRONG: no such procedure
  await rest.GET("/webhooks/{id}", {}); // WRONG: no such REST path
  const found = await rest.GET("/payments/{payment_id}", { params: { path: { payment_id: "pay_x" } } }); return found.data?.amont; // WRONG: a misspelt response field
}
EOF
say "type check: wrong calls of each kind (wrong.ts) are errors at their lines"
expected="$(grep -n '// WRONG' wrong.ts | cut -d: -f1 | tr '\n' ' ')"
reported="$(./node_modules/.bin/tsc --noEmit 2>&1 | grep -o '^wrong\.ts([0-9]*' | cut -d'(' -f2 | sort -nu | tr '\n' ' ' || true)"
echo "errors expected on lines ${expected}; reported on lines ${reported}"
[ "$expected" = "$reported" ] || fail "wrong.ts: tsc should report an error on each WRONG line and nowhere else"
rm wrong.ts

# --- 4. a Vite project (vanilla-ts) -------------------------------------------------------------
vite_project="$work/vite-project"
mkdir -p "$vite_project/src" && cd "$vite_project"
say "a new Vite project (create-vite's vanilla-ts files): npm install the tarball and openapi-fetch@$OPENAPI_FETCH"
cat >package.json <<'EOF'
{
  "name": "vite-typescript-starter",
  "private": true,
  "version": "0.0.0",
  "type": "module",
  "scripts": {
    "dev": "vite",
    "build": "tsc && vite build",
    "preview": "vite preview"
  }
}
EOF
cat >tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "es2023",
    "module": "esnext",
    "lib": ["ES2023", "DOM"],
    "types": ["vite/client"],
    "allowArbitraryExtensions": true,
    "skipLibCheck": true,

    /* Bundler mode */
    "moduleResolution": "bundler",
    "allowImportingTsExtensions": true,
    "verbatimModuleSyntax": true,
    "moduleDetection": "force",
    "noEmit": true,

    /* Linting */
    "noUnusedLocals": true,
    "noUnusedParameters": true,
    "erasableSyntaxOnly": true,
    "noFallthroughCasesInSwitch": true
  },
  "include": ["src"]
}
EOF
cat >index.html <<'EOF'
<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>Vite + TS</title>
  </head>
  <body>
    <div id="app"></div>
    <script type="module" src="/src/main.ts"></script>
  </body>
</html>
EOF
npm_install "$tarball" "openapi-fetch@$OPENAPI_FETCH"
check_tree "$vite_project"
npm_install -D "typescript@$TYPESCRIPT" "vite@$VITE"
example node_modules/@passerelle/client/README.md "## Use" >src/main.ts
say "npm run build (tsc && vite build) with the package README's example as src/main.ts"
build_output="$(npm run build 2>&1)" || {
  printf '%s\n' "$build_output"
  fail "npm run build in the Vite project"
}
printf '%s\n' "$build_output" | grep -E 'dist/assets/.*\.js' || true
echo "tsc: 0 errors; vite build: done"

say "client package: all checks passed"
