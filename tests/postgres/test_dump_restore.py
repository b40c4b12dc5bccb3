"""A ``pg_dump`` taken under load and restored into a fresh cluster (another ``initdb``, so
another system identifier; timeline 1 on both): nothing the old cluster handed out after the
dump is handed out again by the new one (issue 42). Dense IDs and serials (segments, and the
database's own ``next_dense_id``/``next_serial``) and dictionary IDs are taken through the core's
SQL, as every client does, from threads on both clusters; the old cluster goes on after the dump
as a primary does while its dump is copied elsewhere.

On the version before issue 42 this repeats every number handed out after the dump, and names
dictionary IDs with a second string. About 10 s.
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

import psycopg
import pytest
from cluster import Cluster, bindir

from shardid.segments import create_serial
from shardid.sql import dictionary, segments

FMT = "INV-{yyyy}{MM}{dd}-{seq:6}"
LOAD_S = 1.0


class Load:
    """Threads taking dense IDs, serials and dictionary IDs from one database until stopped."""

    def __init__(self, dsn: str, prefix: str) -> None:
        self.dsn = dsn
        self.prefix = prefix
        self.stop = threading.Event()
        self.dense: list[tuple[int, int, int]] = []  # (first, count, stride)
        self.serials: list[str] = []
        self.strings: list[tuple[str, int]] = []
        self.errors: list[str] = []
        self.threads = [
            threading.Thread(target=self._guard, args=(f,))
            for f in (self._segments, self._segments, self._own, self._serials, self._dict)
        ]

    def _guard(self, f: Any) -> None:
        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                f(conn)
        except Exception as e:  # the test fails on any
            self.errors.append(repr(e))

    def _segments(self, conn: Any) -> None:
        while not self.stop.is_set():
            self.dense.append(conn.execute("SELECT * FROM dr_seg.take_segment('d', 50)").fetchone())

    def _own(self, conn: Any) -> None:
        while not self.stop.is_set():
            (n,) = conn.execute("SELECT dr_seg.next_dense_id('d')").fetchone()
            self.dense.append((n, 1, 1))

    def _serials(self, conn: Any) -> None:
        day = conn.execute("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD')").fetchone()[0]
        i = 0
        while not self.stop.is_set():
            if i % 2:
                self.serials.append(conn.execute("SELECT dr_seg.next_serial('inv', %s, 'UTC')", (FMT,)).fetchone()[0])
            else:
                first, count, stride = conn.execute("SELECT * FROM dr_seg.take_serial_segment('inv', %s, 5)", (day,)).fetchone()
                for n in range(first, first + count * stride, stride):
                    self.serials.append(f"INV-{day.replace('-', '')}-{n:06d}")
            i += 1

    def _dict(self, conn: Any) -> None:
        i = 0
        while not self.stop.is_set():
            batch = [f"{self.prefix}/{i + k}" for k in range(20)]
            ids = conn.execute("SELECT dr_dict.dict_ids('u', %s)", (batch,)).fetchone()[0]
            self.strings.extend(zip(batch, ids))
            i += 20

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)
        assert not self.errors, self.errors


def _run(*args: str) -> None:
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (args, out.stderr)


def test_a_dump_restored_into_a_fresh_cluster_hands_nothing_out_twice(cluster: Any, tmp_path: Any) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute("CREATE DATABASE dumped")
    old_dsn = cluster.dsn.replace("dbname=postgres", "dbname=dumped")
    with psycopg.connect(old_dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(segments("dr_seg").encode())
            conn.execute(dictionary("dr_dict").encode())
        conn.execute("SELECT dr_seg.create_tag('d'), dr_dict.create_topic('u')")
        create_serial(conn, "inv", FMT, zone="UTC", schema="dr_seg")
    dump = tmp_path / "dumped.pgdump"
    with Load(old_dsn, "url") as old:
        time.sleep(LOAD_S)
        # Under load: the dump is a snapshot of its start; the old cluster goes on.
        _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", old_dsn)
        with psycopg.connect(old_dsn, autocommit=True) as conn:
            dumped_at = conn.execute("SELECT clock_timestamp()").fetchone()[0]
        time.sleep(LOAD_S)
    with Cluster() as fresh:
        with psycopg.connect(fresh.dsn, autocommit=True) as admin:
            admin.execute("CREATE DATABASE dumped")
        new_dsn = fresh.dsn.replace("dbname=postgres", "dbname=dumped")
        _run(str(bindir() / "pg_restore"), "-d", new_dsn, str(dump))
        with psycopg.connect(new_dsn, autocommit=True) as conn:
            restored_next = conn.execute("SELECT next FROM dr_seg.shardid_tags WHERE tag = 'd'").fetchone()[0]
            restored_ids = conn.execute("SELECT next FROM dr_dict.shardid_topics").fetchone()[0]
        # Other strings than the old cluster numbered after the dump: an ID given again names
        # another string.
        with Load(new_dsn, "other") as new:
            time.sleep(LOAD_S)

    handed = [n for first, count, stride in old.dense + new.dense for n in range(first, first + count * stride, stride)]
    old_max = max(first + (count - 1) * stride for first, count, stride in old.dense)
    new_min = min(first for first, _, _ in new.dense)
    serials = old.serials + new.serials
    names: dict[int, set[str]] = {}
    for value, id_ in old.strings + new.strings:
        names.setdefault(id_, set()).add(value)
    old_max_id = max(i for _, i in old.strings)
    new_min_id = min(i for v, i in new.strings if v.startswith("other/"))
    print(
        f"\ndump at {dumped_at}: dense: restored next {restored_next:,}, the old cluster reached {old_max:,}"
        f" ({old_max - restored_next + 1:,} lost), the new one started at {new_min:,}"
        f" (skipped {new_min - restored_next:,});"
        f" dictionary: restored next {restored_ids:,}, old reached {old_max_id:,} ({old_max_id - restored_ids + 1:,} lost),"
        f" new started at {new_min_id:,} (skipped {new_min_id - restored_ids:,})"
    )
    # The runs did what the test says, so that the counts below mean something.
    assert len(old.dense) > 10 and len(new.dense) > 10 and len(old.strings) > 100 and len(new.strings) > 100
    assert old_max >= restored_next and old_max_id >= restored_ids, "nothing was handed out after the dump"
    assert len(handed) - len(set(handed)) == 0, f"{len(handed) - len(set(handed)):,} dense IDs handed out twice"
    assert len(serials) - len(set(serials)) == 0, f"{len(serials) - len(set(serials)):,} serials handed out twice"
    two = sum(1 for v in names.values() if len(v) > 1)
    assert two == 0, f"{two:,} dictionary IDs name a second string"


@pytest.fixture(autouse=True)
def _pg_dump_present() -> None:
    if not (bindir() / "pg_dump").exists():
        pytest.skip("pg_dump not found")
