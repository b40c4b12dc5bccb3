#!/usr/bin/env python3
"""One version for every package, kept in one place: `[workspace.package] version` in the root
Cargo.toml. The Python wheel reads it from there (maturin); everything that must repeat it is
listed here, checked, and rewritten together.

    scripts/version.py          check: every copy agrees with Cargo.toml (exit 1 otherwise)
    scripts/version.py 0.2.0    set: write 0.2.0 everywhere, then add a CHANGELOG section
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEMVER = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")


def workspace_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    match = re.search(r'^\[workspace\.package\]\n(?:.*\n)*?version = "([^"]+)"', text, re.M)
    assert match, "Cargo.toml has no [workspace.package] version"
    return match.group(1)


def npm_manifests() -> list[Path]:
    return [
        ROOT / "bindings-node/package.json",
        *sorted((ROOT / "bindings-node/npm").glob("*/package.json")),
        ROOT / "bindings-wasm/npm/package.json",
    ]


def copies() -> list[tuple[str, str]]:
    """(where, the version written there) for every copy."""
    found: list[tuple[str, str]] = []
    cargo = (ROOT / "Cargo.toml").read_text()
    dep = re.search(r'^shardid = \{ path = "core", version = "([^"]+)"', cargo, re.M)
    found.append(("Cargo.toml [workspace.dependencies] shardid", dep.group(1) if dep else "missing"))
    for manifest in npm_manifests():
        data = json.loads(manifest.read_text())
        rel = manifest.relative_to(ROOT)
        found.append((f"{rel} version", data["version"]))
        for name, wanted in data.get("optionalDependencies", {}).items():
            found.append((f"{rel} optionalDependencies {name}", wanted))
    lock = json.loads((ROOT / "bindings-node/package-lock.json").read_text())
    found.append(("bindings-node/package-lock.json version", lock["version"]))
    found.append(('bindings-node/package-lock.json packages[""]', lock["packages"][""]["version"]))
    # napi-rs writes the version into the loader, which compares it with the platform package's.
    loader = (ROOT / "bindings-node/native.generated.js").read_text()
    for expected in sorted(set(re.findall(r"expected (\S+) but got", loader))):
        found.append(("bindings-node/native.generated.js (napi build)", expected))
    changelog = (ROOT / "CHANGELOG.md").read_text()
    first = re.search(r"^## \[([^\]]+)\]", changelog, re.M)
    found.append(("CHANGELOG.md latest section", first.group(1) if first else "missing"))
    return found


def check() -> int:
    version = workspace_version()
    wrong = [(where, v) for where, v in copies() if v != version]
    for where, v in wrong:
        print(f"version: {where} is {v}, Cargo.toml says {version}", file=sys.stderr)
    if wrong:
        print("version: run scripts/version.py <version> to write one version everywhere", file=sys.stderr)
        return 1
    print(f"version {version}: {len(copies())} copies agree")
    return 0


def set_version(new: str) -> int:
    if not SEMVER.fullmatch(new):
        print(f"version: {new!r} is not a semantic version", file=sys.stderr)
        return 2
    old = workspace_version()
    cargo = ROOT / "Cargo.toml"
    text = cargo.read_text()
    text = re.sub(r'^(\[workspace\.package\]\n(?:.*\n)*?version = ")[^"]+"', rf'\g<1>{new}"', text, count=1, flags=re.M)
    text = re.sub(r'^(shardid = \{ path = "core", version = ")[^"]+"', rf'\g<1>{new}"', text, count=1, flags=re.M)
    cargo.write_text(text)
    for manifest in npm_manifests():
        data = json.loads(manifest.read_text())
        data["version"] = new
        for name in data.get("optionalDependencies", {}):
            data["optionalDependencies"][name] = new
        manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    lock_path = ROOT / "bindings-node/package-lock.json"
    lock = json.loads(lock_path.read_text())
    lock["version"] = lock["packages"][""]["version"] = new
    for name in lock["packages"][""].get("optionalDependencies", {}):
        lock["packages"][""]["optionalDependencies"][name] = new
    lock_path.write_text(json.dumps(lock, indent=2, ensure_ascii=False) + "\n")
    changelog = ROOT / "CHANGELOG.md"
    text = changelog.read_text()
    if f"## [{new}]" not in text:
        marker = text.index("\n## [")
        text = text[:marker] + f"\n## [{new}] - unreleased\n\n- (what changed since {old})\n" + text[marker:]
        changelog.write_text(text)
    print(f"version {old} -> {new}: now run `cargo update -w` and (cd bindings-node && npm run build), and edit CHANGELOG.md")
    return 0


if __name__ == "__main__":
    sys.exit(set_version(sys.argv[1]) if len(sys.argv) > 1 else check())
