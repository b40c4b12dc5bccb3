#!/usr/bin/env bash
# The main job: make and decode IDs in every language shardid ships.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== Rust"
cargo run --quiet --locked -p shardid --example demo

echo
echo "== C: libshardid installed with make, a program built with pkg-config"
make -s -C bindings-c install PREFIX="$work/prefix" >/dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -std=c99 -Wall -Werror examples/c/demo.c $(pkg-config --cflags --libs shardid) -o "$work/demo"
LD_LIBRARY_PATH="$work/prefix/lib" "$work/demo"

echo
echo "== Python: the shardid wheel, built with maturin and installed into target/python-venv"
SHARDID_PYTHON_VENV="$PWD/target/python-venv" tests/python/run.sh --install-only >/dev/null 2>&1 \
    || SHARDID_PYTHON_VENV="$PWD/target/python-venv" tests/python/run.sh --install-only
(cd "$work" && "$OLDPWD/target/python-venv/bin/python" "$OLDPWD/examples/python/demo.py")

echo
echo "== Node: the shardid package (napi-rs addon)"
(cd bindings-node && npm install --no-audit --no-fund --loglevel=error >/dev/null \
    && npm run build --silent >/dev/null 2>&1)
node examples/node/demo.mjs

echo
echo "== WebAssembly: the module decoding (and making) IDs under Node"
bindings-wasm/build.sh >/dev/null
node examples/wasm/demo.cjs

echo
echo "== PostgreSQL: the emitted next_id() on a throwaway server, decoded on both sides"
(cd "$work" && "$OLDPWD/target/python-venv/bin/python" "$OLDPWD/examples/postgres/demo.py")

echo
echo "== Dense IDs from segments: Python, Node and Rust taking turns on one tag of a throwaway server"
cargo build --quiet --locked -p shardid --features postgres --example segments
(cd "$work" && "$OLDPWD/target/python-venv/bin/python" "$OLDPWD/examples/postgres/segments.py" \
    "$OLDPWD/target/debug/examples/segments")

echo
echo "== The string <-> ID dictionary: Python, Node and Rust sharing one topic of a throwaway server"
cargo build --quiet --locked -p shardid --features postgres --example dictionary
(cd "$work" && "$OLDPWD/target/python-venv/bin/python" "$OLDPWD/examples/postgres/dictionary.py" \
    "$OLDPWD/target/debug/examples/dictionary")
