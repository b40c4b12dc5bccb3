#!/usr/bin/env bash
# Makes bindings-node/ usable from the checkout (the JS, PostgreSQL, MySQL and docs tests load
# it there): its npm dependencies, and the addon beside them. SHARDID_NODE_ADDON=FILE (what
# scripts/test.sh sets: the addon of release.sh's shardid-linux-x64-gnu package) puts that
# file there instead of building one, so the suites test the release build; without it,
# `npm run build` (napi-rs) builds the addon.
set -euo pipefail
cd "$(dirname "$0")/../bindings-node"
npm install --no-audit --no-fund --loglevel=error >/dev/null
if [ -n "${SHARDID_NODE_ADDON:-}" ]; then
    # A new file renamed into place, never written over one a running Node may have loaded.
    addon=$(basename "$SHARDID_NODE_ADDON")
    if ! cmp -s "$SHARDID_NODE_ADDON" "$addon"; then
        cp "$SHARDID_NODE_ADDON" "$addon.tmp" && mv -f "$addon.tmp" "$addon"
    fi
else
    npm run build --silent >/dev/null 2>&1 || { npm run build; exit 1; }
fi
