#!/usr/bin/env bash
# Every test and check, as CI runs them. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

# Each step says how long the one before it took (CI has a time budget: see where it goes).
step_started=$SECONDS
step() {
    printf '    (%d s)\n\n==> %s\n' "$((SECONDS - step_started))" "$*"
    step_started=$SECONDS
}

step "format"
cargo fmt --all --check
cargo fmt --manifest-path fuzz/Cargo.toml --check

step "clippy (warnings are errors; --all-targets type-checks the tests, examples and benchmarks)"
# The benchmarks are not also built: `cargo bench --no-run` links every bench with fat LTO and
# debug info (the release profile's), 7-17 minutes of a CI run for what clippy already checked.
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked -p shardid --no-default-features -- -D warnings
cargo clippy --locked -p shardid --no-default-features --features alloc -- -D warnings
cargo clippy --locked -p shardid --features postgres,serial --all-targets -- -D warnings
cargo clippy --locked -p shardid --features mysql --all-targets -- -D warnings
cargo clippy --locked -p shardid --features serde --all-targets -- -D warnings
cargo clippy --locked -p shardid --no-default-features --features serial -- -D warnings

step "no_std builds: bare metal without 64-bit atomics, and WebAssembly"
cargo clippy --locked -p shardid-wasm --target wasm32-unknown-unknown -- -D warnings
cargo clippy --locked -p shardid-wasm --target wasm32-unknown-unknown --features public -- -D warnings
cargo build --locked -p shardid --no-default-features --target thumbv7em-none-eabihf
cargo build --locked -p shardid --no-default-features --features serde --target thumbv7em-none-eabihf
cargo build --locked -p shardid --no-default-features --target wasm32-unknown-unknown

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --locked -p shardid --no-deps

step "docs as docs.rs builds them: every feature, each item marked with the features it needs"
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc --locked -p shardid --all-features --no-deps --target-dir target/docsrs

step "tests: core (with and without std), conformance vectors, README examples"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --locked -p shardid --no-default-features --lib --tests 2>&1 | tee -a "$log"
cargo test --locked --workspace 2>&1 | tee -a "$log"
cargo test --locked -p shardid --features serde --test serde 2>&1 | tee -a "$log"
cargo test --locked -p shardid --features serde --doc serde 2>&1 | tee -a "$log"

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
step "the declared MSRV, Rust $msrv: the core with every feature (its tests included) and every binding type-check"
# Type-checked, as cargo's own `rust-version` checks and cargo-hack do: what an older compiler
# refuses is a language or library item, which `check` finds; running the tests a second time
# with it (a full build of every dependency) took over 10 minutes of a CI run.
cargo "+$msrv" check --locked -q -p shardid --features postgres,mysql,serde,serial --all-targets --target-dir target/msrv
cargo "+$msrv" check --locked -q --workspace --exclude shardid-bench --target-dir target/msrv

step "loom: the generator's state word, the registry, the ceiling rule, the segment allocator, the dictionary cache, the serials' period switch and a lease's count of losses, over every interleaving"
# Its own target directory: `--cfg loom` rebuilds every crate, and would otherwise evict the
# normal build's artifacts.
RUSTFLAGS="--cfg loom" cargo test --locked -p shardid --lib --release --features serial --target-dir target/loom loom 2>&1 | tee -a "$log"

step "Miri: the core's unit tests and its error-kind, registry and clock-anchor tests, checked for undefined behaviour"
# Fewer proptest cases (Miri interprets every step); the clock tests read the real clock. The
# registry's states are leaked on purpose (never freed: see registry.rs), so only its test runs
# with leak checks off.
export PROPTEST_CASES=16
# The core forbids unsafe code: what Miri checks is the unsafe code of std and the dependencies
# under our calls (the registry's statics, the clock anchor, threads). Tests that only loop over
# the core's safe arithmetic run natively in the step above, not here: the layout and decimal
# suites (proptests) took 402 s and 185 s under Miri in a clean run on this machine, and four unit tests (a cache
# filled far past its bound, threads sharing one cache, 10,000 keys rehashed over servers, every
# bad string and ID position) 40 s to over 4 minutes each, more than all the others together.
MIRIFLAGS="-Zmiri-disable-isolation" cargo +nightly miri test --locked -q -p shardid \
    --lib --test kinds --test anchor -- \
    --skip memory_stays_bounded_and_recent_entries_survive --skip threads_share_one_cache \
    --skip adding_a_server_moves_only_to_the_new_one --skip bad_strings_and_ids_are_refused_with_their_position \
    2>&1 | tee -a "$log"
MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-ignore-leaks" cargo +nightly miri test --locked -q -p shardid \
    --test registry 2>&1 | tee -a "$log"
unset PROPTEST_CASES

step "fuzzing: every cargo-fuzz target for 15 s from its checked-in corpus"
scripts/fuzz.sh 15 2>&1 | tee -a "$log"

step "C: libshardid installed with make, the vectors, bad input, threads, sanitizers, valgrind"
tests/c/run.sh 2>&1 | tee -a "$log"

step "Python: the wheel in a fresh virtualenv, vectors, bad input, threads, Django, stubtest"
tests/python/run.sh 2>&1 | tee -a "$log"

step "JS: the Node addon and the WebAssembly module, one suite for both"
tests/js/run.sh 2>&1 | tee -a "$log"

step "PostgreSQL: the emitted DDL on a throwaway server (vectors, uniqueness, Django), leases from Python and Node"
tests/postgres/run.sh 2>&1 | tee -a "$log"

step "MySQL and MariaDB: segments, the dictionary and next_id() on a throwaway MariaDB, from Python, Node and Rust"
tests/mysql/run.sh 2>&1 | tee -a "$log"

step "Docs: the book built (warnings are errors, links checked), every snippet of the book and the README run, the API references complete"
tests/docs/run.sh 2>&1 | tee -a "$log"

step "Browser: the example page in headless Chromium decodes every vector"
node tests/browser/browser.mjs 2>&1 | tee -a "$log"

step "Packaging: this platform's release artifacts (scripts/release.sh --host), installed and used as users do"
# This platform's artifacts only: the five other platforms are 11 of the step's 14 release builds;
# the release workflow builds and checks them all before it publishes.
SHARDID_PACKAGING_HOST_ONLY=1 tests/packaging/run.sh 2>&1 | tee -a "$log"

# One closing line for the whole run: cargo's last "test result" is often a crate's empty
# doc-test run, which says "0 passed" although every suite above ran.
step "done in $((SECONDS / 60)) min $((SECONDS % 60)) s"
awk '/^test result:/ { passed += $4; failed += $6 }
     END { printf "\ntests: %d passed, %d failed\n", passed, failed; exit (failed > 0 || passed == 0) }' "$log"
