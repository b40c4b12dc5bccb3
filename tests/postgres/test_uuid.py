"""The UUIDv7 bridge in PostgreSQL: shardid_to_uuid / shardid_from_uuid of the emitted DDL give
every vector of uuid.json byte for byte as the clients do, keep order and round-trip IDs made by
next_id(), and refuse what the clients refuse; the uninstall removes them."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import I64_MAX, LAYOUTS, install, load

import shardid
from shardid.sql import postgres_uninstall

# Cases the database can be asked: with a layout (a schema holds one), an ID that fits a bigint,
# and a value PostgreSQL parses as a uuid itself (it reads braces and unhyphenated text, which
# the clients refuse: the text rule is the clients' and PostgreSQL's own here).
CASES = [
    c
    for c in load("uuid.json")["cases"]
    if c["layout"] is not None
    and int(c["args"].get("id", "0")) <= I64_MAX
    and (c["op"] == "to_uuid" or int(c["expect"].get("ok", "0")) <= I64_MAX)
    and "is not UUID text" not in c["expect"].get("message", "")
]


def schema_of(name: str) -> str:
    return f"u_{name}"


@pytest.fixture(scope="module")
def uuid_db(cluster: Any) -> Any:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for name, layout in LAYOUTS.items():
            install(conn, layout, 0, schema_of(name))
    return cluster


def test_most_vectors_run_here() -> None:
    assert len(CASES) > 60
    assert {c["layout"] for c in CASES} == set(LAYOUTS)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(uuid_db: Any, conn: psycopg.Connection[Any], case: dict[str, Any]) -> None:
    s = schema_of(case["layout"])
    expect = case["expect"]
    if case["op"] == "to_uuid":
        query, params = f"SELECT {s}.shardid_to_uuid(%(v)s::bigint)::text", {"v": int(case["args"]["id"])}
    else:
        query, params = f"SELECT {s}.shardid_from_uuid(%(v)s::uuid)", {"v": case["args"]["uuid"]}
    if "ok" in expect:
        got = conn.execute(query, params).fetchone()[0]  # type: ignore[index]
        assert str(got) == expect["ok"]
        return
    with pytest.raises(psycopg.Error) as info:
        conn.execute(query, params)
    err = info.value
    assert str(err).startswith(expect["error"] + ":"), err
    if expect["error"] == "INVALID_ARGUMENT":
        assert err.sqlstate == "22023"
        # The core's reason (to_uuid's also names the ID).
        reason = expect["message"].split(" ", 1)[1]
        assert str(err).splitlines()[0].endswith(reason), (str(err), reason)


@pytest.mark.parametrize("name", ["instagram", "twitter", "discord", "sonyflake"])
def test_database_ids_round_trip_in_order_as_the_library_makes_them(conn: psycopg.Connection[Any], name: str) -> None:
    layout = getattr(shardid.Layout, name.upper())
    schema = f"uuid_{name}"
    install(conn, layout, 3, schema)
    rows = conn.execute(
        f"SELECT id, u::text, {schema}.shardid_from_uuid(u), {schema}.shardid_timestamp_ms(id) FROM "
        f"(SELECT id, {schema}.shardid_to_uuid(id) AS u FROM "
        f"(SELECT {schema}.next_id() AS id FROM generate_series(1, 3000)) ids) us ORDER BY u"
    ).fetchall()
    ids = [r[0] for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == 3000, "ORDER BY uuid is ORDER BY id"
    for id_, text, back, ms in rows:
        u = layout.to_uuid(id_)
        assert (text, back) == (str(u), id_)
        assert int.from_bytes(u.bytes[:6], "big") == ms
        assert shardid.from_uuid(text) == id_
    # PostgreSQL 18 reads the ID's time from the UUID; older servers lack the function.
    if conn.info.server_version >= 180000:
        got = conn.execute(
            f"SELECT count(*) FILTER (WHERE uuid_extract_timestamp({schema}.shardid_to_uuid(id)) "
            f"<> {schema}.shardid_timestamp(id) OR uuid_extract_version({schema}.shardid_to_uuid(id)) <> 7) "
            f"FROM (SELECT {schema}.next_id() AS id FROM generate_series(1, 1000)) ids"
        ).fetchone()[0]  # type: ignore[index]
        assert got == 0
    # A UUID of another layout, and one PostgreSQL made itself, are refused.
    with pytest.raises(psycopg.Error, match="INVALID_ARGUMENT: uuid"):
        conn.execute(f"SELECT {schema}.shardid_from_uuid(gen_random_uuid())")
    conn.execute(postgres_uninstall(schema).encode())
    left = conn.execute(
        "SELECT count(*) FROM pg_proc WHERE pronamespace = %s::regnamespace AND proname LIKE '%%uuid%%'", (schema,)
    ).fetchone()[0]  # type: ignore[index]
    assert left == 0, "the uninstall drops the bridge's functions"


def test_a_bigint_column_moved_to_uuid_reads_back_through_the_frameworks(conn: psycopg.Connection[Any], cluster: Any) -> None:
    """The book's move (``ALTER COLUMN id TYPE uuid USING S.shardid_to_uuid(id)``) on a table of
    IDs and a foreign key to it, then the rows read through SQLAlchemy's ``ShardIdUuid`` on
    PostgreSQL's own ``uuid`` type: each ID as it was, by the ID or its UUID, in the same order;
    and back to ``bigint``."""
    sa = pytest.importorskip("sqlalchemy")
    from shardid.sqlalchemy import ShardIdUuid

    layout = shardid.Layout.INSTAGRAM
    install(conn, layout, 2, "uuid_move")
    conn.execute("DROP TABLE IF EXISTS uuid_move_comments, uuid_move_notes")
    conn.execute("CREATE TABLE uuid_move_notes (id bigint PRIMARY KEY DEFAULT uuid_move.next_id(), text text)")
    conn.execute("CREATE TABLE uuid_move_comments (note bigint REFERENCES uuid_move_notes (id) ON UPDATE CASCADE)")
    conn.execute("INSERT INTO uuid_move_notes (text) SELECT 'n' || i FROM generate_series(1, 500) i")
    conn.execute("INSERT INTO uuid_move_comments SELECT id FROM uuid_move_notes")
    before = [r[0] for r in conn.execute("SELECT id FROM uuid_move_notes ORDER BY id").fetchall()]
    with conn.transaction():
        conn.execute("ALTER TABLE uuid_move_comments DROP CONSTRAINT uuid_move_comments_note_fkey")
        conn.execute("ALTER TABLE uuid_move_notes ALTER COLUMN id DROP DEFAULT")
        conn.execute("ALTER TABLE uuid_move_notes ALTER COLUMN id TYPE uuid USING uuid_move.shardid_to_uuid(id)")
        conn.execute("ALTER TABLE uuid_move_comments ALTER COLUMN note TYPE uuid USING uuid_move.shardid_to_uuid(note)")
        conn.execute("ALTER TABLE uuid_move_comments ADD FOREIGN KEY (note) REFERENCES uuid_move_notes (id)")

    notes = sa.Table(
        "uuid_move_notes", sa.MetaData(), sa.Column("id", ShardIdUuid(layout), primary_key=True), sa.Column("text", sa.Text)
    )
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{cluster.port}/postgres")
    try:
        with engine.connect() as c:
            assert [r[0] for r in c.execute(sa.select(notes.c.id).order_by(notes.c.id))] == before
            assert c.execute(sa.select(notes.c.text).where(notes.c.id == before[7])).scalar_one() == "n8"
            by_uuid = sa.select(notes.c.text).where(notes.c.id == layout.to_uuid(before[9]))
            assert c.execute(by_uuid).scalar_one() == "n10"
    finally:
        engine.dispose()
    joined = conn.execute(
        "SELECT count(*) FROM uuid_move_comments JOIN uuid_move_notes ON note = id"
    ).fetchone()[0]  # type: ignore[index]
    assert joined == 500
    conn.execute("ALTER TABLE uuid_move_comments DROP CONSTRAINT uuid_move_comments_note_fkey")
    conn.execute("ALTER TABLE uuid_move_notes ALTER COLUMN id TYPE bigint USING uuid_move.shardid_from_uuid(id)")
    assert [r[0] for r in conn.execute("SELECT id FROM uuid_move_notes ORDER BY id").fetchall()] == before
    conn.execute("DROP TABLE uuid_move_comments, uuid_move_notes")
