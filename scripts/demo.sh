#!/usr/bin/env bash
# The main job: make and decode IDs in every language shardid ships.
# Installs only what it runs (scripts/setup.sh --demo: no test tools) and builds into
# target/demo/, unoptimized and without LTO for a quick first run (the demo shows behaviour,
# not speed; scripts/release.sh builds the optimized artifacts). The installs and builds run
# first, several at once, then every section prints; run again, it only prints.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/setup.sh --demo
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin
[ -d "$cargo_bin" ] && export PATH="$cargo_bin:$PATH"
work=$(mktemp -d)
jobs_started=()
cleanup() {
    local pid
    for pid in ${jobs_started[@]+"${jobs_started[@]}"}; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

target=${CARGO_TARGET_DIR:-$root/target}/demo
export CARGO_TARGET_DIR=$target/native
venv=$target/python-venv
# The native builds (Rust, libshardid, the wheel, the Node addon) share one profile, so the
# core and its dependencies build once: the release profile without LTO or optimization.
quick=(env CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
       CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=false)

# in_background NAME COMMAND...: runs a preparation step beside the others, its output in a log.
in_background() {
    local name=$1
    shift
    ("$@") >"$work/$name.log" 2>&1 &
    jobs_started+=($!)
    eval "pid_$name=$!"
}
# finish NAME: waits for that step; on failure, shows its log and stops.
finish() {
    local pid_var=pid_$1
    wait "${!pid_var}" || { echo "demo: preparing $1 failed:" >&2; cat "$work/$1.log" >&2; exit 1; }
}

python_deps() {
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    # The versions the tests pin (maturin builds the wheel, psycopg talks to PostgreSQL).
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        $(grep -E '^(maturin|psycopg\[binary\])==' tests/python/requirements.txt)
}
node_deps() { (cd bindings-node && npm install --no-audit --no-fund --loglevel=error); }
# The WebAssembly module is built in a target directory of its own, so that it builds beside
# the native builds instead of waiting for their lock. Run again, it is rebuilt only when a
# file it is made of changed since (its 6 wasm-opt runs under Node take most of a rerun).
wasm() {
    local stamp=$target/wasm/built.stamp
    if [ -f "$stamp" ] && [ -f bindings-wasm/pkg/node/shardid.js ] && [ -z "$(find core/src core/Cargo.toml \
        bindings-wasm/src bindings-wasm/js bindings-wasm/npm bindings-wasm/Cargo.toml bindings-wasm/build.sh \
        bindings-node/api.js bindings-node/errors.js bindings-node/core.generated.js bindings-node/core.generated.d.ts \
        bindings-node/index.d.ts scripts/wasm-bindgen/src scripts/wasm-bindgen/Cargo.toml Cargo.lock \
        -newer "$stamp" -type f -print -quit)" ]; then
        return 0
    fi
    CARGO_TARGET_DIR=$target/wasm bindings-wasm/build.sh && touch "$stamp"
}

echo "== Preparing (the first run installs and builds: a few minutes; run again, seconds)"
in_background python_deps python_deps
in_background node_deps node_deps
in_background wasm wasm
"${quick[@]}" cargo build --quiet --locked --release -p shardid --features postgres,sqlite,serial \
    --example demo --example segments --example dictionary --example sqlite
"${quick[@]}" make -s -C bindings-c install PREFIX="$work/prefix" TARGET_DIR="$CARGO_TARGET_DIR" \
    >"$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }
finish python_deps
"${quick[@]}" "$venv/bin/maturin" build --quiet --release --locked -m bindings-python/Cargo.toml \
    -o "$work/wheels" >"$work/maturin.log" 2>&1 || { cat "$work/maturin.log"; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$work"/wheels/shardid-*.whl
finish node_deps
(cd bindings-node && "${quick[@]}" npm run build --silent) >"$work/napi.log" 2>&1 || { cat "$work/napi.log"; exit 1; }
finish wasm
examples=$CARGO_TARGET_DIR/release/examples

echo
echo "== Rust"
"$examples/demo"

echo
echo "== C: libshardid installed with make, a program built with pkg-config"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -std=c99 -Wall -Werror examples/c/demo.c $(pkg-config --cflags --libs shardid) -o "$work/demo"
LD_LIBRARY_PATH="$work/prefix/lib" "$work/demo"

echo
echo "== Python: the shardid wheel, built with maturin and installed into a virtualenv"
(cd "$work" && "$venv/bin/python" "$root/examples/python/demo.py")

echo
echo "== Node: the shardid package (napi-rs addon)"
node examples/node/demo.mjs

echo
echo "== WebAssembly: the module decoding (and making) IDs under Node"
node examples/wasm/demo.cjs

echo
echo "== PostgreSQL: the emitted next_id() on a throwaway server, decoded on both sides"
(cd "$work" && "$venv/bin/python" "$root/examples/postgres/demo.py")

echo
echo "== Dense IDs from segments: Python, Node and Rust taking turns on one tag of a throwaway server"
(cd "$work" && "$venv/bin/python" "$root/examples/postgres/segments.py" "$examples/segments")

echo
echo "== The string <-> ID dictionary: Python, Node and Rust sharing one topic of a throwaway server"
(cd "$work" && "$venv/bin/python" "$root/examples/postgres/dictionary.py" "$examples/dictionary")

echo
echo "== SQLite: dense IDs, a serial and the dictionary in one file, no server: Python, Node and Rust in turn"
(cd "$work" && "$venv/bin/python" "$root/examples/sqlite/demo.py" "$examples/sqlite")
