#!/usr/bin/env bash
# Every test and check, as CI runs them. Installs what it needs first (scripts/setup.sh: timed
# apart from the tests). Each artifact is built once and tested as built: the release step
# (scripts/release.sh --host) makes the wheel, the npm packages, the WebAssembly package and
# libshardid's tarball, and the C, Python, JS, PostgreSQL, MySQL and docs steps test those;
# the packaging step checks only what packaging adds (names, tags, installs, bundlers).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# Each step says how long it took (CI has a time budget: see where it goes), and the run ends
# with the three slowest.
step_started=$SECONDS
step_name=
timings=()
end_step() {
    [ -n "$step_name" ] || return 0
    local took=$((SECONDS - step_started))
    printf '    (%d s)\n' "$took"
    timings+=("$took $step_name")
}
# step NAME DESCRIPTION: NAME is what the closing summary calls it.
step() {
    end_step
    printf '\n==> %s: %s\n' "$1" "$2"
    step_name=$1
    step_started=$SECONDS
}

step "set-up" "scripts/setup.sh (idempotent; on a fresh machine its installs, not part of the tests' time)"
scripts/setup.sh
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin
[ -d "$cargo_bin" ] && export PATH="$cargo_bin:$PATH"
end_step
setup_seconds=$((SECONDS - step_started))
tests_started=$SECONDS
step_name=

# What a step leaves that no later step reads (a target directory of its own) goes when the step
# ends, in CI only: a run holds about 9 GB at its peak, and one CI run failed with a full disk.
# A developer keeps them, so the next run reuses them.
drop() {
    if [ "${CI:-}" = true ]; then rm -rf "$@"; fi
}
df -h . | sed -n '2s/^/disk before the tests: /p'

step "format" "cargo fmt --check"
cargo fmt --all --check
cargo fmt --manifest-path fuzz/Cargo.toml --check
cargo fmt --manifest-path scripts/wasm-bindgen/Cargo.toml --check

step "clippy" "warnings are errors; --all-targets type-checks the tests, examples and benchmarks"
# The benchmarks are not also built: `cargo bench --no-run` links every bench with fat LTO and
# debug info (the release profile's), 7-17 minutes of a CI run for what clippy already checked.
cargo clippy --locked --workspace --all-targets -- -D warnings
# The core's tests, examples and benchmarks with every feature on, once: a test, example or
# unit-test module behind a feature is checked here (behind `not(feature)`, by the default run
# above). Each feature set's library alone below: what a user builds, where a feature-gating
# mistake (an item used outside the features it needs, an import or helper unused in that set)
# shows. A set's tests, which CI builds and runs in the core tests step with its features, are
# not re-checked per set (each set's --all-targets re-checked the library twice and every test
# crate: five times over for the same files).
cargo clippy --locked -p shardid --all-features --all-targets -- -D warnings
cargo clippy --locked -p shardid --no-default-features -- -D warnings
cargo clippy --locked -p shardid --no-default-features --features alloc -- -D warnings
cargo clippy --locked -p shardid --no-default-features --features sql -- -D warnings
cargo clippy --locked -p shardid --no-default-features --features serial -- -D warnings
# tokio-postgres (the async client) rides on the postgres line: its crates are postgres's own.
cargo clippy --locked -p shardid --features postgres,serial,tokio-postgres -- -D warnings
cargo clippy --locked -p shardid --features mysql -- -D warnings
cargo clippy --locked -p shardid --features sqlite,serial -- -D warnings
cargo clippy --locked -p shardid --features redis -- -D warnings
cargo clippy --locked -p shardid --features serde -- -D warnings

step "no_std" "bare metal without 64-bit atomics, and WebAssembly"
cargo clippy --locked -p shardid-wasm --target wasm32-unknown-unknown -- -D warnings
cargo clippy --locked -p shardid-wasm --target wasm32-unknown-unknown --features public -- -D warnings
cargo build --locked -p shardid --no-default-features --target thumbv7em-none-eabihf
cargo build --locked -p shardid --no-default-features --features serde --target thumbv7em-none-eabihf
cargo build --locked -p shardid --no-default-features --target wasm32-unknown-unknown

step "rustdoc" "warnings are errors"
RUSTDOCFLAGS="-D warnings" cargo doc --locked -p shardid --no-deps

step "docs.rs" "the docs as docs.rs builds them: every feature, each item marked with the features it needs"
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc --locked -p shardid --all-features --no-deps --target-dir target/docsrs
drop target/docsrs

step "core tests" "the core with and without std, conformance vectors, README examples"
log=$(mktemp)
trap 'rm -f "$log" "$log.npm" "$log.miri"' EXIT
cargo test --locked -p shardid --no-default-features --lib --tests 2>&1 | tee -a "$log"
cargo test --locked --workspace 2>&1 | tee -a "$log"
cargo test --locked -p shardid --features serde --test serde 2>&1 | tee -a "$log"
cargo test --locked -p shardid --features serde --doc serde 2>&1 | tee -a "$log"
# The one feature set of the Rust clients the server suites drive (Redis here, PostgreSQL and
# MySQL below: their examples and integration tests) and of the SQLite tests and examples just
# below: the library builds once for all of them. (The SQLite lines had `sqlite,serial` of their
# own: a second build of the library, its unit tests and rusqlite, and restore_again built twice,
# once per set.)
# `sqlx` (issue 56): sqlx's Id type, whose unit tests run on the SQLite line below (through sqlx's
# Any database: no driver) and whose book example is on the async Rust page.
export SHARDID_RUST_FEATURES=serial,postgres,mysql,sqlite,tokio-postgres,redis,sqlx
# SQLite on real files (feature `sqlite`: rusqlite with SQLite's C, built here only): the SQL of
# `sql::sqlite` and the Rust clients over it (every test's path has `sqlite` in it), and their
# doc examples with the book's Rust page (its SQLite part needs the feature). The lease's and
# the dictionary's database drivers need a database's feature too: their unit tests (the
# lease's over a fake connection) run here.
cargo test --locked -p shardid --features "$SHARDID_RUST_FEATURES" --lib --test sqlite_sql -- sqlite lease::database:: dictionary::driver:: sqlx:: 2>&1 | tee -a "$log"
cargo test --locked -p shardid --features "$SHARDID_RUST_FEATURES" --doc -- sqlite StartRust StartAsyncRust lease::tokio_postgres sqlx 2>&1 | tee -a "$log"
# The Rust worker of the Python step's SQLite stress test (tests/python/test_sqlite_stress.py:
# Python, Node and Rust processes on one file), built here where the library with these
# features already is (the doc tests above built it): only the example's own crate compiles.
# With it, the Rust taker of issue 54's restore checks (restore_checks.py: SQLite here, the
# PostgreSQL and MySQL steps' too).
cargo build --locked -q -p shardid --features "$SHARDID_RUST_FEATURES" --example sqlite_stress --example restore_again
export SHARDID_SQLITE_STRESS_EXAMPLE=$root/target/debug/examples/sqlite_stress
export SHARDID_RESTORE_EXAMPLE=$root/target/debug/examples/restore_again
# Redis (feature `redis`, issue 57): the core's scripts and the Rust client on throwaway
# servers (13 s of tests after building the library).
tests/redis/run.sh 2>&1 | tee -a "$log"

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
step "MSRV" "Rust $msrv, the declared MSRV: the core with every feature (its tests included) and every binding type-check"
# Type-checked, as cargo's own `rust-version` checks and cargo-hack do: what an older compiler
# refuses is a language or library item, which `check` finds; running the tests a second time
# with it (a full build of every dependency) took over 10 minutes of a CI run.
cargo "+$msrv" check --locked -q -p shardid --features postgres,mysql,sqlite,serde,serial,tokio-postgres --all-targets --target-dir target/msrv
cargo "+$msrv" check --locked -q --workspace --exclude shardid-bench --target-dir target/msrv
drop target/msrv

# bindings-node's npm dependencies, which the Python step is the first to need (through
# scripts/node-addon.sh): their install compiles better-sqlite3 (SQLite's C, with node-gyp), 92 s
# of one core that the Python step used to wait for (75 to 90 s of its wall time). They are
# installed beside the loom and Miri steps instead, whose model runs and interpreter keep one
# core busy for most of their time; node-addon.sh's own install then finds them in place.
(cd bindings-node && npm install --no-audit --no-fund --loglevel=error) >"$log.npm" 2>&1 &
npm_install=$!

step "loom" "the generator's state word, the registry, the ceiling rule, the segment allocator, the dictionary cache, the serials' period switch and a lease's count of losses, over every interleaving (the Miri step's checks run beside it)"
# Miri's checks (the next step) run beside loom's, in the background: both are mostly one core's
# work (loom's core crate in one codegen unit and its longest model alone; Miri's interpreter,
# one thread whatever the tests' threads), so run one after the other they left a core idle for
# most of their 241 s. Built, the two runs took 143 and 144 s one after the other and 55, 63 and
# 84 s together on this machine, every test passing. The Miri step waits for them and shows
# what they printed.
#
# Fewer proptest cases (Miri interprets every step); the clock tests read the real clock. The
# registry's states are leaked on purpose (never freed: see registry.rs), so only its test runs
# with leak checks off.
# The core forbids unsafe code: what Miri checks is the unsafe code of std and the dependencies
# under our calls (the registry's statics, the clock anchor, threads). Tests that only loop over
# the core's safe arithmetic run natively in the step above, not here: the layout and decimal
# suites (proptests) took 402 s and 185 s under Miri in a clean run on this machine, and four unit tests (a cache
# filled far past its bound, threads sharing one cache, 10,000 keys rehashed over servers, every
# bad string and ID position) 40 s to over 4 minutes each, more than all the others together.
# The dictionary's sans-I/O protocol (dictionary::protocol's 12 tests: statements and rows fed to
# a value, no unsafe, no thread) too: with them the Miri step took 627 s after loom's 201 s in a
# clean run of 864bf06 on this machine (79 unit tests in 768 s, where ci14's 62 ended beside loom),
# and 6 of the 12 took about 8 minutes when run alone (beside that run's release step). They run
# natively in the core tests step (the workspace's default features).
(
    export PROPTEST_CASES=16
    MIRIFLAGS="-Zmiri-disable-isolation" cargo +nightly miri test --locked -q -p shardid \
        --lib --test kinds --test anchor -- \
        --skip memory_stays_bounded_and_recent_entries_survive --skip threads_share_one_cache \
        --skip adding_a_server_moves_only_to_the_new_one --skip bad_strings_and_ids_are_refused_with_their_position \
        --skip dictionary::protocol::
    MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-ignore-leaks" cargo +nightly miri test --locked -q -p shardid \
        --test registry
) >"$log.miri" 2>&1 &
miri=$!
# Its own target directory: `--cfg loom` rebuilds every crate, and would otherwise evict the
# normal build's artifacts.
RUSTFLAGS="--cfg loom" cargo test --locked -p shardid --lib --release --features serial --target-dir target/loom loom 2>&1 | tee -a "$log"
drop target/loom

step "Miri" "the core's unit tests and its error-kind, registry and clock-anchor tests, checked for undefined behaviour (started beside loom)"
miri_status=0
wait "$miri" || miri_status=$?
tee -a "$log" <"$log.miri"
[ "$miri_status" -eq 0 ] || exit "$miri_status"

step "fuzzing" "every cargo-fuzz target for 15 s from its checked-in corpus, two at a time"
scripts/fuzz.sh 15 2>&1 | tee -a "$log"

step "release" "this platform's release artifacts, built once (scripts/release.sh --host): the steps below test them"
# This platform's artifacts only: the five other platforms are 11 of the release's 14 builds;
# the release workflow builds and checks them all before it publishes.
scripts/release.sh --host >"$log.release" 2>&1 || { tail -60 "$log.release"; exit 1; }
sed -n '/^| /p' dist/ARTIFACTS.md
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
built=$(mktemp -d)
trap 'rm -rf "$log" "$log.npm" "$log.miri" "$log.release" "$built"' EXIT
# The suites below test what release.sh built, not a build of their own:
#   the manylinux wheel (tests/python/run.sh and every suite that installs the wheel),
#   shardid-linux-x64-gnu's addon (scripts/node-addon.sh puts it in bindings-node/),
#   libshardid's tarball (tests/c/run.sh installs it with its Makefile),
#   bindings-wasm/pkg/ (release.sh's bindings-wasm/build.sh; dist's shardid-wasm is packed from it).
SHARDID_PYTHON_WHEEL=$(echo "$root"/dist/python/shardid-"$version"-*-manylinux2014_x86_64*.whl)
tar -xzf "dist/npm/shardid-linux-x64-gnu-$version.tgz" -C "$built" package/shardid.linux-x64-gnu.node
SHARDID_NODE_ADDON=$built/package/shardid.linux-x64-gnu.node
SHARDID_C_TARBALL=$root/dist/c/shardid-$version-x86_64-linux-gnu.tar.gz
SHARDID_WASM_BUILT=1
export SHARDID_PYTHON_WHEEL SHARDID_NODE_ADDON SHARDID_C_TARBALL SHARDID_WASM_BUILT
# One fresh virtualenv for every Python-driven suite (the test requirements and the wheel,
# installed once instead of once per suite).
export SHARDID_PYTHON_VENV=$built/venv

step "C" "the release tarball's libshardid installed with make: the vectors, bad input, threads, sanitizers, valgrind"
tests/c/run.sh 2>&1 | tee -a "$log"

step "Python" "the release wheel in a fresh virtualenv: vectors, bad input, threads, Django, stubtest"
wait "$npm_install" || { cat "$log.npm"; echo "npm install in bindings-node failed" >&2; exit 1; }
python3 bindings-python/tools/async_to_sync.py --check 2>&1 | tee -a "$log"   # generated sync drivers current
tests/python/run.sh 2>&1 | tee -a "$log"

step "JS" "the release Node addon and the WebAssembly module, one suite for both"
tests/js/run.sh 2>&1 | tee -a "$log"

step "PostgreSQL" "the emitted DDL on a throwaway server (vectors, uniqueness, Django), leases from Python and Node"
tests/postgres/run.sh 2>&1 | tee -a "$log"
# The short contract on every other major, 13 to 18 (issue 62): one cluster each.
tests/postgres/versions.sh 2>&1 | tee -a "$log"

step "MySQL" "MariaDB: segments, the dictionary and next_id() on a throwaway MariaDB, from Python, Node and Rust"
tests/mysql/run.sh 2>&1 | tee -a "$log"

step "docs" "the book built (warnings are errors, links checked), every snippet of the book and the README run, the API references complete"
tests/docs/run.sh 2>&1 | tee -a "$log"

step "browser" "the example page in headless Chromium decodes every vector"
node tests/browser/browser.mjs 2>&1 | tee -a "$log"

step "edge" "shardid-wasm in workerd, Deno, Bun and Node, an import-map page, a webpack and a Vite bundle in Chromium, each entry's types, the book's sizes"
tests/edge/run.sh 2>&1 | tee -a "$log"

step "packaging" "the release step's artifacts installed as users do: names, tags, licences, the sdist, tarball installs, bundlers"
SHARDID_PACKAGING_REUSE=1 SHARDID_PACKAGING_HOST_ONLY=1 tests/packaging/run.sh 2>&1 | tee -a "$log"
end_step

# Closing lines for the whole run: cargo's last "test result" is often a crate's empty doc-test
# run, which says "0 passed" although every suite above ran.
tests_seconds=$((SECONDS - tests_started))
df -h . | sed -n '2s/^/disk after the tests: /p'
printf '\nset-up %d s; tests %d min %d s\n' "$setup_seconds" "$((tests_seconds / 60))" "$((tests_seconds % 60))"
printf '%s\n' "${timings[@]}" | grep -v ' set-up$' | sort -rn | head -n 3 \
    | awk '{ t = $1; $1 = ""; out = out sep substr($0, 2) " " t " s"; sep = ", " } END { print "slowest steps: " out }'
awk '/^test result:/ { passed += $4; failed += $6 }
     END { printf "\ntests: %d passed, %d failed\n", passed, failed; exit (failed > 0 || passed == 0) }' "$log"
