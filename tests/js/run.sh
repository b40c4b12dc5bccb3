#!/usr/bin/env bash
# The JS tests: installs the Node package's npm dependencies, builds the addon with
# @napi-rs/cli (`npm run build`; or takes SHARDID_NODE_ADDON's, see scripts/node-addon.sh),
# fails when the checked-in generated native.generated.js / native.generated.d.ts differ from
# what the build writes, checks the public types with tsc, then runs the
# shared JS suite (tests/js/*.test.mjs) with `node --test` against the addon and against the
# WebAssembly module (bindings-wasm/build.sh), and the SQLite tests again under Node 22 on
# node:sqlite (the packed package, no better-sqlite3: scripts/node22.sh installs that Node).
# Ends with a "test result:" line in cargo's format so scripts/test.sh counts these too.
set -uo pipefail
cd "$(dirname "$0")/../../bindings-node"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# `npm install`, not `npm ci`: the registry here lacks some other-platform optional packages
# of @napi-rs/cli's dependencies (see shared/TOOLCHAIN.md).
cp native.generated.js native.generated.d.ts "$work/"
../scripts/node-addon.sh >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# napi writes the generated files while it builds. With SHARDID_NODE_ADDON (scripts/test.sh:
# release.sh's addon, put in place above) they come from a debug build of the same sources
# into a scratch directory; without it, from the build above.
generated=.
if [ -n "${SHARDID_NODE_ADDON:-}" ]; then
    generated=$work/napi
    npx napi build --platform --js native.generated.js --dts native.generated.d.ts -o "$generated" \
        >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
fi

check_suite=js
check_tail=30
# shellcheck source=tests/check.sh
. ../tests/check.sh
if cmp -s "$generated/native.generated.js" "$work/native.generated.js" && cmp -s "$generated/native.generated.d.ts" "$work/native.generated.d.ts"; then
    passed=$((passed + 1))
    echo "test js::generated native.generated.js and native.generated.d.ts are fresh ... ok"
else
    failed=$((failed + 1))
    echo "test js::generated native.generated.js and native.generated.d.ts are fresh ... FAILED"
    echo "    the build changed them: run (cd bindings-node && npm run build) and commit"
    diff "$work/native.generated.d.ts" "$generated/native.generated.d.ts" | head -20
fi

check "public types pass tsc --noEmit --strict" npx tsc -p ../tests/js/types/tsconfig.json
# `using` / `await using` (dispose.ts) with a lib that has esnext.disposable and @types/node, as
# well as with the one above, which has neither.
check "public types pass tsc --strict with lib ESNext and @types/node" npx tsc -p ../tests/js/types/tsconfig.esnext.json

# The npm packages as users install them (tarballs in a fresh project, CommonJS, ESM, npx
# shardid, no Rust on PATH) are tested by tests/packaging/run.sh.

# A panic inside the addon is an error with code PANIC, not an abort of Node: against an addon
# built with the test-only `panic-probe` feature, in the target directory and for the target
# (the host's triple) of the napi build above, whose dependencies it reuses: 3.4 s after it,
# where a target directory of its own compiled them again (24.5 s, 23.9 CPU-s).
panic_probe() {
    local target=${CARGO_TARGET_DIR:-$PWD/../target} host
    host=$(rustc -vV | sed -n 's/^host: //p')
    cargo build --locked -q -p shardid-node --features panic-probe --target "$host" --target-dir "$target" || return 1
    cp "$target/$host/debug/libshardid_node.so" "$work/panic-probe.node"
    RUST_BACKTRACE=0 node ../tests/js/panic_probe.cjs "$work/panic-probe.node"
}
check "a panic in the addon is an error with code PANIC, not an abort" panic_probe

# The shared suite, once per target: the Node addon, then the WebAssembly build under Node
# (public IDs: the default module says they are in shardid-wasm/public, whose module runs
# their tests).
# SUITE_NODE and SUITE_DIR: another Node, run in another directory (the node:sqlite run below).
suite() {
    local label=$1 log=$work/$1.log tests=${SUITE_TESTS:-../tests/js/}
    shift
    (cd "${SUITE_DIR:-.}" && env "$@" "${SUITE_NODE:-node}" --test $tests) >"$log" 2>&1
    echo "  suite against the $label:"
    grep -E '^(not )?ok ' "$log" | sed 's/^/    /'
    grep -B2 -A25 '^not ok' "$log" | head -80
    passed=$((passed + $(sed -n 's/^# pass //p' "$log")))
    failed=$((failed + $(sed -n 's/^# fail //p' "$log")))
}
suite "Node addon"
# The SQLite tests again on Node's own node:sqlite, the driver the package falls back to where
# better-sqlite3 is not installed: under Node 22 (scripts/node22.sh, installed by
# scripts/setup.sh), on the package as npm packs it (its `files`) with the addon beside it, in a
# scratch directory with no node_modules (no better-sqlite3 to find), the test files in the
# same places relative to it as in the repository. SHARDID_SQLITE_DRIVER: a test checks that
# the package picked node:sqlite. (Measured: 0.7 s to pack, 6-12 s to run, 20 s under load.)
node_sqlite_package() {
    local dir=$work/node-sqlite
    mkdir -p "$dir/bindings-node" "$dir/tests/js"
    npm pack --silent --pack-destination "$dir" >/dev/null &&
        tar -xzf "$dir"/shardid-*.tgz -C "$dir/bindings-node" --strip-components=1 &&
        cp shardid.*.node "$dir/bindings-node/" &&
        cp ../tests/js/sqlite*.mjs "$dir/tests/js/" &&
        echo "$dir"
}
if node22=$(../scripts/node22.sh --check 2>"$work/node22.log") && dir=$(node_sqlite_package 2>"$work/node22.log"); then
    SUITE_NODE=$node22 SUITE_DIR=$dir SUITE_TESTS="tests/js/sqlite.test.mjs tests/js/sqlite-lease.test.mjs" \
        suite "Node addon on Node 22's node:sqlite (no better-sqlite3)" SHARDID_SQLITE_DRIVER=node:sqlite
else
    failed=$((failed + 1))
    echo "test js::the SQLite tests on Node 22's node:sqlite ... FAILED"
    sed 's/^/    /' "$work/node22.log"
fi
# SHARDID_WASM_BUILT=1 (scripts/test.sh, after release.sh ran bindings-wasm/build.sh): the
# module in bindings-wasm/pkg/ is the release build; tested as it is.
wasm_build() {
    if [ -n "${SHARDID_WASM_BUILT:-}" ] && [ -f ../bindings-wasm/pkg/npm/package.json ]; then
        echo "the release step's bindings-wasm/pkg/"
    else
        ../bindings-wasm/build.sh
    fi
}
if wasm_build >"$work/wasm-build.log" 2>&1; then
    tail -n 1 "$work/wasm-build.log"
    # The size budget: decoding plus generation in at most 8 KB gzipped.
    gz=$(gzip -9 -c ../bindings-wasm/pkg/web/shardid_wasm_bg.wasm | wc -c)
    check "the optimized .wasm is at most 8192 bytes gzipped ($gz)" test "$gz" -le 8192
    # With public IDs (shardid-wasm/public, a module of its own): Speck, three encodings and
    # their checks on top of everything above.
    gz=$(gzip -9 -c ../bindings-wasm/pkg/web/shardid_wasm_public_bg.wasm | wc -c)
    check "the .wasm with public IDs is at most 16384 bytes gzipped ($gz)" test "$gz" -le 16384
    check "each WebAssembly target's types pass tsc --noEmit --strict" npx tsc -p ../tests/js/types/tsconfig.wasm.json
    suite "WebAssembly module" SHARDID_JS_MODULE="$PWD/../bindings-wasm/pkg/node/shardid.js" SHARDID_JS_PUBLIC_IDS=unsupported
    SUITE_TESTS="../tests/js/public.test.mjs ../tests/js/api.test.mjs ../tests/js/uuid.test.mjs" \
        suite "WebAssembly module with public IDs" SHARDID_JS_MODULE="$PWD/../bindings-wasm/pkg/node/public.js"
else
    failed=$((failed + 1))
    echo "test js::the WebAssembly module builds ... FAILED"
    tail -30 "$work/wasm-build.log"
fi

finish "(JS: Node addon + WebAssembly, tests/js/run.sh)"
