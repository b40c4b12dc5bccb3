#!/usr/bin/env bash
# shardid-wasm in every runtime and bundler it names, installed as users install it (its npm
# tarball unpacked into node_modules/shardid-wasm): Cloudflare Workers (workerd), Deno, Bun,
# Node, a page with no bundler (an import map), a webpack and a Vite bundle in headless Chromium,
# each entry's types under tsc --strict against what the entry exports at run time, and the book's
# size table (sizes.mjs) against the package. The packaging step bundles the default entry with
# Vite and esbuild as well, from the packed tarballs. The runtimes, bundlers and TypeScript come from
# npm (package.json, package-lock.json: `npm ci`, run by scripts/setup.sh; done here when
# missing), none from GitHub. The package: dist/npm/shardid-wasm-VERSION.tgz with
# SHARDID_WASM_BUILT=1 (scripts/test.sh, after the release step), else bindings-wasm/pkg/npm
# packed (bindings-wasm/build.sh run first when it is missing). About 15 s; the line of each
# check says what it found. Ends with a "test result:" line in cargo's format.
set -uo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check_suite=edge
# shellcheck source=tests/check.sh
. ../check.sh

# The last package added to the lockfile (Vite): a checkout set up before it installs again.
[ -x node_modules/.bin/workerd ] && [ -x node_modules/.bin/vite ] || npm ci --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1 || { cat "$work/npm.log"; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
tarball=$root/dist/npm/shardid-wasm-$version.tgz
if [ -z "${SHARDID_WASM_BUILT:-}" ] || [ ! -f "$tarball" ]; then
    [ -f "$root/bindings-wasm/pkg/npm/package.json" ] || "$root/bindings-wasm/build.sh" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    (cd "$root/bindings-wasm/pkg/npm" && npm pack --silent --pack-destination "$work" >/dev/null)
    tarball=$(echo "$work"/shardid-wasm-*.tgz)
fi
rm -rf node_modules/shardid-wasm
mkdir -p node_modules/shardid-wasm
tar -xzf "$tarball" -C node_modules/shardid-wasm --strip-components=1
echo "shardid-wasm from $tarball"

# Node, Deno and Bun run app/runtime.mjs: app/checks.js's EXPECTED, shardid-wasm/web's init()
# given the module's bytes, the same classes from a second init(), nothing printed.
expected=$(node --input-type=module -e "import { EXPECTED } from './app/checks.js'
process.stdout.write(JSON.stringify({ ...EXPECTED, web: '32', webAgain: true, printed: [] }))")
# `runtime BINARY ARGS...`: runs BINARY ARGS... app/runtime.mjs; the last line is BINARY's version.
runtime() {
    local out
    out=$(cd app && "$@" runtime.mjs) || return 1
    echo "$out"
    [ "$out" = "$expected" ] || { echo "expected $expected"; return 1; }
    "$1" --version 2>/dev/null | head -n 1
}
export DENO_NO_UPDATE_CHECK=1 DENO_DIR=$work/deno
check_detail=1
check "Node: the package by name, shardid-wasm/public, shardid-wasm/web's init(bytes)" runtime node
check "Bun (npm's bun): the same" runtime "$PWD/node_modules/.bin/bun"
# --node-modules-dir=manual: Deno resolves the names in node_modules, as npm installed them.
check "Deno (npm's deno): the same" runtime "$PWD/node_modules/.bin/deno" run --allow-read --node-modules-dir=manual
check_detail=0

# Each of these prints its own "test edge::" lines; counted here. Run side by side (workerd and
# Chromium wait on their processes much of the time): the slowest alone sets the time.
scripts=(workerd.mjs pages.mjs names.mjs)
for script in "${scripts[@]}"; do
    node "$script" >"$work/$script.log" 2>&1 &
done
wait
for script in "${scripts[@]}"; do
    cat "$work/$script.log"
    passed=$((passed + $(grep -c '^test edge::.* \.\.\. ok' "$work/$script.log")))
    failed=$((failed + $(grep -c '^test edge::.* \.\.\. FAILED' "$work/$script.log")))
    grep -q '^test edge::' "$work/$script.log" || failed=$((failed + 1))
done

# The book's figures (docs/src/start/wasm.md's size table) are this package's.
check "docs/src/start/wasm.md's size table is what sizes.mjs measures on the package" node sizes.mjs
sed -n 's/^| \(.*\) | \(.*\) | \(.*\) |$/    \1: \2; gzip -9: \3/p' "$work/check.log" | grep -v -- '---\|^    what:'

finish "(edge runtimes and bundlers: tests/edge/run.sh)"
