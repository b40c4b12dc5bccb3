"""Every DDL shardid emits, on every PostgreSQL major from 13 to 18 (issue 62): a short contract
per version on a throwaway cluster of its own, run by tests/postgres/versions.sh (not by
tests/postgres/run.sh, whose full suite stays on one version: the file is not named test_*).

Each version's cluster gets next_id() for every layout of the vectors, the segments (with the
serials), the dictionary and the public IDs installed; the vectors through the SQL decoding and
the UUIDv7 bridge; a take of dense IDs and of a serial, a dictionary batch, an expiring and a
session lease, ``shardid status``; four clients at once (next_id() and dense IDs) with no ID
twice; and the uninstall leaving no function behind. On 18, issue 62's done-when:
``uuid_extract_timestamp(to_uuid(id))`` is the ID's decoded time for a million IDs of each
preset, and ``uuid_extract_version`` is 7.

``SHARDID_PG_BINDIRS`` lists the servers (``13=/dir/bin 14=/dir/bin ...``, set by versions.sh);
unset, the one server tests/postgres/cluster.py finds.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cluster import Cluster, bindir
from conftest import I64_MAX, LAYOUTS, install, load

import shardid
import shardid.postgres
import shardid.status
from shardid.dictionary import Dictionary
from shardid.segments import DenseIds, Serials, create_serial
from shardid.sql import (
    dictionary,
    dictionary_uninstall,
    postgres_uninstall,
    public_ids_sql,
    public_ids_sql_uninstall,
    segments,
    segments_uninstall,
)


def _servers() -> dict[str, Path]:
    listed = os.environ.get("SHARDID_PG_BINDIRS", "").split()
    if not listed:
        return {"default": bindir()}
    given = {major: Path(path) for major, path in (entry.split("=", 1) for entry in listed)}
    return dict(sorted(given.items(), key=lambda item: int(item[0])))


SERVERS = _servers()
PRESETS = ("instagram", "twitter", "discord", "sonyflake")
KEY = "30313233343536373839616263646566"  # b"0123456789abcdef", as tests/postgres/test_public_ids.py
DECODE = load("decode.json")["cases"]
# The bridge's cases a database can be asked (as tests/postgres/test_uuid.py: a layout, a bigint,
# and text PostgreSQL's uuid type reads itself).
UUIDS = [
    c
    for c in load("uuid.json")["cases"]
    if c["layout"] is not None
    and int(c["args"].get("id", "0")) <= I64_MAX
    and (c["op"] == "to_uuid" or int(c["expect"].get("ok", "0")) <= I64_MAX)
    and "is not UUID text" not in c["expect"].get("message", "")
]
SCHEMAS = {"next_id": [f"v_{name}" for name in LAYOUTS], "seg": ["seg"], "dict": ["dict"], "pub": ["pub"]}


class Server(Cluster):
    """A throwaway cluster (tests/postgres/cluster.py's) run by the binaries in `bin`."""

    def __init__(self, bin: Path) -> None:  # noqa: A002 (the directory's usual name)
        self._bin = bin
        super().__init__()

    def _initdb(self) -> None:
        self.bin = self._bin
        super()._initdb()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


def per_version(test: Any) -> Any:
    """Runs `test` on each version (in the order of the file's tests: the contract's steps
    build on each other)."""
    return pytest.mark.parametrize("major", list(SERVERS))(test)


def _started(bin: Path, install_all: bool) -> Server:  # noqa: A002 (the directory's usual name)
    """A cluster of `bin` with every DDL installed (`install_all`: all in one transaction, as
    ``psql -1 -f`` would run a script), or only the presets' next_id()."""
    s = Server(bin)
    try:
        with psycopg.connect(s.dsn, autocommit=True) as conn, conn.transaction():
            if install_all:
                for name, layout in LAYOUTS.items():
                    install(conn, layout, 0, f"v_{name}")
                conn.execute(segments("seg").encode())
                conn.execute(dictionary("dict").encode())
                conn.execute(public_ids_sql("pub").encode())
            else:
                for name in PRESETS:
                    install(conn, getattr(shardid.Layout, name.upper()), 0, f"v_{name}")
    except BaseException:
        s.stop()
        raise
    return s


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    """A cluster per version with every DDL installed, started side by side (initdb and the
    installs overlap), stopped at the end."""
    with ThreadPoolExecutor(len(SERVERS)) as pool:
        futures = {major: pool.submit(_started, bin, True) for major, bin in SERVERS.items()}
    started = {major: f.result() for major, f in futures.items() if f.exception() is None}
    try:
        for f in futures.values():
            f.result()  # the first failure's error, once every cluster has started or failed
        yield started
    finally:
        for s in started.values():
            s.stop()


@pytest.fixture
def server(servers: dict[str, Server], major: str) -> Server:
    return servers[major]


@pytest.fixture
def db(server: Server) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        yield conn


@per_version
def test_the_server_is_the_version_named(major: str, db: psycopg.Connection[Any]) -> None:
    if major != "default":
        assert db.info.server_version // 10000 == int(major)


@per_version
def test_decode_vectors(db: psycopg.Connection[Any]) -> None:
    """Every decode vector of a bigint through the DDL's decoding functions, in one statement
    per case (the full suite checks the errors' words too)."""
    checked = 0
    for case in DECODE:
        id_, expect = int(case["args"]["id"]), case["expect"]
        if id_ > I64_MAX:
            continue
        s = f"v_{case['layout']}"
        query = f"SELECT {s}.shardid_timestamp_ms(%(id)s::bigint), {s}.shardid_shard(%(id)s::bigint), {s}.shardid_sequence(%(id)s::bigint)"
        if "error" in expect:
            with pytest.raises(psycopg.Error, match=expect["error"]):
                db.execute(query, {"id": id_})
            continue
        got = db.execute(query, {"id": id_}).fetchone()
        ok = expect["ok"]
        assert tuple(map(str, got)) == (ok["timestamp_ms"], ok["shard"], ok["sequence"]), case["name"]  # type: ignore[arg-type]
        checked += 1
    assert checked > 20


@per_version
def test_uuid_vectors(db: psycopg.Connection[Any]) -> None:
    assert len(UUIDS) > 60
    for case in UUIDS:
        s, expect = f"v_{case['layout']}", case["expect"]
        if case["op"] == "to_uuid":
            query, value = f"SELECT {s}.shardid_to_uuid(%(v)s::bigint)::text", int(case["args"]["id"])
        else:
            query, value = f"SELECT {s}.shardid_from_uuid(%(v)s::uuid)", case["args"]["uuid"]
        if "ok" in expect:
            assert str(db.execute(query, {"v": value}).fetchone()[0]) == expect["ok"], case["name"]  # type: ignore[index]
        else:
            with pytest.raises(psycopg.Error) as info:
                db.execute(query, {"v": value})
            assert str(info.value).startswith(expect["error"] + ":"), (case["name"], info.value)


@per_version
def test_a_take_a_serial_a_dictionary_batch_and_public_ids(server: Server, db: psycopg.Connection[Any]) -> None:
    db.execute("SELECT seg.create_tag('orders')")
    with DenseIds(server.url, "orders", schema="seg", min_size=10, max_size=10) as orders:
        taken = [orders.next_id() for _ in range(25)]
    assert taken == list(range(1, 26))
    create_serial(server.url, "inv", "INV-{yyyy}-{seq:4}", zone="UTC", schema="seg")
    invoices = Serials(server.url, "inv", "INV-{yyyy}-{seq:4}", zone="UTC", schema="seg")
    try:
        serials = [invoices.next_serial() for _ in range(3)]
    finally:
        invoices.close()
    assert [s[-4:] for s in serials] == ["0001", "0002", "0003"]
    # The same DDL's takes in SQL alone, past what the clients took (and gave back).
    (dense,) = db.execute("SELECT seg.next_dense_id('orders')").fetchone()  # type: ignore[misc]
    assert dense > 25
    (serial,) = db.execute("SELECT seg.next_serial('inv', 'INV-{yyyy}-{seq:4}', 'UTC')").fetchone()  # type: ignore[misc]
    assert serial.startswith("INV-") and int(serial[-4:]) > 3, serial
    with Dictionary(server.url, "tags", schema="dict") as tags:
        tags.create()
        assert tags.ids(["a", "b", "a", "c"]) == [0, 1, 0, 2]
    with Dictionary(server.url, "tags", schema="dict") as again:
        assert again.ids(["c", "d", "b"]) == [2, 3, 1]
    encoded = db.execute("SELECT pub.shardid_public_encode(5, %s, 'note')", (KEY,)).fetchone()[0]  # type: ignore[index]
    assert encoded == shardid.PublicIds.from_keys(KEY, "note").encode(5)
    assert db.execute("SELECT pub.shardid_public_decode(%s, %s, 'note')", (encoded, KEY)).fetchone() == (5,)


@per_version
@pytest.mark.parametrize("kind", ["expiring", "session"])
def test_leases(server: Server, kind: str) -> None:
    layout = shardid.Layout.INSTAGRAM
    with (
        shardid.postgres.lease(layout, server.url, range(0, 4), kind=kind, table=f"leases_{kind}") as a,
        shardid.postgres.lease(layout, server.url, range(0, 4), kind=kind, table=f"leases_{kind}") as b,
    ):
        assert {a.shard, b.shard} == {0, 1}
        ids = [a.next_id() for _ in range(100)] + [b.next_id() for _ in range(100)]
    assert len(set(ids)) == 200
    assert {layout.decode(i).shard for i in ids} == {0, 1}


@per_version
def test_four_clients_take_no_id_twice(server: Server, db: psycopg.Connection[Any]) -> None:
    """Four threads, each with its own connection calling next_id() and its own dense IDs
    allocator on one tag (segments of 50: many takes racing)."""
    db.execute("SELECT seg.create_tag('race')")
    made: list[list[int]] = [[] for _ in range(4)]
    dense: list[list[int]] = [[] for _ in range(4)]
    failed: list[BaseException] = []
    start = threading.Barrier(4)

    def client(i: int) -> None:
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                with DenseIds(server.url, "race", schema="seg", min_size=50, max_size=50) as ids:
                    start.wait(timeout=30)
                    for _ in range(5):
                        made[i] += [r[0] for r in conn.execute("SELECT v_instagram.next_id() FROM generate_series(1, 500)")]
                        dense[i] += [ids.next_id() for _ in range(300)]
        except BaseException as e:  # noqa: BLE001 (reported below)
            failed.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failed, failed
    every = [i for ids in made for i in ids]
    assert len(every) == 10_000 and len(set(every)) == 10_000
    every_dense = [i for ids in dense for i in ids]
    assert len(every_dense) == 6_000 and len(set(every_dense)) == 6_000


@per_version
def test_status_reads_what_is_installed(server: Server, db: psycopg.Connection[Any]) -> None:
    """``shardid status`` reads a tag, a topic and a lease table (its first statement reads the
    catalogues, which differ across versions)."""
    db.execute("SELECT seg.create_tag('status_tag')")
    with Dictionary(server.url, "status_topic", schema="dict") as topic:
        topic.create()
        assert topic.ids(["x"]) == [0]
    with shardid.postgres.lease(shardid.Layout.INSTAGRAM, server.url, range(7, 8)) as held:
        assert held.shard == 7
        out, err, code = shardid.status.main(["status", server.url])
    assert code == 0, err
    leases = out.split("leases (public.shardid_leases)")[1].split("tags (")[0]
    tags = out.split("tags (seg.shardid_tags)")[1].split("topics (")[0]
    topics = out.split("topics (dict.shardid_topics)")[1].split("layouts")[0]
    assert "instagram 7" in leases and " held" in leases, out
    assert "status_tag" in tags, out
    assert "status_topic" in topics, out


@pytest.fixture(scope="module")
def server_18() -> Iterator[Server]:
    """A PostgreSQL 18 cluster of its own with the presets' next_id() (TestUuidOn18's)."""
    if "18" not in SERVERS:
        pytest.skip("no PostgreSQL 18 given (SHARDID_PG_BINDIRS)")
    with _started(SERVERS["18"], False) as s:
        yield s


class TestUuidOn18:
    """A class, so that ``pytest -n 2 --dist loadscope`` (versions.sh) runs it on one worker
    beside the versions' contract on the other."""

    def test_uuid_extract_timestamp_reads_the_ids_time(self, server_18: Server) -> None:
        """Issue 62's done-when: a million IDs of each preset, spread over its whole time range
        (its first and last unit included) with every shard and sequence bit set somewhere, made
        in SQL; PostgreSQL 18's uuid_extract_timestamp of each one's UUID (S.shardid_to_uuid) is
        its decoded time, exactly, and uuid_extract_version is 7. The presets run side by side,
        a connection each (the server's work is the test's time).

        The decoded time is the layout's arithmetic in SQL (its epoch plus the time field times
        its unit; the DDL's shardid_timestamp, two more function calls per row, would triple the
        test's time), checked against the library's decode on a sample; test_decode_vectors
        checks the DDL's decoding on every version."""
        with ThreadPoolExecutor(len(PRESETS)) as pool:
            results = dict(zip(PRESETS, pool.map(lambda name: _uuid_check(server_18, name), PRESETS)))
        for name, (bad, count, sample) in results.items():
            layout = getattr(shardid.Layout, name.upper())
            assert (bad, count) == (0, 1_000_000), name
            assert len(sample) == 1000
            for id_, ms in sample:
                assert ms == layout.decode(id_).timestamp_ms, (name, id_)


def _uuid_check(server: Server, name: str) -> tuple[int, int, list[tuple[int, int]]]:
    """For TestUuidOn18: the rows where PostgreSQL's reading of the UUID is not the ID's time,
    the rows checked, and a sample of (ID, decoded Unix ms)."""
    layout = getattr(shardid.Layout, name.upper())
    low = layout.shard_bits + layout.sequence_bits
    # The time units whose IDs fit a bigint (Discord's preset is unsigned: its top bit is the
    # time's).
    units = min(2**layout.time_bits, 2 ** (63 - low))
    spread = f"SELECT (((i * 2305843009213) % {units}) << {low}) | ((i * 40503) % {2**low}) AS id FROM generate_series(0::bigint, {{n}}) i"
    edges = f"SELECT 0 UNION ALL SELECT {((units - 1) << low) | (2**low - 1)}"
    decoded = f"(timestamp '1970-01-01' + ({layout.epoch_ms} + (id >> {low}) * {layout.unit_ms}) * interval '1 millisecond') AT TIME ZONE 'UTC'"
    with psycopg.connect(server.dsn, autocommit=True) as db:
        # OFFSET 0 keeps the planner from copying shardid_to_uuid(id) into each use of u.
        bad, count = db.execute(
            f"SELECT count(*) FILTER (WHERE uuid_extract_timestamp(u) IS DISTINCT FROM ts "
            f"OR uuid_extract_version(u) IS DISTINCT FROM 7), count(*) "
            f"FROM (SELECT {decoded} AS ts, v_{name}.shardid_to_uuid(id) AS u "
            f"FROM ({spread.format(n=999_997)} UNION ALL {edges}) g OFFSET 0) us"
        ).fetchone()  # type: ignore[misc]
        sample = db.execute(
            f"SELECT id, (extract(epoch FROM {decoded}) * 1000)::bigint FROM ({spread.format(n=997)} UNION ALL {edges}) g"
        ).fetchall()
    return bad, count, sample


@per_version
def test_the_uninstall_leaves_no_function(db: psycopg.Connection[Any]) -> None:
    with db.transaction():
        for name in LAYOUTS:
            db.execute(postgres_uninstall(f"v_{name}").encode())
        db.execute(segments_uninstall("seg").encode())
        db.execute(dictionary_uninstall("dict").encode())
        db.execute(public_ids_sql_uninstall("pub").encode())
    schemas = [s for names in SCHEMAS.values() for s in names]
    left = db.execute(
        "SELECT n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = ANY(%s)",
        (schemas,),
    ).fetchall()
    assert left == []
