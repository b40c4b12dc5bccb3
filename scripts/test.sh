#!/usr/bin/env bash
# Every test and check, as CI runs them. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n==> %s\n' "$*"; }

step "format"
cargo fmt --all --check

step "clippy (warnings are errors)"
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked -p shardid --no-default-features -- -D warnings

step "no_std builds: bare metal without 64-bit atomics, and WebAssembly"
cargo build --locked -p shardid --no-default-features --target thumbv7em-none-eabihf
cargo build --locked -p shardid --no-default-features --target wasm32-unknown-unknown

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --locked -p shardid --no-deps

step "the benchmarks compile"
cargo bench --locked -p shardid-bench --no-run

step "tests: core (with and without std), conformance vectors, README examples"
cargo test --locked -p shardid --no-default-features --lib --tests
cargo test --locked --workspace
