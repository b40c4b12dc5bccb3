"""Every conformance vector of tests/vectors/, through the installed wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import pytest

import shardid
from conftest import LAYOUTS, layout_from_spec, load, outcome

CASE_FILES = ["decode.json", "compose.json", "ranges.json", "shard_for_key.json", "scatter.json"]
CASES = [(f, c) for f in CASE_FILES for c in load(f)["cases"]]


def run_op(layout: shardid.Layout, op: str, args: dict[str, str]) -> Any:
    a = {k: int(v) for k, v in args.items()}
    if op == "decode":
        return layout.decode(a["id"])
    if op == "compose":
        return layout.compose(a["timestamp_ms"], a["shard"], a["sequence"])
    if op in ("min_id_at", "max_id_at"):
        return getattr(layout, op)(a["timestamp_ms"])
    if op == "shard_for_key":
        return layout.shard_for_key(a["key"], a["logical_shards"])
    if op.endswith("_decimal_digits"):
        return getattr(layout, op.removesuffix("_digits"))(a["id"], digits=a["digits"])
    return getattr(layout, op)(a["id"])


@pytest.mark.parametrize(("file", "case"), CASES, ids=[f"{f}:{c['name']}" for f, c in CASES])
def test_case(file: str, case: dict[str, Any]) -> None:
    layout = LAYOUTS[case["layout"]]
    assert outcome(lambda: run_op(layout, case["op"], case["args"]), case["expect"]) == case["expect"]


@pytest.mark.parametrize("file", CASE_FILES)
def test_ids_as_decimal_strings_give_the_same_results(file: str) -> None:
    for case in load(file)["cases"]:
        if "id" in case["args"]:
            layout = LAYOUTS[case["layout"]]
            op = case["op"]
            method = getattr(layout, op.removesuffix("_digits"))
            extra = {"digits": int(case["args"]["digits"])} if "digits" in case["args"] else {}
            as_str = outcome(lambda: method(case["args"]["id"], **extra), case["expect"])
            assert as_str == case["expect"], case["name"]


UUID_CASES = load("uuid.json")["cases"]


def run_uuid(case: dict[str, Any], as_text: bool) -> Any:
    layout = LAYOUTS[case["layout"]] if case["layout"] else None
    if case["op"] == "to_uuid":
        assert layout is not None
        made = layout.to_uuid(int(case["args"]["id"]))
        assert isinstance(made, uuid.UUID) and made.version == 7 and made.variant == uuid.RFC_4122
        return str(made)
    text = case["args"]["uuid"]
    # A uuid.UUID where Python can make one of the text; the core reads the text itself.
    arg: Any = text
    if not as_text:
        try:
            if len(text) == 36:
                arg = uuid.UUID(text)
        except ValueError:
            pass
    if layout is None:
        return shardid.from_uuid(arg)
    assert shardid.from_uuid(arg, layout) == layout.from_uuid(arg)
    return layout.from_uuid(arg)


@pytest.mark.parametrize("as_text", [False, True], ids=["uuid", "text"])
@pytest.mark.parametrize("case", UUID_CASES, ids=[c["name"] for c in UUID_CASES])
def test_uuid_case(case: dict[str, Any], as_text: bool) -> None:
    assert outcome(lambda: run_uuid(case, as_text), case["expect"]) == case["expect"]


def test_uuid_wrong_types() -> None:
    for bad in (b"\x00" * 16, 7, None, uuid.UUID(int=0).bytes):
        with pytest.raises(TypeError, match="uuid must be a uuid.UUID or a str"):
            shardid.Layout.TWITTER.from_uuid(bad)
    # Text that is no UUID is the core's refusal, a ValueError.
    with pytest.raises(shardid.InvalidArgumentError) as refused:
        shardid.from_uuid("{" + str(shardid.Layout.TWITTER.to_uuid(0)) + "}")
    assert isinstance(refused.value, ValueError)
    # A UUID Python made itself: version 4, refused.
    with pytest.raises(shardid.InvalidArgumentError, match="not a UUIDv7"):
        shardid.from_uuid(uuid.uuid4())


def test_there_are_many_cases() -> None:
    assert len(CASES) > 200


@pytest.mark.parametrize("entry", load("layouts.json")["layouts"], ids=lambda e: e["name"])
def test_layouts_and_their_limits(entry: dict[str, Any]) -> None:
    layout = layout_from_spec(entry["spec"])
    for field in ("max_shard", "max_sequence", "max_id", "expires_at_ms"):
        assert getattr(layout, field) == int(entry[field]), field
    if entry["preset"]:
        assert layout == getattr(shardid.Layout, entry["name"].upper())


@pytest.mark.parametrize("entry", load("layouts.json")["invalid"], ids=lambda e: e["name"])
def test_invalid_layouts(entry: dict[str, Any]) -> None:
    with pytest.raises(shardid.InvalidLayoutError) as info:
        layout_from_spec(entry["spec"])
    assert info.value.code == entry["expect"]["error"]
    assert isinstance(info.value, ValueError)


RUN_TRACE = """
import json, sys
import shardid
sys.path.insert(0, sys.argv[1])
from conftest import LAYOUTS, outcome
trace = json.load(sys.stdin)
opts = {k: int(v) for k, v in trace["options"].items()}
gen = shardid.Generator(LAYOUTS[trace["layout"]], int(trace["shard"]), **opts)
results = []
for step in trace["steps"]:
    now = int(step["now_ms"])
    if step["op"] == "next_id_at":
        call = lambda: gen.next_id_at(now)
    else:
        call = lambda: gen.next_ids_at(now, int(step["count"]))
    results.append(outcome(call, step["expect"]))
json.dump(results, sys.stdout)
"""

TRACES = load("generator.json")["traces"]


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t["name"])
def test_generator_trace(trace: dict[str, Any]) -> None:
    # Generators for one (layout, shard) share one state per process, and the traces each
    # assume a fresh one: every trace runs in its own interpreter.
    import conftest

    done = subprocess.run(
        [sys.executable, "-c", RUN_TRACE, str(conftest.VECTORS.parent / "python")],
        input=json.dumps(trace),
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout)
    for i, (step, result) in enumerate(zip(trace["steps"], got)):
        assert result == step["expect"], f"step {i}"
    assert len(got) == len(trace["steps"])


def adversarial_value(inp: dict[str, Any]) -> Any:
    """The case's input as a Python value (see adversarial.json's comment)."""
    if "text" in inp:
        return inp["text"]
    if "text_repeat" in inp:
        return inp["text_repeat"]["text"] * inp["text_repeat"]["times"]
    if "int" in inp:
        return int(inp["int"])
    if "number" in inp:
        return float(inp["number"].replace("Infinity", "inf"))
    return inp["other"]


ADVERSARIAL = load("adversarial.json")["cases"]


@pytest.mark.parametrize("case", ADVERSARIAL, ids=[c["name"] for c in ADVERSARIAL])
def test_adversarial_input(case: dict[str, Any]) -> None:
    layout = LAYOUTS[case["layout"]]
    value = adversarial_value(case["input"])
    expect = case["expect"]
    if "number" in case["input"] or expect.get("wrong_type"):
        # Python takes no float as an ID, and a wrong type is Python's own TypeError.
        with pytest.raises(TypeError) as caught:
            layout.validate_id(value)
    elif "ok" in expect:
        assert layout.validate_id(value) == int(expect["ok"])
        return
    else:
        with pytest.raises(shardid.ShardIdError) as caught:
            layout.validate_id(value)
        assert caught.value.code == expect["error"]
        assert isinstance(caught.value, ValueError)
    # Whatever came in, the message stays short enough to log.
    assert len(str(caught.value)) < 200, str(caught.value)[:300]
