#!/usr/bin/env bash
# The Node benchmarks (bench/node/bench.mjs; `scripts/bench-node.sh public_ids` runs
# bench/node/public_ids.mjs): builds the addon and runs it with its peers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd bindings-node && npm install --no-audit --no-fund --loglevel=error >/dev/null \
    && npm run build --silent >/dev/null 2>&1)
node "bench/node/${1:-bench}.mjs"
