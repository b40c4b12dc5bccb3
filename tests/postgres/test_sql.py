"""The emitted DDL on a real server: every conformance vector through the SQL decoding
functions, IDs crossing between the database and the library, installing and errors."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import psycopg
import pytest
from conftest import I64_MAX, LAYOUTS, install, load

import shardid
from shardid.sql import postgres

DECODE = [c for c in load("decode.json")["cases"]]
RANGES = [c for c in load("ranges.json")["cases"]]
# An exact timestamptz for Unix milliseconds, built in SQL (no float on the way).
TS = "(timestamp '1970-01-01' + (%(ms)s::bigint / 1000) * interval '1 second' + (%(ms)s::bigint %% 1000) * interval '1 millisecond') AT TIME ZONE 'UTC'"


def schema_of(name: str) -> str:
    return f"v_{name}"


@pytest.fixture(scope="module")
def vectors_db(cluster: Any) -> Any:
    """Every named layout of the vectors installed in a schema of its own, with shard 0."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for name, layout in LAYOUTS.items():
            install(conn, layout, 0, schema_of(name))
    return cluster


def sql_error(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(query, params)
    return info.value


@pytest.mark.parametrize("case", DECODE, ids=[c["name"] for c in DECODE])
def test_decode_vectors(vectors_db: Any, conn: psycopg.Connection[Any], case: dict[str, Any]) -> None:
    s = schema_of(case["layout"])
    id_ = int(case["args"]["id"])
    query = f"SELECT {s}.shardid_timestamp_ms(%(id)s::bigint), {s}.shardid_shard(%(id)s::bigint), {s}.shardid_sequence(%(id)s::bigint), {s}.shardid_timestamp(%(id)s::bigint)"
    if id_ > I64_MAX:
        # Not a bigint: the database refuses the value itself; nothing is decoded wrongly.
        err = sql_error(conn, query, {"id": id_})
        assert err.sqlstate == "22003", err
        return
    expect = case["expect"]
    if "error" in expect:
        err = sql_error(conn, query, {"id": id_})
        assert str(err).startswith(expect["error"] + ":"), err
        assert err.sqlstate == "22003"
        return
    ms, shard, sequence, ts = conn.execute(query, {"id": id_}).fetchone()  # type: ignore[misc]
    ok = expect["ok"]
    assert (str(ms), str(shard), str(sequence)) == (ok["timestamp_ms"], ok["shard"], ok["sequence"])
    expected_ts = conn.execute(f"SELECT {TS}", {"ms": ms}).fetchone()[0]  # type: ignore[index]
    assert ts == expected_ts


@pytest.mark.parametrize("case", RANGES, ids=[c["name"] for c in RANGES])
def test_range_vectors(vectors_db: Any, conn: psycopg.Connection[Any], case: dict[str, Any]) -> None:
    s = schema_of(case["layout"])
    op = case["op"]
    ms = int(case["args"]["timestamp_ms"])
    expect = case["expect"]
    queries = [f"SELECT {s}.shardid_{op}_ms(%(ms)s::bigint)", f"SELECT {s}.shardid_{op}({TS})"]
    if "ok" in expect and int(expect["ok"]) <= I64_MAX:
        for query in queries:
            assert conn.execute(query, {"ms": ms}).fetchone()[0] == int(expect["ok"]), query  # type: ignore[index]
        return
    # An error in the library, or an ID beyond a bigint (an unsigned layout near its end):
    # the SQL functions of an unsigned layout expire when the top bit would be needed.
    code = expect.get("error", "TIMESTAMP_PAST_EXPIRY")
    for query in queries:
        err = sql_error(conn, query, {"ms": ms})
        assert str(err).startswith(code + ":"), (query, err)
        assert err.sqlstate == "22008"


def test_every_vector_layout_was_checked() -> None:
    assert {c["layout"] for c in DECODE} == set(LAYOUTS)
    assert {c["layout"] for c in RANGES} == set(LAYOUTS)


@pytest.mark.parametrize("name", ["instagram", "twitter", "discord", "sonyflake"])
def test_database_ids_decode_alike_in_python_and_library_ids_in_sql(conn: psycopg.Connection[Any], name: str) -> None:
    layout = getattr(shardid.Layout, name.upper())
    schema = f"cross_{name}"
    install(conn, layout, 3, schema)
    rows = conn.execute(
        f"SELECT id, {schema}.shardid_timestamp_ms(id), {schema}.shardid_shard(id), "
        f"{schema}.shardid_sequence(id), {schema}.shardid_timestamp(id), clock_timestamp() "
        f"FROM (SELECT {schema}.next_id() AS id FROM generate_series(1, 5000)) ids"
    ).fetchall()
    for id_, ms, shard, sequence, ts, after in rows:
        parts = layout.decode(id_)
        assert (parts.timestamp_ms, parts.shard, parts.sequence) == (ms, shard, sequence) and shard == 3
        assert parts.datetime == ts
        # Dated no later than the moment after it was made (no borrowing by default).
        assert parts.datetime <= after
    generator = shardid.Generator(layout, 4)
    ids = generator.next_ids(2000)
    got = conn.execute(
        f"SELECT id, {schema}.shardid_timestamp_ms(id), {schema}.shardid_shard(id), {schema}.shardid_sequence(id) "
        "FROM unnest(%s::bigint[]) AS id",
        (ids,),
    ).fetchall()
    for id_, ms, shard, sequence in got:
        parts = layout.decode(id_)
        assert (parts.timestamp_ms, parts.shard, parts.sequence) == (ms, shard, sequence)


def test_decode_functions_can_back_indexes(conn: psycopg.Connection[Any]) -> None:
    install(conn, shardid.Layout.INSTAGRAM, 5, "idx5")
    volatility = dict(
        conn.execute(
            "SELECT p.proname, p.provolatile::text || p.proparallel::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'idx5'"
        ).fetchall()
    )
    for name in ("shardid_timestamp", "shardid_timestamp_ms", "shardid_shard", "shardid_sequence",
                 "shardid_min_id_at", "shardid_max_id_at", "shardid_min_id_at_ms", "shardid_max_id_at_ms"):
        assert volatility[name] == "is", name  # IMMUTABLE, PARALLEL SAFE
    assert volatility["next_id"] == "vu"  # VOLATILE, PARALLEL UNSAFE
    conn.execute("CREATE TABLE idx5.t (id bigint PRIMARY KEY DEFAULT idx5.next_id(), v int)")
    conn.execute("CREATE INDEX ON idx5.t (idx5.shardid_timestamp(id))")
    conn.execute("INSERT INTO idx5.t (v) SELECT g FROM generate_series(1, 1000) g")
    n = conn.execute(
        "SELECT count(*) FROM idx5.t WHERE id BETWEEN idx5.shardid_min_id_at(now() - interval '1 hour') "
        "AND idx5.shardid_max_id_at(clock_timestamp())"
    ).fetchone()[0]  # type: ignore[index]
    assert n == 1000


def test_installing_again_keeps_the_state_and_another_layout_is_refused(conn: psycopg.Connection[Any]) -> None:
    install(conn, shardid.Layout.TWITTER, 1, "again")
    first = conn.execute("SELECT again.next_id()").fetchone()[0]  # type: ignore[index]
    install(conn, shardid.Layout.TWITTER, 1, "again")
    assert conn.execute("SELECT again.next_id()").fetchone()[0] > first  # type: ignore[index]
    with pytest.raises(psycopg.errors.DuplicateObject, match="another layout"):
        install(conn, shardid.Layout.INSTAGRAM, 1, "again")


def test_the_command_line_prints_the_same_ddl() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "shardid.sql", "--layout", "instagram", "--shard", "5", "--schema", "insta5"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out == postgres(shardid.Layout.INSTAGRAM, 5, "insta5")
    custom = subprocess.run(
        [sys.executable, "-m", "shardid.sql", "--epoch-ms", "1293840000000", "--bits", "41,13,10",
         "--shard", "5", "--schema", "blog"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert custom == postgres(LAYOUTS["instagram_blog"], 5, "blog")
    bad = subprocess.run(
        [sys.executable, "-m", "shardid.sql", "--layout", "instagram", "--shard", "9000", "--schema", "x"],
        capture_output=True, text=True,
    )
    assert bad.returncode == 1 and "shard 9000 is out of range" in bad.stderr


def test_bad_arguments_raise_value_errors() -> None:
    with pytest.raises(shardid.ShardOutOfRangeError):
        postgres(shardid.Layout.INSTAGRAM, 8192, "x")
    with pytest.raises(shardid.InvalidArgumentError, match="^schema is not a valid name: only a-z") as info:
        postgres(shardid.Layout.INSTAGRAM, 1, 'x"; DROP TABLE users; --')
    assert info.value.argument == "schema"
    with pytest.raises(TypeError):
        postgres(shardid.Layout.INSTAGRAM, "1", "x")  # type: ignore[arg-type]
