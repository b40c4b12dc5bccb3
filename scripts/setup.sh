#!/usr/bin/env bash
# Installs what the demo and the tests need, idempotently. Safe to run on a fresh machine and
# again on a provisioned one.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "setup: cargo not found; install Rust with rustup first" >&2
        exit 1
    fi
fi

# The toolchain pieces the checks use: rustfmt, clippy, and the no_std targets.
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
    installed_targets=$(rustup target list --installed)
    for target in thumbv7em-none-eabihf wasm32-unknown-unknown; do
        grep -qx "$target" <<<"$installed_targets" || rustup target add "$target"
    done
fi

# System packages: a C toolchain, pkg-config and valgrind for the C binding's tests; file and
# binutils (readelf, objdump) for the packaging tests' checks of wheels and libraries; curl for
# the book's Django page (tests/docs runs it).
apt_packages=()
for pair in gcc:gcc g++:g++ make:make pkg-config:pkg-config valgrind:valgrind python3:python3 node:nodejs npm:npm file:file readelf:binutils curl:curl; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || apt_packages+=("${pair#*:}")
done
# The Python tests make virtualenvs (Debian's own python3 needs python3-venv for that).
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    apt_packages+=(python3-venv python3-pip)
fi
# PostgreSQL server binaries (initdb, pg_ctl, pgbench) for the throwaway clusters of the SQL
# tests and benchmark; the tests start and stop their own server, none is left running.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || apt_packages+=(postgresql)
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
# needs MariaDB's client library and pkg-config.
[ -e /usr/include/mariadb/mysql.h ] || apt_packages+=(libmariadb-dev)
command -v pkg-config >/dev/null 2>&1 || apt_packages+=(pkg-config)
# Debian's Chromium for the browser test (playwright-core drives it; it downloads nothing).
[ -x /usr/bin/chromium ] || apt_packages+=(chromium)
if [ ${#apt_packages[@]} -gt 0 ]; then
    echo "setup: installing ${apt_packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${apt_packages[@]}"
fi

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

# Fetch crates once so later steps can say what failed without mixing in network errors.
cargo fetch --locked
