#!/usr/bin/env bash
# The C binding's tests: installs libshardid into a temporary prefix with `make install` (from
# the checkout, or SHARDID_C_TARBALL's release tarball), then
# builds and runs the C tests against it
#   - C99 with -Wall -Wextra -Werror -pedantic, linked against the static and the shared library,
#   - once more with -fsanitize=address,undefined (LeakSanitizer with the installed suppressions),
#   - bad input and the vectors under valgrind's memcheck (zero errors, zero leaks),
#   - the header as C++ (g++ -std=c++11 -Wall -Werror),
#   - a program built as the book's C page says: `pkg-config --cflags --libs shardid` with the
#     rpath of the prefix's libdir, run with no LD_LIBRARY_PATH; `-static` with
#     `pkg-config --static`, which links the archive; and (as root, when /usr/local holds no
#     libshardid) installed into /usr/local, where make install's ldconfig lets it run with no
#     rpath at all,
#   - a C and a C++ program built with CMake (find_package(shardid CONFIG): shardid::shardid
#     and shardid::shardid_static),
#   - the clock's background thread alive at exit, and a child forked while it ran, pass
#     valgrind --leak-check=full --error-exitcode with the installed suppression file, 10 runs,
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

# The sanitizers' runs use the LeakSanitizer suppressions libshardid installs: a child forked
# while the library's clock thread ran (clock_thread.c's) reports that thread's allocations.
lsan_supp=$prefix/share/shardid/lsan/shardid.supp
for test in conformance bad_input threads lease serials fork clock_thread; do
    src=tests/c/$test.c
    check "$test (static)" sh -c "cc ${cflags[*]} $src ${static_libs[*]} -o $work/$test-static && $work/$test-static"
    check "$test (shared)" sh -c "cc ${cflags[*]} $src ${shared_libs[*]} -o $work/$test-shared && $work/$test-shared"
    check "$test (asan+ubsan)" sh -c "cc ${cflags[*]} -fsanitize=address,undefined -fno-sanitize-recover=all $src ${static_libs[*]} -o $work/$test-asan && LSAN_OPTIONS=suppressions=$lsan_supp $work/$test-asan"
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

# The checks below build and run programs as users do: no LD_LIBRARY_PATH (the loader finds
# libshardid by the rpath the book's command adds, or not at all).
unset LD_LIBRARY_PATH
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
demo=examples/c/demo.c
check "pkg-config build (shared, the book's rpath)" sh -c "cc -std=c99 -Wall -Werror $demo \$(pkg-config --cflags --libs shardid) -Wl,-rpath,\$(pkg-config --variable=libdir shardid) -o $work/demo-pc && $work/demo-pc"
check "pkg-config --static with -static links the archive" sh -c "cc -static -std=c99 -Wall -Werror $demo \$(pkg-config --static --cflags --libs shardid) -o $work/demo-static && $work/demo-static && ! readelf -d $work/demo-static | grep 'NEEDED.*libshardid'"
check "only libshardid static (-Wl,-Bstatic, the book's command)" sh -c "cc -std=c99 -Wall -Werror $demo \$(pkg-config --cflags --libs-only-L shardid) -Wl,-Bstatic -lshardid -Wl,-Bdynamic \$(pkg-config --static --libs-only-l shardid | sed 's/-lshardid//') -o $work/demo-bstatic && $work/demo-bstatic && ! readelf -d $work/demo-bstatic | grep 'NEEDED.*libshardid'"
check "pkg-config: a C++ program, shared with the rpath, and -static with --static" sh -c "g++ -std=c++11 -Wall -Werror tests/c/header.cpp \$(pkg-config --cflags --libs shardid) -Wl,-rpath,\$(pkg-config --variable=libdir shardid) -o $work/cxx-pc && $work/cxx-pc && g++ -static -std=c++11 -Wall -Werror tests/c/header.cpp \$(pkg-config --static --cflags --libs shardid) -o $work/cxx-static && $work/cxx-static && ! readelf -d $work/cxx-static | grep 'NEEDED.*libshardid'"

# Into /usr/local as a user installs it (root, the running system): make install's ldconfig
# makes the library loadable with no rpath. Only where /usr/local holds no libshardid of its
# own (never replaced), and uninstalled after.
if [ "$(id -u)" = 0 ] && ! compgen -G "/usr/local/lib/libshardid*" >/dev/null \
    && [ ! -e /usr/local/include/shardid.h ]; then
    usr_local_build_and_run() {
        make -s -C "$makefile_dir" install PREFIX=/usr/local >/dev/null || return 1
        # pkg-config's own search path (no PKG_CONFIG_PATH) holds /usr/local/lib/pkgconfig.
        # shellcheck disable=SC2046 # pkg-config's words are the flags
        cc -std=c99 -Wall -Werror "$demo" $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs shardid) \
            -o "$work/demo-usr-local" || return 1
        ! readelf -d "$work/demo-usr-local" | grep -E 'R(UN)?PATH' || return 1
        "$work/demo-usr-local"
    }
    usr_local_test() {
        local status=0
        usr_local_build_and_run || status=1
        make -s -C "$makefile_dir" uninstall PREFIX=/usr/local >/dev/null 2>&1
        PATH="$PATH:/sbin:/usr/sbin" ldconfig
        return $status
    }
    check "installed into /usr/local, runs with no rpath" usr_local_test
else
    echo "(not run: the /usr/local install check needs root and a /usr/local with no libshardid)"
fi

# CMake: a C and a C++ program, each with the shared and the static target.
cmake_test() {
    cmake -S tests/c/cmake -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
    cmake --build "$work/cmake-build" -j 2 >/dev/null || return 1
    local program
    for program in demo_c demo_cxx demo_c_static demo_cxx_static; do
        "$work/cmake-build/$program" >/dev/null || { echo "$program failed"; return 1; }
    done
    # The shared targets load libshardid; the static ones carry it.
    readelf -d "$work/cmake-build/demo_c" | grep -q 'NEEDED.*libshardid' || return 1
    ! readelf -d "$work/cmake-build/demo_cxx_static" | grep 'NEEDED.*libshardid' || return 1
    ! readelf -d "$work/cmake-build/demo_c_static" | grep 'NEEDED.*libshardid' || return 1
    echo "4 programs built with find_package(shardid CONFIG) ran"
}
check "CMake: C and C++ with shardid::shardid and shardid::shardid_static" cmake_test

# Valgrind as a C user's CI runs it: the clock's thread is alive at exit and a child was
# forked while it ran; the installed suppressions (pkg-config's valgrind_suppressions) keep
# --error-exitcode quiet, 10 runs (about 0.5 s each).
valgrind_clock_test() {
    local supp run
    supp=$(pkg-config --variable=valgrind_suppressions shardid)
    [ -f "$supp" ] || { echo "no suppression file at '$supp'"; return 1; }
    cc "${cflags[@]}" tests/c/clock_thread.c -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lshardid -lpthread \
        -o "$work/clock-thread" || return 1
    for run in 1 2 3 4 5 6 7 8 9 10; do
        "${memcheck[@]}" --suppressions="$supp" "$work/clock-thread" || { echo "run $run failed"; return 1; }
    done
}
check "clock thread at exit and after fork: valgrind --error-exitcode, 10 runs" valgrind_clock_test

finish "(C tests, tests/c/run.sh)"
