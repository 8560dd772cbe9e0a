#!/usr/bin/env bash
# Usage: scripts/release.sh [--prebuilt] [<dir>]          (<dir> defaults to ./release)
#
# Builds a release of the server into <dir> and installs it there without dev dependencies:
#   <dir>/dist/               the compiled server and CLI (a clean `npm run build` first)
#   <dir>/package.json        the project's, minus `prepare` (a release is built already)
#   <dir>/package-lock.json   so the release gets exactly the tested dependency versions
#   <dir>/node_modules/       `npm ci --omit=dev --ignore-scripts`: runtime dependencies only
# Then `cd <dir> && npm start` (or `node dist/main.js`) serves, `node dist/cli/main.js` is the CLI.
# To ship it elsewhere, copy <dir> without node_modules and run the same `npm ci` there (Node 24+).
#
# Needs the clone's dev dependencies (`npm ci`) to build. --prebuilt takes the dist/ already built
# (the suite's test does, after `npm test` built it) instead of building again.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
prebuilt=false
out=""
for arg in "$@"; do
  case "$arg" in
    --prebuilt) prebuilt=true ;;
    -*)
      echo "usage: $0 [--prebuilt] [<dir>]" >&2
      exit 2
      ;;
    *) out="$arg" ;;
  esac
done
out="${out:-$root/release}"
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "release: $out exists and is not empty; remove it first" >&2
  exit 1
fi

cd "$root"
if ! $prebuilt; then
  # Clean, so no file of a deleted source ships.
  rm -rf dist
  npm run --silent build
fi
if [ ! -f dist/main.js ]; then
  echo "release: no dist/main.js; run npm run build (or drop --prebuilt)" >&2
  exit 1
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
cp -R dist "$out/dist"
cp package-lock.json "$out/"
node -e '
  const pkg = JSON.parse(require("node:fs").readFileSync("package.json", "utf8"));
  delete pkg.scripts.prepare;
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' >"$out/package.json"

cd "$out"
# The only install script among the runtime dependencies is better-sqlite3's `node-gyp rebuild`,
# which does nothing where the package carries a prebuilt Node-API addon (linux, macOS, Windows on
# x64 and arm64) but still wants Node's headers (a download) to find that out. So scripts are
# skipped, and the addon is compiled only when the prebuilt one does not load here.
npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error
loads() { node -e 'new (require("better-sqlite3"))(":memory:").close()'; }
if ! loads 2>/dev/null; then
  npm rebuild better-sqlite3 --no-audit --no-fund --loglevel=error
fi
if ! loads; then
  echo "release: better-sqlite3 does not load in $out with node $(node --version)" >&2
  exit 1
fi
echo "release: $out (node $(node --version))" >&2
