#!/usr/bin/env bash
# The C binding's tests: installs libshardid into a temporary prefix with `make install` (from
# the checkout, or SHARDID_C_TARBALL's release tarball), then
# builds and runs the C tests against it
#   - C99 with -Wall -Wextra -Werror -pedantic, linked against the static and the shared library,
#   - once more with -fsanitize=address,undefined,
#   - bad input and the vectors under valgrind's memcheck (zero errors, zero leaks),
#   - the header as C++ (g++ -std=c++11 -Wall -Werror),
#   - a program built with nothing but `pkg-config --cflags --libs shardid`,
#   - a panic inside the library (a `panic-probe` build) is a status, not an abort.
# Ends with a "test result:" line in cargo's format so scripts/test.sh counts these too.
set -uo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
prefix=$work/prefix

check_suite=c
check_tail=1000
check_detail=1
# shellcheck source=tests/check.sh
. "$root/tests/check.sh"

# SHARDID_C_TARBALL=FILE (scripts/test.sh: release.sh's tarball) installs that tarball's
# libshardid with its own Makefile instead of building one from the checkout.
makefile_dir=bindings-c
if [ -n "${SHARDID_C_TARBALL:-}" ]; then
    tar -xzf "$SHARDID_C_TARBALL" -C "$work" && makefile_dir=$(echo "$work"/shardid-*/)
fi
if ! make -s -C "$makefile_dir" install PREFIX="$prefix" >"$work/make.log" 2>&1; then
    cat "$work/make.log"
    echo "test result: FAILED. 0 passed; 1 failed;"
    exit 1
fi

cflags=(-std=c99 -Wall -Wextra -Werror -pedantic -O1 -g -I"$prefix/include" -Itests/c)
static_libs=("$prefix/lib/libshardid.a" -lpthread -ldl -lm)
shared_libs=(-L"$prefix/lib" -lshardid -lpthread)
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
memcheck=(valgrind --quiet --error-exitcode=99 --leak-check=full
          --show-leak-kinds=definite,indirect,possible
          --errors-for-leak-kinds=definite,indirect,possible)

for test in conformance bad_input threads lease serials fork; do
    src=tests/c/$test.c
    check "$test (static)" sh -c "cc ${cflags[*]} $src ${static_libs[*]} -o $work/$test-static && $work/$test-static"
    check "$test (shared)" sh -c "cc ${cflags[*]} $src ${shared_libs[*]} -o $work/$test-shared && $work/$test-shared"
    check "$test (asan+ubsan)" sh -c "cc ${cflags[*]} -fsanitize=address,undefined -fno-sanitize-recover=all $src ${static_libs[*]} -o $work/$test-asan && $work/$test-asan"
done
for test in conformance bad_input serials; do
    check "$test (valgrind memcheck)" "${memcheck[@]}" "$work/$test-shared"
done

check "header compiles as C++" sh -c "g++ -std=c++11 -Wall -Wextra -Werror -I$prefix/include tests/c/header.cpp ${shared_libs[*]} -o $work/header-cpp && $work/header-cpp"

# A panic inside the library is SHARDID_ERR_PANIC and the program goes on: against a library
# built with the test-only `panic-probe` feature (a separate target directory, so the
# installed library and the workspace's builds stay as they are).
probe_target=$root/target/panic-probe
if cargo build --locked -q -p shardid-c --features panic-probe --target-dir "$probe_target" >"$work/probe-build.log" 2>&1; then
    check "a panic is SHARDID_ERR_PANIC, not an abort" sh -c "cc ${cflags[*]} tests/c/panic_probe.c $probe_target/debug/libshardid.a -lpthread -ldl -lm -o $work/panic-probe && $work/panic-probe 2>/dev/null"
else
    failed=$((failed + 1))
    echo "test c::panic probe build ... FAILED"
    sed 's/^/    /' "$work/probe-build.log"
fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check "pkg-config build (shared)" sh -c "cc -std=c99 -Wall -Werror examples/c/demo.c \$(pkg-config --cflags --libs shardid) -o $work/demo-pc && $work/demo-pc"

finish "(C tests, tests/c/run.sh)"
