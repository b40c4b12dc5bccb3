#!/usr/bin/env bash
# The release artifacts (scripts/release.sh builds them into dist/), installed and used as
# users do, on this machine (Linux x86_64, glibc):
#   - one version everywhere (scripts/version.py) and in every artifact's name;
#   - every wheel's platform tag (auditwheel for manylinux; the ELF or Mach-O header and the
#     libraries it needs for musllinux and macOS), the licences inside each;
#   - the manylinux x86_64 wheel in a fresh virtualenv with no Rust on PATH (the Python step of
#     scripts/test.sh runs the whole suite on it); the sdist built from source in a fresh
#     virtualenv;
#   - shardid + shardid-linux-x64-gnu from their tarballs in a fresh project with no Rust on
#     PATH: CommonJS, ESM, `npx shardid` (the JS step runs the whole suite on the same addon);
#     shardid alone: an error naming
#     the missing platform package; @arethetypeswrong/cli on shardid and shardid-wasm;
#   - shardid-wasm from its tarball in a fresh project, bundled by esbuild and by Vite with no
#     plugin, each page run in headless Chromium; its types under tsc --strict (bundler, Node
#     ESM, Node CommonJS);
#   - the C tarball: make install PREFIX=..., a program built with pkg-config, shared and
#     static;
#   - the crate: cargo package built it from the packaged sources (scripts/release.sh).
# SHARDID_PACKAGING_HOST_ONLY=1 (what scripts/test.sh sets, for CI's time budget) builds and
# checks this machine's platform only (scripts/release.sh --host: the x86_64 glibc wheel, addon
# and C tarball, the sdist, shardid-wasm, the crate); the release workflow
# (.github/workflows/release.yml) builds and checks every platform's before publishing.
# Ends with a "test result:" line in cargo's format so scripts/test.sh counts these too.
set -uo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

check_suite=packaging
# shellcheck source=tests/check.sh
. "$root/tests/check.sh"
# The result line, and the end of the run.
end() {
    finish "(packaging: the release artifacts installed as users do, tests/packaging/run.sh)"
    exit
}

# SHARDID_PACKAGING_REUSE=1 tests the dist/ already there (while working on these tests).
if [ "${SHARDID_PACKAGING_REUSE:-}" = 1 ] && [ -f dist/ARTIFACTS.md ]; then
    echo "(testing the artifacts already in dist/)"
elif ! scripts/release.sh ${SHARDID_PACKAGING_HOST_ONLY:+--host} >"$work/release.log" 2>&1; then
    tail -40 "$work/release.log"
    failed=1
    end
fi
sed -n '/^| /p' dist/ARTIFACTS.md
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
dist=$root/dist
tools=$root/target/release-tools/bin
# What a user's machine has: no cargo, no rustc, none of the release tools.
norust=$(tr ':' '\n' <<<"$PATH" | grep -v -e '\.cargo' -e 'release-tools' | paste -sd: -)

check "one version in every manifest (scripts/version.py)" python3 scripts/version.py
# The platforms built: every one, or this machine's (SHARDID_PACKAGING_HOST_ONLY=1).
c_targets="x86_64-linux-gnu aarch64-linux-gnu"
wheel_platforms="manylinux2014_x86_64.manylinux_2_17_x86_64 manylinux2014_aarch64.manylinux_2_17_aarch64
    musllinux_1_2_x86_64 musllinux_1_2_aarch64 macosx_10_12_x86_64 macosx_11_0_arm64"
npm_platforms="linux-x64-gnu linux-x64-musl linux-arm64-gnu linux-arm64-musl darwin-x64 darwin-arm64"
if [ -n "${SHARDID_PACKAGING_HOST_ONLY:-}" ]; then
    c_targets=x86_64-linux-gnu
    wheel_platforms=manylinux2014_x86_64.manylinux_2_17_x86_64
    npm_platforms=linux-x64-gnu
fi
expected_files() {
    local missing=0 target tag platform
    for file in python/shardid-$version.tar.gz npm/shardid-$version.tgz npm/shardid-wasm-$version.tgz \
        crates/shardid-$version.crate; do
        [ -f "$dist/$file" ] || { echo "missing dist/$file"; missing=1; }
    done
    for target in $c_targets; do
        [ -f "$dist/c/shardid-$version-$target.tar.gz" ] || { echo "missing dist/c/shardid-$version-$target.tar.gz"; missing=1; }
    done
    for tag in $wheel_platforms; do
        compgen -G "$dist/python/shardid-$version-cp*-abi3-$tag.whl" >/dev/null || { echo "missing wheel $tag"; missing=1; }
    done
    for platform in $npm_platforms; do
        [ -f "$dist/npm/shardid-$platform-$version.tgz" ] || { echo "missing npm package shardid-$platform"; missing=1; }
    done
    return $missing
}
check "every artifact is built, named with version $version" expected_files

# --- Python -------------------------------------------------------------------------------
wheel_tags() {
    local wheel ok=0 so
    for wheel in "$dist"/python/*.whl; do
        rm -rf "$work/wheel" && mkdir "$work/wheel" && (cd "$work/wheel" && python3 -m zipfile -e "$wheel" .)
        so=$(find "$work/wheel/shardid" -name '_shardid*' | head -n 1)
        ls "$work/wheel"/shardid-*.dist-info/licenses/LICENSE-MIT "$work/wheel"/shardid-*.dist-info/licenses/LICENSE-APACHE >/dev/null \
            || { echo "$wheel: no licence files"; ok=1; }
        case $wheel in
            *manylinux*)
                local arch=${wheel##*manylinux_2_17_}
                arch=${arch%.whl}
                grep -q "consistent with the following platform tag: \"manylinux_2_17_$arch\"" <<<"$("$tools/auditwheel" show "$wheel" | tr -s ' \n' ' ')" \
                    || { echo "$wheel: auditwheel does not confirm manylinux_2_17_$arch"; "$tools/auditwheel" show "$wheel"; ok=1; } ;;
            *musllinux*)
                # auditwheel cannot read musl wheels on a glibc host: the ELF header instead.
                local machine=X86-64
                [[ $wheel == *aarch64* ]] && machine=AArch64
                grep -q "Machine:.*$machine" <<<"$(readelf -h "$so")" || { echo "$wheel: not $machine"; ok=1; }
                [ "$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')" = "libc.so" ] || { echo "$wheel: needs more than musl's libc"; ok=1; }
                ! readelf -V "$so" | grep -q GLIBC || { echo "$wheel: refers to glibc"; ok=1; } ;;
            *macosx*)
                local arch=x86_64
                [[ $wheel == *arm64* ]] && arch=arm64
                file -b "$so" | grep -q "Mach-O 64-bit.*$arch" || { echo "$wheel: $(file -b "$so")"; ok=1; } ;;
        esac
    done
    return $ok
}
check "every wheel has its platform's tag and binary, and the licences" wheel_tags

# The wheel's whole Python suite runs in the Python step (scripts/test.sh gives tests/python/run.sh
# this same release wheel); here, what only packaging adds: it installs with the pip of a fresh
# virtualenv and works with no Rust on PATH.
wheel_installs() {
    local wheel
    wheel=$(echo "$dist"/python/shardid-*-manylinux2014_x86_64*.whl)
    env PATH="$norust" python3 -m venv "$work/venv-wheel" &&
        env PATH="$norust" "$work/venv-wheel/bin/pip" install -q --disable-pip-version-check "$wheel" \
            $(grep -E '^prometheus-client==' tests/python/requirements.txt) || return 1
    (cd "$work" && env PATH="$norust" "$work/venv-wheel/bin/python" -c "
import shardid
g = shardid.Generator(layout=shardid.Layout.TWITTER, shard=9)
a, b = g.next_ids(2)
assert b > a and shardid.Layout.TWITTER.decode(b).shard == 9
assert shardid.__version__ == '$version', shardid.__version__
print('wheel', shardid.__version__)")
}
check "the manylinux2014 x86_64 wheel in a fresh virtualenv, no Rust on PATH: installs and makes IDs" wheel_installs

# What this checks is that the sdist has every source its build needs: built unoptimized and
# without LTO (a release build of the whole extension again would say nothing more), in a
# target directory kept between runs for the dependencies.
sdist() {
    python3 -m venv "$work/venv-sdist" &&
        env CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
            CARGO_TARGET_DIR="$root/target/packaging-sdist" \
            "$work/venv-sdist/bin/pip" install -q --disable-pip-version-check "$dist/python/shardid-$version.tar.gz" &&
        (cd "$work" && "$work/venv-sdist/bin/python" -c "
import shardid
g = shardid.Generator(layout=shardid.Layout.INSTAGRAM, shard=5)
assert shardid.Layout.INSTAGRAM.decode(g.next_id()).shard == 5
assert shardid.__version__ == '$version', shardid.__version__
print('sdist', shardid.__version__)")
}
check "the sdist builds from source in a fresh virtualenv" sdist

# --- The README's install lines, as written -------------------------------------------------
# With SHARDID naming this checkout (as the README says to set it) and dist/ from release.sh.
readme_pip() (
    export SHARDID=$root
    local venv=$work/venv-readme line out
    python3 -m venv "$venv" || return 1
    export PATH="$venv/bin:$PATH"
    pip --version
    local find_links
    find_links=$(grep -m1 -o 'export PIP_FIND_LINKS=.*dist/python' README.md) || { echo "README sets no PIP_FIND_LINKS"; return 1; }
    eval "$find_links"
    # Every `pip install` of shardid the README shows (the quick start's and each extra's).
    mapfile -t lines < <(grep -oE "pip install '?shardid(\[[a-z_,-]+\])?'?" README.md | sort -u)
    [ "${#lines[@]}" -ge 5 ] || { echo "only ${#lines[@]} pip lines: ${lines[*]}"; return 1; }
    for line in "${lines[@]}"; do
        echo "\$ $line"
        out=$(eval "$line --disable-pip-version-check" 2>&1) || { echo "$out"; return 1; }
        ! grep -q "does not provide the extra" <<<"$out" || { echo "$out"; return 1; }
    done
    # What each extra is for is there (a misspelt extra installs nothing and says so only in a warning).
    python -c "import shardid, django, rest_framework, pydantic, sqlalchemy, psycopg, pymysql, aiomysql, shardid.rest_framework; print('extras ok')"
)
check "the README's pip install lines, as written, with the pip of a fresh virtualenv" readme_pip

readme_npm() (
    export SHARDID=$root
    local project=$work/readme-npm line
    mkdir -p "$project" && cd "$project" && npm init -y >/dev/null || return 1
    mapfile -t lines < <(grep -E '^npm install "\$SHARDID"' "$root/README.md")
    [ "${#lines[@]}" -ge 2 ] || { echo "no npm install lines"; return 1; }
    for line in "${lines[@]}"; do
        echo "\$ $line"
        eval "$line --no-audit --no-fund --loglevel=error" || return 1
    done
    env PATH="$norust" node -e "
const { Layout } = require('shardid'); const wasm = require('shardid-wasm')
if (Layout.DISCORD.decode('175928847299117063').shard !== 32 || wasm.Layout.DISCORD.decode('175928847299117063').shard !== 32) process.exit(1)"
)
check "the README's npm install lines, as written, in a fresh project" readme_npm

readme_cargo() (
    export SHARDID=$root
    local crate=$work/readme-crate line
    cargo new --quiet --lib "$crate" && cd "$crate" || return 1
    line=$(grep -m1 -E '^cargo add shardid --path' "$root/README.md" | sed 's/ *#.*//') || return 1
    echo "\$ $line"
    eval "$line --offline --quiet" || return 1
    printf 'pub fn shard(id: u64) -> u64 { shardid::Layout::INSTAGRAM.decode(id).map_or(0, |p| p.shard) }\n' >src/lib.rs
    CARGO_TARGET_DIR=$root/target/packaging-readme cargo check --quiet --offline
)
check "the README's cargo add line, as written, in a fresh crate" readme_cargo

# --- Node -----------------------------------------------------------------------------------
node_project() (
    local project=$work/node-project peers
    # The exporters' optional peers (and the SDK their tests read through), at the versions
    # bindings-node's devDependencies pin: the JS suite (node_suite) runs from here.
    peers=$(node -p "const d = require('$root/bindings-node/package.json').devDependencies;
        ['prom-client', '@opentelemetry/api', '@opentelemetry/sdk-metrics'].map((n) => n + '@' + d[n]).join(' ')") || return 1
    mkdir -p "$project" && cd "$project" && npm init -y >/dev/null &&
        npm install --no-audit --no-fund --loglevel=error "$dist/npm/shardid-$version.tgz" "$dist/npm/shardid-linux-x64-gnu-$version.tgz" $peers >/dev/null || return 1
    ls node_modules/shardid/LICENSE-MIT node_modules/shardid/LICENSE-APACHE node_modules/shardid/README.md \
        node_modules/shardid-linux-x64-gnu/LICENSE-MIT node_modules/shardid-linux-x64-gnu/README.md >/dev/null || return 1
    ! ls node_modules/shardid/*.node 2>/dev/null || { echo "the main package carries an addon"; return 1; }
    cat >use.cjs <<'JS'
const { Generator, Layout } = require('shardid')
const g = new Generator({ layout: Layout.TWITTER, shard: 9 })
if (Layout.TWITTER.decode(g.nextId()).shard !== 9) throw new Error('CommonJS: wrong shard')
if (require('shardid').default.Generator !== Generator) throw new Error('CommonJS: .default')
JS
    cat >use.mjs <<'JS'
import shardid, { Generator, Layout } from 'shardid'
const [a, b] = new Generator({ layout: Layout.INSTAGRAM, shard: 3 }).nextIds(2)
if (!(b > a) || shardid.Layout.INSTAGRAM.decode(b).shard !== 3) throw new Error('ESM: wrong IDs')
if (Generator !== shardid.Generator) throw new Error('ESM and CommonJS differ')
JS
    env PATH="$norust" node use.cjs && env PATH="$norust" node use.mjs || return 1
    # The command line, as npx runs it from the installed package.
    local out
    out=$(env PATH="$norust" npx --no-install shardid decode 1541815603606036480 --layout twitter) || return 1
    [ "$out" = "1541815603606036480  2022-06-28T16:07:40.105Z  shard 378  sequence 0" ] || { echo "npx shardid decode: $out"; return 1; }
    (env PATH="$norust" npx --no-install shardid decode --layout nope 5 2>/dev/null)
    [ $? -eq 2 ] || { echo "npx shardid: a usage error must exit with 2"; return 1; }
)
check "shardid + shardid-linux-x64-gnu from their tarballs, no Rust on PATH: CommonJS, ESM, npx shardid" node_project

# The two Prometheus exporters, installed (the wheel's virtualenv of python_wheel_suite holds
# prometheus_client, the Node project prom-client): the same families, HELP, TYPE and labels.
check "Python's and Node's Prometheus exporters print the same families" \
    env PATH="$norust" "$work/venv-wheel/bin/python" tests/packaging/same_exposition.py "$work/node-project"

# The whole JS suite runs in the JS step, on this same addon (scripts/node-addon.sh puts the
# shardid-linux-x64-gnu package's in bindings-node/); here, what only the tarballs add (above).

missing_addon() (
    local project=$work/node-missing
    mkdir -p "$project" && cd "$project" && npm init -y >/dev/null &&
        npm install --no-audit --no-fund --loglevel=error "$dist/npm/shardid-$version.tgz" >/dev/null 2>&1 || return 1
    node -e "
try { require('shardid'); console.log('loaded'); process.exit(1) } catch (err) {
  if (err.code !== 'MISSING_NATIVE_ADDON' || !err.message.includes('the package shardid-linux-x64-gnu is not installed')) { console.log(err); process.exit(1) }
  console.log(err.message)
}"
)
check "shardid without its platform package: an error naming shardid-linux-x64-gnu" missing_addon

attw="$root/bindings-node/node_modules/.bin/attw"
check "@arethetypeswrong/cli: no problem in shardid" "$attw" "$dist/npm/shardid-$version.tgz" --format ascii
# shardid-wasm/web (and web/public) is an ES module only (its own README says so): checked as one.
check "@arethetypeswrong/cli: no problem in shardid-wasm" "$attw" "$dist/npm/shardid-wasm-$version.tgz" --exclude-entrypoints ./web ./web/public --format ascii
check "@arethetypeswrong/cli: shardid-wasm/web as an ES module" "$attw" "$dist/npm/shardid-wasm-$version.tgz" --entrypoints ./web ./web/public --profile esm-only --format ascii

# --- WebAssembly ----------------------------------------------------------------------------
app=$work/wasm-app
cp -r tests/packaging/wasm-app "$app"
wasm_install() (
    cd "$app" && npm install --no-audit --no-fund --loglevel=error >/dev/null &&
        npm install --no-audit --no-fund --loglevel=error --no-save "$dist/npm/shardid-wasm-$version.tgz" >/dev/null
)
check "shardid-wasm installs from its tarball into a frontend project" wasm_install
check "shardid-wasm bundles with esbuild, no plugin" sh -c "cd '$app' && mkdir -p out-esbuild &&
    npx esbuild src/main.js --bundle --format=esm --outfile=out-esbuild/src/main.js --log-level=warning &&
    cp index.html out-esbuild/ && ! ls out-esbuild/src | grep -v '^main.js$'"
check "shardid-wasm bundles with Vite, no plugin, no stray .wasm" sh -c "cd '$app' && npx vite build --outDir out-vite --logLevel warn &&
    ! find out-vite -name '*.wasm' | grep ."
check "both bundled pages run in headless Chromium" node tests/packaging/wasm-pages.mjs "$app/out-esbuild" "$app/out-vite"
check "shardid-wasm's types under tsc --strict: bundler resolution" sh -c "cd '$app' && npx tsc -p types/tsconfig.bundler.json"
check "shardid-wasm's types under tsc --strict: Node ESM and CommonJS" sh -c "cd '$app' && npx tsc -p types/tsconfig.node.json"
wasm_node() (
    cd "$app" && env PATH="$norust" node -e "const s = require('shardid-wasm'); if (s.Layout.DISCORD.decode('175928847299117063').shard !== 32) process.exit(1)" &&
        env PATH="$norust" node --input-type=module -e "import { Layout } from 'shardid-wasm'; if (Layout.DISCORD.decode(175928847299117063n).timestampMs !== 1462015105796) process.exit(1)"
)
check "shardid-wasm in Node: require and import" wasm_node

# --- C --------------------------------------------------------------------------------------
# `dynamic NEEDED file`: the libraries an ELF file needs; `dynamic SONAME file`: its own name.
# The output is taken whole before anything matches it: `ldd prog | grep -q lib` under pipefail
# failed about once in 2,000 runs here (and once in CI), when grep exited on its match while
# ldd was still writing, and ldd died of SIGPIPE.
dynamic() { objdump -p "$2" | sed -n "s/^ *$1 *//p"; }
c_tarball() (
    local prefix=$work/c-prefix dir=$work/c
    mkdir -p "$dir" && tar -xzf "$dist/c/shardid-$version-x86_64-linux-gnu.tar.gz" -C "$dir" &&
        make -s -C "$dir/shardid-$version-x86_64-linux-gnu" install PREFIX="$prefix" || return 1
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    [ "$(pkg-config --modversion shardid)" = "$version" ] || return 1
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Werror examples/c/demo.c $(pkg-config --cflags --libs shardid) -o "$work/demo-shared" &&
        LD_LIBRARY_PATH=$prefix/lib "$work/demo-shared" >/dev/null || return 1
    local soname needed
    soname=$(dynamic SONAME "$prefix/lib/libshardid.so") && needed=$(dynamic NEEDED "$work/demo-shared") || return 1
    [ -n "$soname" ] || { echo "libshardid.so has no SONAME"; return 1; }
    grep -qxF "$soname" <<<"$needed" || { echo "not linked to $soname; it needs: $needed"; return 1; }
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Werror examples/c/demo.c $(pkg-config --cflags --libs-only-L shardid) -Wl,-Bstatic -lshardid -Wl,-Bdynamic \
        $(pkg-config --static --libs-only-l shardid | sed 's/-lshardid//') -o "$work/demo-static" && "$work/demo-static" >/dev/null || return 1
    needed=$(dynamic NEEDED "$work/demo-static") || return 1
    ! grep -q libshardid <<<"$needed" || { echo "the static build needs $needed"; return 1; }
    local newest
    newest=$(objdump -T "$prefix/lib/libshardid.so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
    [ "$(printf '%s\n' GLIBC_2.17 "$newest" | sort -V | tail -n 1)" = GLIBC_2.17 ] \
        || { echo "libshardid.so needs $newest, newer than glibc 2.17"; return 1; }
)
check "the C tarball: make install, pkg-config, shared and static" c_tarball

end
