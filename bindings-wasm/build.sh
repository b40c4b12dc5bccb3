#!/usr/bin/env bash
# Builds the WebAssembly module into bindings-wasm/pkg/ (not committed), from the registries
# only: wasm-bindgen's generator (wasm-bindgen-cli-support at the exact version of the crate in
# Cargo.lock, built by scripts/wasm-bindgen/ into the target directory: ~35 s on a fresh
# machine where `cargo install wasm-bindgen-cli` took 4-6 minutes), wasm-opt from the npm
# package `binaryen`.
#   pkg/web/      ES module for browsers (`--target web`): import init, { Layout, ... }
#   pkg/bundler/  for bundlers (`--target bundler`)
#   pkg/node/     CommonJS for Node (`--target nodejs`)
# Each gets the shared api.js classes (from bindings-node), its entry shardid.js and the types
# of what that entry exports (js/entry-*), and public.js, the same over the module with public
# IDs (shardid_wasm_public).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

target_dir=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"/\1/p}' "$root/Cargo.lock")
grep -q "^wasm-bindgen-cli-support = \"=$version\"" "$root/scripts/wasm-bindgen/Cargo.toml" || {
    echo "build.sh: scripts/wasm-bindgen/Cargo.toml must use wasm-bindgen-cli-support =$version (Cargo.lock's wasm-bindgen)" >&2
    exit 1
}
# Its own target directory: the module's build below sets the release profile's options.
cargo build --quiet --locked --release --manifest-path "$root/scripts/wasm-bindgen/Cargo.toml" \
    --target-dir "$target_dir/wasm-bindgen"
wasm_bindgen=$target_dir/wasm-bindgen/release/shardid-wasm-bindgen
[ -x node_modules/.bin/wasm-opt ] || npm install --no-audit --no-fund --loglevel=error >/dev/null

# Two modules: the default one (shardid_wasm: layouts, decoding, generators), and the same with
# public IDs (shardid_wasm_public, the `public` feature: `shardid-wasm/public`), which would
# not fit the default one's size budget; a page that does not need them does not download them.
# Small code (every page that uses the module downloads it) that is still fast: opt-level "s"
# is ~150 bytes gzipped more than "z" and decodes batches ~1.5x faster (BENCHMARKS.md).
built=$(mktemp -d)
trap 'rm -rf "$built"' EXIT
for module in shardid_wasm shardid_wasm_public; do
    features=()
    [ "$module" = shardid_wasm_public ] && features=(--features public)
    CARGO_PROFILE_RELEASE_OPT_LEVEL=${SHARDID_WASM_OPT_LEVEL:-s} CARGO_PROFILE_RELEASE_PANIC=abort \
        cargo build --quiet --locked --release -p shardid-wasm --target wasm32-unknown-unknown "${features[@]}"
    cp "$target_dir/wasm32-unknown-unknown/release/shardid_wasm.wasm" "$built/$module.wasm"
done

rm -rf pkg
for target in web bundler nodejs; do
    out=pkg/${target/nodejs/node}
    for module in shardid_wasm shardid_wasm_public; do
        "$wasm_bindgen" --target "$target" --out-dir "$out" --out-name "$module" "$built/$module.wasm"
        node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
            --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
            "$out/${module}_bg.wasm" -o "$out/${module}_bg.wasm"
    done
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
# Each target's entry (shardid.js) and the public module's (public.js: the same entry over
# shardid_wasm_public, exporting PublicIds, checkPublicId and fromUuid too, which the default
# module's entries and types leave out: there they would only throw UNSUPPORTED).
public_js() {
    sed -e "s|shardid_wasm\.js|shardid_wasm_public.js|" -e "s|shardid_wasm_bg\.wasm|shardid_wasm_public_bg.wasm|" \
        -e "s|threadsShareState } = api|threadsShareState, PublicIds, checkPublicId, fromUuid } = api|" "$1"
}
# Types: the public entries' over wasm-api-public.d.ts (its Layout with the UUIDv7 bridge, public
# IDs, fromUuid), the default ones' over wasm-api.d.ts.
public_dts() {
    sed -e "s|wasm-api\.js'|wasm-api-public.js'|" \
        -e "s|threadsShareState } from|threadsShareState, PublicIds, checkPublicId, fromUuid } from|" \
        -e "s|U64Input } from|U64Input, PublicIdFormat, PublicIdsOptions } from|" \
        -e "s|^  type EncodingName = api.EncodingName\$|&\n  type PublicIdFormat = wasm.PublicIdFormat\n  type PublicIdsOptions = wasm.PublicIdsOptions\n  type PublicIds = wasm.PublicIds|" "$1"
}
for target in node web bundler; do
    case $target in node) entry=js/entry-node.cjs ;; *) entry=js/entry-$target.js ;; esac
    cp "$entry" "pkg/$target/shardid.js"
    public_js "$entry" > "pkg/$target/public.js"
    cp "js/entry-$target.d.ts" "pkg/$target/shardid.d.ts"
    public_dts "js/entry-$target.d.ts" > "pkg/$target/public.d.ts"
    cp "$root/bindings-node/index.d.ts" "pkg/$target/api.d.ts"
    cp js/wasm-api.d.ts js/wasm-api-public.d.ts "pkg/$target/"
    cp "$root/bindings-node/core.generated.d.ts" "pkg/$target/"
done

# The npm package shardid-wasm (pkg/npm/, packed by scripts/release.sh): web/ (ES modules, the
# .wasm fetched beside them), node/ (CommonJS), and inline/, the `import` entry, whose module
# bytes are inside the JavaScript so that bundlers need no plugin and no copy step.
mkdir -p pkg/npm/inline
cp npm/package.json npm/README.md "$root/LICENSE-MIT" "$root/LICENSE-APACHE" pkg/npm/
cp -r pkg/web pkg/node pkg/npm/
# The .wasm files' types, for `import wasm from 'shardid-wasm/web/shardid_wasm_bg.wasm'` (Workers).
for module in shardid_wasm shardid_wasm_public; do cp js/wasm-module.d.cts "pkg/npm/web/${module}_bg.wasm.d.cts"; done
echo '{ "type": "commonjs" }' > pkg/npm/node/package.json
# `shardid-wasm/public` for resolvers that do not read `exports` (TypeScript's node10): a
# directory of that name whose package.json points at the CommonJS entry.
mkdir -p pkg/npm/public
echo '{ "main": "../node/public.js", "types": "../node/public.d.ts" }' > pkg/npm/public/package.json
cp js/entry-inline.js pkg/npm/inline/shardid.js
public_js js/entry-inline.js | sed "s|shardid_wasm_bytes\.js|shardid_wasm_public_bytes.js|" > pkg/npm/inline/public.js
cp js/entry-inline.d.ts pkg/npm/inline/shardid.d.ts
public_dts js/entry-inline.d.ts > pkg/npm/inline/public.d.ts
# workerd/ (the `workerd` condition: Cloudflare Workers): the .wasm imported as a module beside
# web/'s glue, as workerd compiles no WebAssembly from bytes; the same types as inline/.
mkdir -p pkg/npm/workerd
cp js/entry-workerd.js pkg/npm/workerd/shardid.js
public_js js/entry-workerd.js > pkg/npm/workerd/public.js
cp js/entry-inline.d.ts pkg/npm/workerd/shardid.d.ts
public_dts js/entry-inline.d.ts > pkg/npm/workerd/public.d.ts
# Every public entry got the names and the module it should (a sed above that stopped matching
# its source would leave the default module's).
for file in pkg/{node,web,bundler}/public.js pkg/npm/{inline,workerd}/public.js; do
    grep -q "shardid_wasm_public" "$file" || { echo "build.sh: $file is not over shardid_wasm_public" >&2; exit 1; }
done
for file in pkg/{bundler,npm/inline,npm/workerd}/public.js pkg/{bundler,npm/inline,npm/workerd}/public.d.ts; do
    grep -q "PublicIds, checkPublicId, fromUuid }" "$file" || { echo "build.sh: $file does not export PublicIds" >&2; exit 1; }
done
for file in pkg/{node,web,bundler}/public.d.ts pkg/npm/{inline,workerd}/public.d.ts; do
    grep -q "wasm-api-public\.js'" "$file" || { echo "build.sh: $file is not over wasm-api-public.d.ts" >&2; exit 1; }
done
grep -q "type PublicIds = wasm.PublicIds" pkg/node/public.d.ts || { echo "build.sh: pkg/node/public.d.ts names no PublicIds type" >&2; exit 1; }
! grep -l "wasm-api-public\.js'" pkg/{node,web,bundler}/shardid.d.ts pkg/npm/{inline,workerd}/shardid.d.ts || exit 1
for module in shardid_wasm shardid_wasm_public; do
    # inline/'s own copy of the glue, without the default `new URL('<module>_bg.wasm',
    # import.meta.url)`: Vite would copy the .wasm it names into every build, never fetched.
    grep -q "new URL('${module}_bg.wasm', import.meta.url)" "pkg/web/$module.js"
    sed "s|new URL('${module}_bg.wasm', import.meta.url)|undefined|" "pkg/web/$module.js" > "pkg/npm/inline/$module.js"
    {
        echo "// Generated by bindings-wasm/build.sh: web/${module}_bg.wasm in base64."
        printf "export const wasmBase64 = '%s'\n" "$(base64 -w0 "pkg/web/${module}_bg.wasm")"
    } > "pkg/npm/inline/${module}_bytes.js"
    gzip -9 -c "pkg/web/${module}_bg.wasm" | wc -c > "pkg/web/${module}_bg.wasm.gz-size"
done
echo "built pkg/{web,bundler,node}: $(wc -c < pkg/web/shardid_wasm_bg.wasm) bytes, $(cat pkg/web/shardid_wasm_bg.wasm.gz-size) gzipped; with public IDs (public.js) $(wc -c < pkg/web/shardid_wasm_public_bg.wasm) bytes, $(cat pkg/web/shardid_wasm_public_bg.wasm.gz-size) gzipped"
