#!/usr/bin/env bash
# The WebAssembly decoding benchmarks, under Node and in headless Chromium (bench/wasm/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bindings-wasm/build.sh
node bench/wasm/node.mjs
node bench/wasm/chromium.mjs
