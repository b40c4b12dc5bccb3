"""A shard from a Kubernetes StatefulSet pod's ordinal: every case of ordinal.json, the default
hostname (HOSTNAME, then the host's name) and arguments of the wrong type."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import shardid
from conftest import LAYOUTS, load, outcome

CASES = load("ordinal.json")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    first, end = (int(s) for s in case["args"]["shards"])
    layout = LAYOUTS[case["layout"]]
    got = outcome(
        lambda: shardid.shard_from_ordinal(layout, range(first, end), case["args"]["hostname"]),
        case["expect"],
    )
    assert got == case["expect"]


def test_every_refusal_is_a_value_error_naming_its_argument() -> None:
    refused = [c for c in CASES if c["expect"].get("error") == "INVALID_ARGUMENT"]
    assert len(refused) >= 10
    for c in refused:
        first, end = (int(s) for s in c["args"]["shards"])
        with pytest.raises(shardid.InvalidArgumentError) as info:
            shardid.shard_from_ordinal(LAYOUTS[c["layout"]], range(first, end), c["args"]["hostname"])
        assert isinstance(info.value, ValueError)
        assert info.value.argument == c["expect"]["argument"]


def shard_in_child(env: dict[str, str], call: str) -> str:
    """`call`'s result (or its error's code) in a fresh interpreter with `env` as its environment."""
    script = f"import shardid\ntry:\n    print({call})\nexcept shardid.ShardIdError as e:\n    print(e.code, e)\n"
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


def test_hostname_defaults_to_the_environment_then_the_hosts_name() -> None:
    base = {k: v for k, v in os.environ.items() if k != "HOSTNAME"}
    call = "shardid.shard_from_ordinal(shardid.Layout.INSTAGRAM, range(0, 8192))"
    assert shard_in_child({**base, "HOSTNAME": "web-7"}, call) == "7"
    assert shard_in_child({**base, "HOSTNAME": "web-07"}, call).startswith("INVALID_ARGUMENT hostname ")
    # Set in the process (as a snippet or a test does): read at the call, not at import.
    late = "(__import__('os').environ.__setitem__('HOSTNAME', 'web-12'), " + call + ")[1]"
    assert shard_in_child({**base, "HOSTNAME": "web-7"}, late) == "12"
    # No HOSTNAME: the kernel's host name, as the core reads it.
    with open("/proc/sys/kernel/hostname") as f:
        host = f.read().strip()
    expected = outcome(lambda: shardid.shard_from_ordinal(shardid.Layout.INSTAGRAM, range(0, 8192), host), {})
    got = shard_in_child(base, call)
    if "ok" in expected:
        assert got == expected["ok"]
    else:
        assert got.startswith(expected["error"] + " hostname ")


def test_arguments_of_the_wrong_type() -> None:
    layout = shardid.Layout.INSTAGRAM
    for hostname in (3, b"app-3"):
        with pytest.raises(TypeError):
            shardid.shard_from_ordinal(layout, range(0, 8), hostname)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        shardid.shard_from_ordinal(layout, (0, 8), "app-3")  # type: ignore[arg-type]
    with pytest.raises(shardid.InvalidArgumentError):
        shardid.shard_from_ordinal(layout, range(0, 8, 2), "app-3")
    with pytest.raises(shardid.ShardOutOfRangeError):
        shardid.shard_from_ordinal(layout, range(-1, 8), "app-3")
    # A lone surrogate is no pod's name: refused, never a crash.
    with pytest.raises(shardid.InvalidArgumentError):
        shardid.shard_from_ordinal(layout, range(0, 8), "app-\udc003")
    assert shardid.shard_from_ordinal(layout, range(0, 8), hostname="app-3") == 3
    assert "shard_from_ordinal" in shardid.__all__
