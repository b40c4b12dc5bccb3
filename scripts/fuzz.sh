#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets/) for a bounded time, from its checked-in
# corpus (fuzz/corpus/<target>/), as CI does: `scripts/fuzz.sh [seconds per target, default 30]`.
# A crash stops the run and leaves the input under fuzz/artifacts/<target>/: add it to the
# corpus and as a test in core/tests/fuzz_regressions.rs. New corpus entries the run finds go to
# a scratch directory, so the checked-in corpus only changes when someone means it to.
# Ends with a "test result:" line in cargo's format so scripts/test.sh counts the targets.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
seconds=${1:-30}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo +nightly fuzz build 2>&1 | tail -n 1 || exit 1
# Two targets at a time (SHARDID_FUZZ_JOBS): libFuzzer uses one core, the machine has two, so
# each target still fuzzes its full time on a core of its own, in half the wall time.
jobs=${SHARDID_FUZZ_JOBS:-2}
fuzz_target() {
    local target=$1
    mkdir -p "$scratch/$target"
    # The scratch corpus comes first: libFuzzer writes what it finds to the first directory.
    cargo +nightly fuzz run "$target" "$scratch/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 >"$scratch/$target.log" 2>&1
    echo $? >"$scratch/$target.status"
}
targets=$(cargo +nightly fuzz list)
running=0
for target in $targets; do
    fuzz_target "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
passed=0
failed=0
for target in $targets; do
    if [ "$(cat "$scratch/$target.status" 2>/dev/null)" = 0 ]; then
        passed=$((passed + 1))
        echo "test fuzz::$target ... ok ($(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$scratch/$target.log"))"
    else
        failed=$((failed + 1))
        echo "test fuzz::$target ... FAILED"
        grep -E 'panicked|ERROR|SUMMARY|Test unit written|Output of|^ ' "$scratch/$target.log" | head -30 | sed 's/^/    /'
    fi
done
status=ok
[ "$failed" -eq 0 ] || status=FAILED
echo "test result: $status. $passed passed; $failed failed; (cargo-fuzz, ${seconds} s per target, scripts/fuzz.sh)"
[ "$failed" -eq 0 ]
