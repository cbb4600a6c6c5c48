#!/usr/bin/env bash
# Usage: scripts/native-for.sh BIN_DIR
# Makes node_modules' better-sqlite3 load under the node in BIN_DIR. Its addon is built for one
# Node ABI (Node 20 and 24 differ: 115 and 137), so a tree installed under one fails to load under
# the other. Each build is kept in ${XDG_CACHE_HOME:-~/.cache}/site-status/native/ by version and
# ABI, for every later run and clone: switching copies one file; the first switch to an ABI builds
# it (`npm rebuild`, about 1.5 min on 2 cores) against that node's own headers (npm_config_nodedir),
# offline.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(cd "${1:?usage: scripts/native-for.sh BIN_DIR}" && pwd)
say() { echo "native-for: $*" >&2; }

addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
[ -f "$addon" ] || { say "$addon is missing: run npm ci first"; exit 1; }

loads() { "$1/node" -e 'new (require("better-sqlite3"))(":memory:").close()' 2>/dev/null; }

version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
store=${XDG_CACHE_HOME:-$HOME/.cache}/site-status/native
mkdir -p "$store"
abi_of() { "$1/node" -p 'process.versions.modules'; }
# Copies by rename, so that no process (another clone's run) ever loads a half-written file.
put() { cp -f "$1" "$2.$$" && mv -f "$2.$$" "$2"; }

# Keep the build in place for the ABI it loads under, before replacing it.
for other in "$bin" "$(dirname "$(command -v node)")"; do
  if loads "$other"; then put "$addon" "$store/better-sqlite3-$version-abi$(abi_of "$other").node"; break; fi
done

loads "$bin" && exit 0
want="$store/better-sqlite3-$version-abi$(abi_of "$bin").node"
if [ -f "$want" ]; then put "$want" "$addon"; fi
if ! loads "$bin"; then
  say "building better-sqlite3 $version for node $("$bin/node" --version)"
  # npm and node-gyp run under the target node; without nodedir node-gyp would take the headers
  # of the machine's node (~/.npmrc) or try to download them.
  PATH="$bin:$PATH" npm_config_nodedir="$(dirname "$bin")" npm rebuild better-sqlite3 --foreground-scripts >&2 ||
    { say "npm rebuild better-sqlite3 failed under $bin/node (see above)"; exit 1; }
  put "$addon" "$want"
fi
loads "$bin" || { say "better-sqlite3 still does not load under $bin/node"; exit 1; }
