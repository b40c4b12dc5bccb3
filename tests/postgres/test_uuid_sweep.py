"""Issue 62's last item: the UUIDv7 bridge of the emitted DDL round-trips and keeps order over
10 million IDs in SQL, 2.5 million of each preset spread over its whole range, and its boundary
IDs (0, the last ID, each field's largest value alone and with the others, one either side).

Each preset's IDs are made in SQL in increasing order: the k-th is ``k * stride + (k *
2654435761) % stride``, the stride the layout's range over the count, so the time field runs
over its whole range and the shard and sequence bits take scattered values. Order is checked on
the sorted consecutive pairs by a window function over the rows as generate_series yields them
(``lag() OVER ()``: no sort of 2.5 million rows; that each ID is above the one before is
checked too, so the pairs are the sorted ones).
For each ID, ``S.shardid_from_uuid(S.shardid_to_uuid(id)) = id``, and each UUID is above the one
before (the IDs increase, so to_uuid(a) < to_uuid(b) iff a < b across the set). A sample and
the boundaries are compared with the library's bytes too, so a bug the SQL shares in both
directions (a marker, a bit moved) fails here as well.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from conftest import install

import shardid

PRESETS = ("instagram", "twitter", "discord", "sonyflake")
# 10 million in total: 2.5 million per preset (each preset's check is its own test, so that
# pytest-xdist's two workers run two at once).
PER_PRESET = 2_500_000
# An odd multiplier (Knuth's) for the offsets within each stride.
SCATTER = 2654435761


def _fields(layout: shardid.Layout) -> tuple[int, int, int, int]:
    """The largest value of each field in place (time, shard, sequence) and the last ID, as a
    bigint holds them (Discord's preset is unsigned: in PostgreSQL its top bit stays 0)."""
    low = layout.shard_bits + layout.sequence_bits
    units = min(2**layout.time_bits, 2 ** (63 - low))
    shard_shift, sequence_shift = (
        (layout.sequence_bits, 0) if str(layout.order) == "time_shard_sequence" else (0, layout.shard_bits)
    )
    time_max = (units - 1) << low
    shard_max = layout.max_shard << shard_shift
    sequence_max = layout.max_sequence << sequence_shift
    return time_max, shard_max, sequence_max, time_max | shard_max | sequence_max


def boundaries(layout: shardid.Layout) -> list[int]:
    """0, the last ID, each field's largest value with every combination of the others', and
    one either side of each, within the layout: sorted, no repeats."""
    t, s, q, last = _fields(layout)
    combos = {a | b | c for a in (0, t) for b in (0, s) for c in (0, q)}
    return sorted({x + d for x in combos for d in (-1, 0, 1) if 0 <= x + d <= last})


def _sweep_sql(schema: str, count: int, stride: int) -> str:
    ids = f"k * {stride} + (k * {SCATTER}) % {stride}"
    return f"""
        SELECT count(*),
            count(*) FILTER (WHERE back IS DISTINCT FROM id),
            count(*) FILTER (WHERE prev_id >= id),
            count(*) FILTER (WHERE prev_u >= u),
            min(id), max(id)
        FROM (
            SELECT id, u, {schema}.shardid_from_uuid(u) AS back, lag(id) OVER w AS prev_id, lag(u) OVER w AS prev_u
            FROM (SELECT id, {schema}.shardid_to_uuid(id) AS u
                  FROM (SELECT {ids} AS id FROM generate_series(0::bigint, {count - 1}) k OFFSET 0) g
                  OFFSET 0) t
            WINDOW w AS ()
        ) x"""


@pytest.mark.parametrize("name", PRESETS)
def test_ten_million_ids_round_trip_in_order(cluster: Any, name: str) -> None:
    layout = getattr(shardid.Layout, name.upper())
    schema = f"sweep_{name}"
    last = _fields(layout)[3]
    stride = (last + 1) // PER_PRESET
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        install(conn, layout, 0, schema)
        # No parallel workers: a window over the whole set runs in one process anyway.
        conn.execute("SET max_parallel_workers_per_gather = 0")
        started = time.perf_counter()
        row = conn.execute(_sweep_sql(schema, PER_PRESET, stride)).fetchone()
        took = time.perf_counter() - started
        assert row is not None
        count, lost, unsorted, unordered, lowest, highest = row
        assert (count, unsorted) == (PER_PRESET, 0), "the IDs came in increasing order"
        assert lowest == 0 and highest > last - 2 * stride, "the IDs span the layout's range"
        assert (lost, unordered) == (0, 0), f"{name}: {lost} IDs not given back, {unordered} UUIDs out of order"

        edges = boundaries(layout)
        rows = conn.execute(
            f"SELECT id, u::text, {schema}.shardid_from_uuid(u), lag(id) OVER w < id, lag(u) OVER w < u FROM "
            f"(SELECT id, {schema}.shardid_to_uuid(id) AS u FROM unnest(%s::bigint[]) id OFFSET 0) t "
            "WINDOW w AS (ORDER BY id) ORDER BY id",
            (edges,),
        ).fetchall()
        assert [r[0] for r in rows] == edges
        unordered_edges = [id_ for id_, _, _, id_up, u_up in rows[1:] if not (id_up and u_up)]
        assert unordered_edges == [], f"{name}: UUIDs not above the one before at IDs {unordered_edges}"
        for id_, text, back, _, _ in rows:
            assert (text, back) == (str(layout.to_uuid(id_)), id_), (name, id_)
        # A sample of the spread against the library's bytes.
        sample = conn.execute(
            f"SELECT id, {schema}.shardid_to_uuid(id)::text FROM "
            f"(SELECT k * {stride} + (k * {SCATTER}) % {stride} AS id "
            f"FROM generate_series(0::bigint, {PER_PRESET - 1}, 2503) k) g"
        ).fetchall()
        assert len(sample) == 999
        for id_, text in sample:
            assert text == str(layout.to_uuid(id_)), (name, id_)
    print(f"{name}: {PER_PRESET:,} IDs round-tripped and ordered in {took:.2f} s")
