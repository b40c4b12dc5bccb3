#!/usr/bin/env bash
# Builds the WebAssembly module into bindings-wasm/pkg/ (not committed), from the registries
# only: wasm-bindgen-cli at the exact version of the crate in Cargo.lock (installed once with
# `cargo install`), wasm-opt from the npm package `binaryen`.
#   pkg/web/      ES module for browsers (`--target web`): import init, { Layout, ... }
#   pkg/bundler/  for bundlers (`--target bundler`)
#   pkg/node/     CommonJS for Node (`--target nodejs`)
# Each gets the shared api.js classes (from bindings-node), its entry shardid.js and the types
# of what that entry exports (js/entry-*).
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
done

# The shared classes (api.js and errors.js, from the Node package) over this module's backend
# (js/backend.js), and each target's entry (js/entry-*): CommonJS for Node, ES modules for the
# web and bundlers, converted from the CommonJS sources. Types: the Node package's (api.d.ts)
# under each target's own entry types.
shared=("$root/bindings-node/api.js" "$root/bindings-node/errors.js" "$root/bindings-node/core.generated.js" js/backend.js)
cp "${shared[@]}" pkg/node/
for dir in pkg/web pkg/bundler; do
    for file in "${shared[@]}"; do
        sed -e "s/^'use strict'$//" -e 's/^module.exports = { \(.*\) }$/export { \1 }/' \
            -e "s/^const { \(.*\) } = require('\(.*\)')$/import { \1 } from '\2'/" \
            "$file" > "$dir/$(basename "$file")"
    done
done
for target in node web bundler; do
    case $target in node) entry=js/entry-node.cjs ;; *) entry=js/entry-$target.js ;; esac
    cp "$entry" "pkg/$target/shardid.js"
    cp "js/entry-$target.d.ts" "pkg/$target/shardid.d.ts"
    cp "$root/bindings-node/index.d.ts" "pkg/$target/api.d.ts"
    cp "$root/bindings-node/core.generated.d.ts" "pkg/$target/"
done
gzip -9 -c pkg/web/shardid_wasm_bg.wasm | wc -c > pkg/web/shardid_wasm_bg.wasm.gz-size
echo "built pkg/{web,bundler,node}: $(wc -c < pkg/web/shardid_wasm_bg.wasm) bytes, $(cat pkg/web/shardid_wasm_bg.wasm.gz-size) gzipped"
