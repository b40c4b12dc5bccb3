"""The one error contract: every kind of the core's table (tests/vectors/errors.json) is a class
of ``shardid`` with its code and number, and errors carry their fields and the core's message."""

from __future__ import annotations

from typing import Any

import pytest

import shardid
from conftest import load

KINDS = load("errors.json")["kinds"]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k["code"])
def test_every_kind_is_a_class(kind: dict[str, Any]) -> None:
    cls = getattr(shardid, kind["name"] + "Error")
    assert cls.__name__ in shardid.__all__
    assert issubclass(cls, shardid.ShardIdError)
    assert (cls.code, cls.number) == (kind["code"], kind["number"])
    assert issubclass(cls, ValueError) == (kind["category"] == "input")
    fields = kind["example"]["fields"]
    err = cls(kind["example"]["message"], **fields)
    for name, value in fields.items():
        assert getattr(err, name) == value


def test_the_kinds_are_all_there() -> None:
    classes = {c for c in vars(shardid).values() if isinstance(c, type) and issubclass(c, shardid.ShardIdError)}
    assert {c.code for c in classes} - {"SHARDID_ERROR"} == {k["code"] for k in KINDS}


def test_a_core_error_has_its_fields_and_the_core_message() -> None:
    with pytest.raises(shardid.ShardOutOfRangeError) as info:
        shardid.Layout.TWITTER.compose(1_700_000_000_000, 5000, 0)
    assert (info.value.shard, info.value.max) == (5000, 1023)
    assert str(info.value) == "shard 5000 is out of range: the layout holds 0..=1023"
    with pytest.raises(shardid.InvalidLayoutError) as layout_info:
        shardid.Layout(epoch_ms=0, time_bits=0, shard_bits=1, sequence_bits=1)
    assert layout_info.value.reason == "the time field needs at least 1 bit"
    assert str(layout_info.value) == "invalid layout: the time field needs at least 1 bit"


def test_invalid_argument_names_the_argument() -> None:
    gen = shardid.Generator(shardid.Layout.TWITTER, 1)
    with pytest.raises(shardid.InvalidArgumentError) as info:
        gen.next_ids(-1)
    assert (info.value.argument, info.value.reason) == ("n", "is negative")
    assert str(info.value) == "n -1 is negative"


def test_one_rule_per_argument() -> None:
    # The kind is the argument's (core/src/args.rs); a wrong type is Python's TypeError.
    with pytest.raises(shardid.ShardOutOfRangeError) as shard:
        shardid.Generator(shardid.Layout.TWITTER, -1)
    assert (shard.value.argument, shard.value.reason, shard.value.shard, shard.value.max) == ("shard", "is negative", -1, 1023)
    with pytest.raises(TypeError):
        shardid.Generator(shardid.Layout.TWITTER, "5")  # type: ignore[arg-type]
    with pytest.raises(shardid.InvalidIdError) as text:
        shardid.Layout.TWITTER.decode(" 12")
    assert (text.value.id, text.value.reason) == (" 12", "is not a decimal integer in 0..2^64")
    assert str(text.value) == "id ' 12' is not a decimal integer in 0..2^64"
    with pytest.raises(shardid.InvalidIdError) as big:
        shardid.Layout.TWITTER.decode(2**64)
    assert (big.value.id, big.value.reason) == (2**64, "does not fit in 64 bits")
    with pytest.raises(shardid.TimestampBeforeEpochError) as before:
        shardid.Layout.TWITTER.min_id_at(-5)
    assert (before.value.timestamp_ms, before.value.argument) == (-5, "timestamp")


def test_the_presets_are_the_cores() -> None:
    presets = [e["name"].upper() for e in load("layouts.json")["layouts"] if e["preset"]]
    assert sorted(shardid.Layout.preset_names()) == sorted(presets)
    for name in presets:
        assert shardid.Layout.preset(name.lower()) == getattr(shardid.Layout, name)
    with pytest.raises(shardid.InvalidLayoutError, match="no preset"):
        shardid.Layout.preset("snowflake")
    with pytest.raises(shardid.InvalidLayoutError) as order:
        shardid.Layout(epoch_ms=0, time_bits=41, shard_bits=10, sequence_bits=12, order="time|shard")  # type: ignore[arg-type]
    assert order.value.reason == 'the order must be "time_shard_sequence" or "time_sequence_shard"'
