"""The Python API: value types, datetimes, bad input per kind, threads, buffers."""

from __future__ import annotations

import functools
import array
import copy
import pickle
from datetime import datetime, timedelta, timezone

import pytest

import shardid
from shardid import Generator, Layout, Parts
from together import on_threads

UTC = timezone.utc
DISCORD_DOCS_ID = 175928847299117063


def test_package_exports_what_it_says() -> None:
    for name in shardid.__all__:
        assert hasattr(shardid, name), name
    assert shardid.__version__.count(".") == 2


def test_presets_repr_eq_hash_pickle() -> None:
    assert repr(Layout.INSTAGRAM) == "Layout.INSTAGRAM"
    custom = Layout(epoch_ms=1_293_840_000_000, time_bits=41, shard_bits=13, sequence_bits=10)
    assert repr(custom).startswith("Layout(epoch_ms=1293840000000, time_bits=41")
    assert eval(repr(custom), {"Layout": Layout}) == custom
    assert custom != Layout.INSTAGRAM
    assert len({Layout.TWITTER, Layout.TWITTER, custom}) == 2
    for value in (Layout.SONYFLAKE, custom):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    with pytest.raises(AttributeError):
        Layout.TWITTER.epoch_ms = 0  # type: ignore[misc]


def test_parts_are_values() -> None:
    parts = Layout.DISCORD.decode(DISCORD_DOCS_ID)
    assert parts == Parts(1462015105796, 32, 7)
    assert repr(parts) == "Parts(timestamp_ms=1462015105796, shard=32, sequence=7)"
    assert parts.datetime == datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=UTC)
    assert pickle.loads(pickle.dumps(parts)) == parts
    assert hash(parts) == hash(Parts(1462015105796, 32, 7))
    assert Parts(1, 2, 3) < Parts(1, 3, 0) < Parts(2, 0, 0)


def test_datetimes_in_and_out() -> None:
    when = datetime(2024, 1, 2, 3, 4, 5, 678999, tzinfo=UTC)
    layout = Layout.TWITTER
    ms = 1704164645678
    assert layout.min_id_at(when) == layout.min_id_at(ms)
    other_zone = when.astimezone(timezone(timedelta(hours=-5)))
    assert layout.max_id_at(other_zone) == layout.max_id_at(ms)
    assert layout.decode(layout.compose(when, 1, 2)).datetime == datetime(
        2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC
    )
    assert Layout.INSTAGRAM.expires_at == datetime(2046, 6, 27, 17, 0, 49, 496000, tzinfo=UTC)
    with pytest.raises(shardid.InvalidArgumentError, match="naive"):
        layout.min_id_at(datetime(2024, 1, 1))
    with pytest.raises(shardid.TimestampBeforeEpochError):
        layout.min_id_at(datetime(2000, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (True, TypeError),
        (1.0, TypeError),
        (None, TypeError),
        (b"123", TypeError),
        (-1, shardid.InvalidIdError),
        (2**64, shardid.InvalidIdError),
        (2**200, shardid.InvalidIdError),
        ("", shardid.InvalidIdError),
        ("-1", shardid.InvalidIdError),
        ("+1", shardid.InvalidIdError),
        (" 1", shardid.InvalidIdError),
        ("1_000", shardid.InvalidIdError),
        ("0x10", shardid.InvalidIdError),
        ("١٢", shardid.InvalidIdError),  # int() would take Arabic-Indic digits
        ("18446744073709551616", shardid.InvalidIdError),
        (str(2**63), shardid.InvalidIdError),  # a valid u64, but not a signed layout's ID
    ],
)
def test_bad_ids_are_rejected_never_truncated(value: object, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        Layout.TWITTER.decode(value)  # type: ignore[arg-type]
    if error is shardid.InvalidIdError:
        assert isinstance(info.value, ValueError) and info.value.code == "INVALID_ID"
    assert "bool" in str(info.value) or value is not True


def test_decimal_strings_and_int_subclasses_are_ids() -> None:
    import enum

    class Big(enum.IntEnum):
        ID = DISCORD_DOCS_ID

    assert Layout.DISCORD.decode(str(DISCORD_DOCS_ID)) == Layout.DISCORD.decode(Big.ID)
    # Leading zeros within the 20 digits a u64 can need; beyond that, refused as in every
    # language (the core's parse_decimal).
    assert Layout.DISCORD.decode("00" + str(DISCORD_DOCS_ID)).shard == 32
    with pytest.raises(shardid.InvalidIdError):
        Layout.DISCORD.decode("000" + str(DISCORD_DOCS_ID))


def test_bad_arguments_per_kind() -> None:
    t = Layout.TWITTER
    with pytest.raises(shardid.ShardOutOfRangeError) as shard:
        t.compose(t.epoch_ms, 1024, 0)
    assert (shard.value.shard, shard.value.max) == (1024, 1023)
    with pytest.raises(shardid.ShardOutOfRangeError) as negative:
        t.compose(t.epoch_ms, -1, 0)
    assert negative.value.shard == -1
    with pytest.raises(shardid.SequenceOutOfRangeError):
        t.compose(t.epoch_ms, 0, 4096)
    with pytest.raises(shardid.TimestampBeforeEpochError) as before:
        t.compose(-5, 0, 0)
    assert before.value.epoch_ms == t.epoch_ms
    with pytest.raises(shardid.TimestampPastExpiryError):
        t.compose(2**64, 0, 0)
    with pytest.raises(shardid.InvalidShardCountError):
        t.shard_for_key(5, 0)
    with pytest.raises(shardid.InvalidArgumentError):
        t.shard_for_key(-5, 10)
    with pytest.raises(TypeError, match="bool"):
        t.compose(t.epoch_ms, True, 0)
    with pytest.raises(TypeError, match="float"):
        t.min_id_at(1.5e12)
    with pytest.raises(shardid.ScatterOverflowError):
        Layout.DISCORD.scatter_decimal(18_446_744_073_709_551_609)
    with pytest.raises(shardid.InvalidLayoutError):
        Layout(epoch_ms=0, time_bits=41, shard_bits=10, sequence_bits=12, order="sideways")  # type: ignore[arg-type]
    with pytest.raises(shardid.InvalidLayoutError):
        Layout(epoch_ms=0, time_bits=300, shard_bits=10, sequence_bits=12)
    with pytest.raises(shardid.InvalidLayoutError):
        Layout(epoch_ms=-1, time_bits=41, shard_bits=10, sequence_bits=12)
    with pytest.raises(shardid.ShardOutOfRangeError):
        Generator(Layout.INSTAGRAM, 8192)
    with pytest.raises(shardid.InvalidArgumentError):
        Generator(Layout.INSTAGRAM, 1).next_ids(-1)


def test_error_classes() -> None:
    input_errors = [
        shardid.InvalidLayoutError,
        shardid.ShardOutOfRangeError,
        shardid.SequenceOutOfRangeError,
        shardid.InvalidShardCountError,
        shardid.InvalidIdError,
        shardid.ScatterOverflowError,
        shardid.TimestampBeforeEpochError,
        shardid.TimestampPastExpiryError,
        shardid.InvalidArgumentError,
    ]
    state_errors = [shardid.ClockMovedBackwardsError, shardid.SequenceExhaustedError]
    codes = set()
    for cls in input_errors + state_errors:
        assert issubclass(cls, shardid.ShardIdError)
        assert issubclass(cls, ValueError) == (cls in input_errors), cls
        codes.add(cls.code)
    assert len(codes) == len(input_errors) + len(state_errors)
    try:
        Layout.TWITTER.decode(2**63)
    except shardid.InvalidIdError as e:
        again = pickle.loads(pickle.dumps(e))
        assert (type(again), again.id, str(again)) == (type(e), e.id, str(e))


def test_generator_errors_carry_their_fields() -> None:
    tiny = Layout(epoch_ms=1000, time_bits=8, shard_bits=2, sequence_bits=2)
    gen = Generator(tiny, 3, backwards_tolerance_ms=5)
    assert [tiny.decode(gen.next_id_at(1100)).sequence for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(shardid.SequenceExhaustedError) as exhausted:
        gen.next_id_at(1100)
    assert exhausted.value.retry_at_ms == 1101
    with pytest.raises(shardid.ClockMovedBackwardsError) as back:
        gen.next_id_at(1094)
    assert (back.value.behind_ms, back.value.tolerance_ms) == (6, 5)
    with pytest.raises(shardid.TimestampPastExpiryError):
        gen.next_id()  # the real clock is long past this layout


def test_generator_handles_share_one_state_and_refuse_pickling() -> None:
    a = Generator(Layout.TWITTER, 901)
    b = Generator(layout=Layout.TWITTER, shard=901)
    ids = [a.next_id_at(1_700_000_000_000), b.next_id_at(1_700_000_000_000)]
    assert [Layout.TWITTER.decode(i).sequence for i in ids] == [0, 1]
    assert repr(a) == "Generator(layout=Layout.TWITTER, shard=901)"
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(a)


def test_next_ids_and_buffers() -> None:
    gen = Generator(Layout.TWITTER, 902)
    ids = gen.next_ids(10_000)
    assert len(ids) == 10_000 and ids == sorted(set(ids))
    buf = array.array("Q", bytes(8 * 5000))
    assert gen.next_ids_into(buf) == 5000
    assert buf[0] > ids[-1] and list(buf) == sorted(set(buf))
    assert all(Layout.TWITTER.decode(i).shard == 902 for i in buf)
    with pytest.raises(TypeError, match="64-bit"):
        gen.next_ids_into(array.array("I", [0, 0]))
    with pytest.raises(TypeError, match="read-only"):
        gen.next_ids_into(bytes(16))
    assert gen.next_ids(0) == []


def test_threads_sharing_one_generator_never_duplicate() -> None:
    gen = Generator(Layout.INSTAGRAM, 903)
    results: list[list[int]] = [[] for _ in range(8)]

    def work(i: int) -> None:
        if i % 2:
            results[i] = [gen.next_id() for _ in range(50_000)]
        else:
            results[i] = [x for _ in range(50) for x in gen.next_ids(1000)]

    on_threads(functools.partial(work, i) for i in range(8))
    every = [x for r in results for x in r]
    assert len(every) == 400_000
    assert len(set(every)) == len(every)
    for r in results:
        assert r == sorted(r) and len(set(r)) == len(r)


def test_now_ms_and_validate_id() -> None:
    import time

    before = shardid.now_ms()
    wall = time.time_ns() // 1_000_000
    after = shardid.now_ms()
    # The generators' clock: the wall clock anchored to a monotonic one, never going back.
    assert before <= after
    assert abs(before - wall) < 1_000
    new_id = Generator(Layout.TWITTER, 904).next_id()
    assert Layout.TWITTER.validate_id(str(new_id)) == new_id


PROBES = """
import shardid
from shardid import Generator, Layout
g = Generator(layout=Layout.INSTAGRAM, shard=1)
seen = []
for n in (10**12, 2**63 - 1, 2**64 - 1, 2**24 + 1):
    for call in (lambda: g.next_ids(n), lambda: g.next_ids_at(1_700_000_000_000, n)):
        try:
            call()
        except shardid.InvalidArgumentError as e:
            assert isinstance(e, ValueError) and e.argument == "n", e
            seen.append(str(e))
print(len(seen), seen[0])
"""


def test_no_count_kills_the_interpreter() -> None:
    # In a child: before the bound, 10**12 aborted the process (a failed allocation) and
    # 2**63 - 1 raised a PanicException that `except Exception` does not catch.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PROBES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.strip() == "8 n must be at most 16777216 IDs per call: ask in batches"
    assert "panicked" not in done.stderr


def test_the_largest_batch_is_made() -> None:
    # The bound is the core's MAX_BATCH_IDS; the largest allowed count is made in full (on a
    # deterministic clock: a layout whose time unit holds it).
    g = Generator(Layout(epoch_ms=0, time_bits=39, shard_bits=0, sequence_bits=24), 0)
    ids = g.next_ids_at(1_000, 2**24)
    assert len(ids) == 2**24 and ids[0] < ids[-1]


def test_decimal_scatter_by_digits_and_bad_counts() -> None:
    layout = Layout.TWITTER
    assert layout.scatter_decimal(1_234_567, digits=2) == 1_672_345
    assert layout.gather_decimal(1_672_345, digits=2) == 1_234_567
    assert layout.scatter_decimal(1_234_567, 3) == 1_567_234
    assert layout.scatter_decimal(1_234_567) == layout.scatter_decimal(1_234_567, digits=1) == 1_723_456
    for bad in (0, 4, 2**64):
        with pytest.raises(shardid.InvalidArgumentError) as refused:
            layout.scatter_decimal(1_234_567, digits=bad)
        assert refused.value.argument == "digits"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        layout.gather_decimal(1_234_567, digits="2")  # type: ignore[arg-type]
