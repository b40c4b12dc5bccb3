#!/usr/bin/env bash
# Builds the WebAssembly module into bindings-wasm/pkg/ (not committed), from the registries
# only: wasm-bindgen-cli at the exact version of the crate in Cargo.lock (installed once with
# `cargo install`), wasm-opt from the npm package `binaryen`.
#   pkg/web/      ES module for browsers (`--target web`): import init, { Layout, ... }
#   pkg/bundler/  for bundlers (`--target bundler`)
#   pkg/node/     CommonJS for Node (`--target nodejs`)
# Each gets the shared api.js classes (from bindings-node) and the public shardid.d.ts.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

version=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"/\1/p}' "$root/Cargo.lock")
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$version" ]; then
    # Without --locked: a locked dependency of the CLI is missing from the registry here.
    cargo install wasm-bindgen-cli --version "=$version"
fi
[ -x node_modules/.bin/wasm-opt ] || npm install --no-audit --no-fund --loglevel=error >/dev/null

# Small code (every page that uses the module downloads it) that is still fast: opt-level "s"
# is ~150 bytes gzipped more than "z" and decodes batches ~1.5x faster (BENCHMARKS.md).
CARGO_PROFILE_RELEASE_OPT_LEVEL=${SHARDID_WASM_OPT_LEVEL:-s} CARGO_PROFILE_RELEASE_PANIC=abort \
    cargo build --quiet --locked --release -p shardid-wasm --target wasm32-unknown-unknown
wasm="$root/target/wasm32-unknown-unknown/release/shardid_wasm.wasm"

rm -rf pkg
for target in web bundler nodejs; do
    out=pkg/${target/nodejs/node}
    wasm-bindgen --target "$target" --out-dir "$out" --out-name shardid_wasm "$wasm"
    node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
        --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$out/shardid_wasm_bg.wasm" -o "$out/shardid_wasm_bg.wasm"
    cp "$root/bindings-node/shardid.d.ts" "$root/bindings-node/errors.generated.d.ts" "$out/"
done

# The shared classes (api.js, from the Node package) over this module's backend
# (js/backend.js): CommonJS for Node, ES modules for the web and bundlers.
shared=("$root/bindings-node/api.js" "$root/bindings-node/errors.js" "$root/bindings-node/errors.generated.js" js/backend.js)
cp "${shared[@]}" pkg/node/
cat > pkg/node/shardid.js <<'JS'
'use strict'
// shardid over the WebAssembly module, for Node (CommonJS).
const raw = require('./shardid_wasm.js')
const memory = raw.wasmMemory()
module.exports = require('./api.js').makeApi(require('./backend.js').makeBackend(raw, () => memory))
JS
for dir in pkg/web pkg/bundler; do
    for file in "${shared[@]}"; do
        sed -e "s/^'use strict'$//" -e 's/^module.exports = { \(.*\) }$/export { \1 }/' \
            -e "s/^const { \(.*\) } = require('\(.*\)')$/import { \1 } from '\2'/" \
            "$file" > "$dir/$(basename "$file")"
    done
done
cat > pkg/web/shardid.js <<'JS'
// shardid over the WebAssembly module, for browsers: `await init()` once, then use the classes.
import wasmInit, * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { makeBackend } from './backend.js'

let api
export default async function init(input) {
  await wasmInit(input)
  const memory = raw.wasmMemory()
  api = makeApi(makeBackend(raw, () => memory))
  return api
}
export function shardid() {
  if (!api) throw new Error('call `await init()` first')
  return api
}
JS
cat > pkg/bundler/shardid.js <<'JS'
// shardid over the WebAssembly module, for bundlers (the bundler instantiates the module).
import * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { makeBackend } from './backend.js'

const memory = raw.wasmMemory()
const api = makeApi(makeBackend(raw, () => memory))
export const { Layout, Generator, Parts, ShardIdError, nowMs, version, threadsShareState } = api
export default api
JS
gzip -9 -c pkg/web/shardid_wasm_bg.wasm | wc -c > pkg/web/shardid_wasm_bg.wasm.gz-size
echo "built pkg/{web,bundler,node}: $(wc -c < pkg/web/shardid_wasm_bg.wasm) bytes, $(cat pkg/web/shardid_wasm_bg.wasm.gz-size) gzipped"
