#!/usr/bin/env bash
# Builds every release artifact that can be built on this machine into dist/, from the
# registries only (maturin and zig from PyPI cross-link the wheels and the Node addons):
#
#   dist/python/  the sdist, and abi3 wheels for manylinux2014 (glibc 2.17) and musllinux_1_2
#                 on x86_64 and aarch64, and macOS x86_64 and arm64
#   dist/npm/     shardid (the Node API), one shardid-<platform> package per native addon
#                 (its optional dependencies), and shardid-wasm (the WebAssembly module)
#   dist/crates/  the shardid crate as `cargo package` makes it (built from the package)
#   dist/c/       libshardid for Linux x86_64 and aarch64 (glibc 2.17): header, static and
#                 shared library, Makefile (`make install PREFIX=...`: shardid.pc, the CMake
#                 package, Valgrind's suppressions), licences
#   dist/ARTIFACTS.md  what was built, with each file's platform tag and size
#
# Usage: scripts/release.sh [--host]   (--host: only what runs on this machine, Linux x86_64)
# tests/packaging/run.sh installs the artifacts as users do and tests them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

host_only=0
[ "${1:-}" = "--host" ] && host_only=1

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
dist=$root/dist
stage=$root/target/release-stage
rm -rf "$dist" "$stage"
mkdir -p "$dist"/{python,npm,crates,c} "$stage"

# The cross-linking tools, pinned, in a virtualenv of their own (idempotent).
tools=$root/target/release-tools
if ! "$tools/bin/python" -c 'import ziglang' 2>/dev/null \
    || [ "$("$tools/bin/maturin" --version 2>/dev/null)" != "maturin 1.16.0" ]; then
    python3 -m venv "$tools"
    # From uv's cache alone when it holds them (scripts/setup.sh fills it): 1.0 s where pip took
    # 12 s, and 85 to 147 s when this machine's network was slow; pip where it cannot.
    python3 -m uv pip install --quiet --offline --python "$tools/bin/python" -r scripts/release-tools.txt 2>/dev/null \
        || "$tools/bin/pip" install -q -r scripts/release-tools.txt
fi
# zig itself, where cargo-zigbuild and napi's --cross-compile look for it.
cat >"$tools/bin/zig" <<EOF
#!/bin/sh
exec "$tools/bin/python" -m ziglang "\$@"
EOF
chmod +x "$tools/bin/zig"
export PATH="$tools/bin:$PATH"

# Rust target  |  wheel tag (maturin --compatibility)  |  npm platform  |  C tarball
targets=(
    "x86_64-unknown-linux-gnu   manylinux2014  linux-x64-gnu     x86_64-linux-gnu"
    "aarch64-unknown-linux-gnu  manylinux2014  linux-arm64-gnu   aarch64-linux-gnu"
    "x86_64-unknown-linux-musl  musllinux_1_2  linux-x64-musl    -"
    "aarch64-unknown-linux-musl musllinux_1_2  linux-arm64-musl  -"
    "x86_64-apple-darwin        -              darwin-x64        -"
    "aarch64-apple-darwin       -              darwin-arm64      -"
)
[ "$host_only" -eq 1 ] && targets=("${targets[0]}")
installed=$(rustup target list --installed)
for line in "${targets[@]}"; do
    read -r target _ <<<"$line"
    grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

# One target directory for the wheels', the addons' and libshardid's builds: the core (the
# same features for the wheel and the addon) and the dependencies build once per platform,
# not once per artifact.
zig_target_dir=$root/target/release-zig

# The WebAssembly package and the crate's verified package share no build with the wheels, the
# addons and libshardid (target directories of their own, no zig): they are built beside them,
# in the background, their output shown when they end. Each of those release builds ends in
# work on one core (the core's one codegen unit, then fat LTO at the link; the wasm-bindgen
# tool's and the packaged crate's last crates), where the other core sat idle.
side_log=$stage/side.log
(
    echo "==> WebAssembly: the shardid-wasm package"
    bindings-wasm/build.sh
    (cd bindings-wasm/pkg/npm && npm pack --silent --pack-destination "$dist/npm" >/dev/null)

    echo "==> Rust: cargo package (verified: the packaged crate builds on its own)"
    # A release comes from a clean tree; a test run of this script may not.
    dirty=()
    [ -z "$(git status --porcelain 2>/dev/null)" ] || { dirty=(--allow-dirty); echo "(uncommitted changes: packaged as they are)"; }
    cargo package --locked "${dirty[@]}" -p shardid --target-dir "$root/target/release-package"
    cp "target/release-package/package/shardid-$version.crate" "$dist/crates/"
) >"$side_log" 2>&1 &
side=$!

echo "==> Python: sdist and wheels"
(cd bindings-python && maturin sdist --out "$dist/python")
for line in "${targets[@]}"; do
    read -r target tag _ <<<"$line"
    compatibility=()
    [ "$tag" != - ] && compatibility=(--compatibility "$tag")
    (cd bindings-python && maturin build --release --locked --zig --target "$target" "${compatibility[@]}" \
        --target-dir "$zig_target_dir" --out "$dist/python")
done

echo "==> Node: the addon per platform, shardid and shardid-<platform> packages"
copy_license() { cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$1/"; }
for line in "${targets[@]}"; do
    read -r target _ platform _ <<<"$line"
    # cargo-zigbuild directly (what napi's --cross-compile runs), to pin glibc 2.17 as the
    # wheels and libshardid do; napi-build's build.rs sets the addon's link flags.
    zig_target=$target
    [[ $target == *-linux-gnu ]] && zig_target=$target.2.17
    # A shared library on musl links musl dynamically (Node on Alpine loads it into itself).
    flags=()
    [[ $target == *-musl ]] && flags=(--config "target.$target.rustflags=['-C', 'target-feature=-crt-static']")
    cargo zigbuild "${flags[@]}" --quiet --locked --release -p shardid-node --target "$zig_target" \
        --target-dir "$zig_target_dir"
    built=$zig_target_dir/$target/release/libshardid_node.so
    [[ $target == *-apple-darwin ]] && built=${built%.so}.dylib
    package=$stage/npm/$platform
    mkdir -p "$package"
    cp "bindings-node/npm/$platform/package.json" "bindings-node/npm/$platform/README.md" "$package/"
    cp "$built" "$package/shardid.$platform.node"
    copy_license "$package"
    (cd "$package" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)
done
# The main package: its "files" from bindings-node, the root README and the licences, no
# addon of its own (npm pack leaves symlinks out, so the licences are copies).
main=$stage/npm/shardid
mkdir -p "$main"
(cd bindings-node && npm pack --silent --dry-run --json 2>/dev/null) \
    | node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)' \
    | while read -r file; do mkdir -p "$main/$(dirname "$file")" && cp "bindings-node/$file" "$main/$file"; done
cp README.md "$main/README.md"
copy_license "$main"
(cd "$main" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)

echo "==> C: libshardid per platform (glibc 2.17)"
for line in "${targets[@]}"; do
    read -r target _ _ triple <<<"$line"
    [ "$triple" = - ] && continue
    cargo zigbuild --quiet --locked --release -p shardid-c --target "$target.2.17" \
        --target-dir "$zig_target_dir"
    name=shardid-$version-$triple
    out=$stage/c/$name
    mkdir -p "$out/include" "$out/lib"
    cp include/shardid.h "$out/include/"
    cp "$zig_target_dir/$target/release/libshardid.a" "$zig_target_dir/$target/release/libshardid.so" "$out/lib/"
    cp bindings-c/Makefile bindings-c/shardid.pc.in bindings-c/shardid.supp bindings-c/shardid.lsan.supp "$out/"
    mkdir -p "$out/cmake"
    cp bindings-c/cmake/shardidConfig.cmake.in bindings-c/cmake/shardidConfigVersion.cmake.in "$out/cmake/"
    echo "$version" >"$out/VERSION"
    # What Rust's standard library inside libshardid.a needs from the target's system (rustc's
    # list for an empty static library), for the Makefile's shardid.pc and CMake package.
    echo >"$stage/empty.rs"
    rustc --target "$target" --crate-type staticlib --crate-name shardid_native_libs \
        --print native-static-libs -o "$stage/native-static-libs.a" "$stage/empty.rs" 2>&1 \
        | sed -n 's/.*native-static-libs: //p' >"$out/native-static-libs"
    [ -s "$out/native-static-libs" ] || { echo "no native-static-libs from rustc for $target" >&2; exit 1; }
    cp bindings-c/README.release.md "$out/README.md"
    copy_license "$out"
    tar -C "$stage/c" -czf "$dist/c/$name.tar.gz" "$name"
done

wait "$side" || { cat "$side_log"; echo "release.sh: the WebAssembly package or cargo package failed" >&2; exit 1; }
cat "$side_log"

echo "==> dist/ARTIFACTS.md"
{
    echo "# shardid $version: release artifacts"
    echo
    echo "Built by scripts/release.sh$([ "$host_only" -eq 1 ] && echo ' --host') on $(uname -sm)."
    echo
    echo "| file | for | bytes |"
    echo "|---|---|---|"
    for file in "$dist"/python/* "$dist"/npm/* "$dist"/crates/* "$dist"/c/*; do
        base=$(basename "$file")
        case $base in
            *.tar.gz) [ "${file%/*}" = "$dist/python" ] && what="source (builds with Rust ≥ 1.89)" || what="C: $(sed "s/shardid-$version-\(.*\)\.tar\.gz/\1/" <<<"$base")" ;;
            *.whl) what="Python ≥ 3.10: $(sed 's/.*-abi3-\(.*\)\.whl/\1/' <<<"$base")" ;;
            shardid-wasm-*) what="browsers, bundlers, edge runtimes, Node ≥ 18" ;;
            shardid-"$version".tgz) what="Node ≥ 18 (with its platform package)" ;;
            *.tgz) what="Node addon: $(sed "s/shardid-\(.*\)-$version.tgz/\1/" <<<"$base")" ;;
            *.crate) what="crates.io" ;;
        esac
        echo "| \`$base\` | $what | $(wc -c <"$file") |"
    done
} >"$dist/ARTIFACTS.md"
cat "$dist/ARTIFACTS.md"
