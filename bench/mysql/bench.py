"""The MySQL family's figures, in one run on one throwaway MariaDB (tests/mysql/server.py):

- **A segment take**, as the clients send it (one ``UPDATE ... LAST_INSERT_ID(next) ...`` in
  autocommit, the first ID read from the reply), against **Leaf's** MySQL transaction
  (``UPDATE leaf_alloc SET max_id = max_id + step``, then ``SELECT``, then ``COMMIT``), from 8
  client processes on one tag: takes per second.
- **The dictionary**: a batch of 100 new strings from one client (``Dictionary.ids``, cache
  off), latency percentiles; cached lookups.
- **``next_id()`` in the database**, as a column's default through its ``BEFORE INSERT``
  trigger, against a plain ``AUTO_INCREMENT`` column and a column whose default is a MariaDB
  sequence (``DEFAULT NEXTVAL(s)``): rows per second of ``INSERT ... SELECT`` of 1,000 rows,
  from 1 and 8 clients; and the function alone (``SELECT next_id() FROM seq_1_to_1000``)
  against ``NEXTVAL`` alone.

    python bench/mysql/bench.py [--seconds 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pymysql

from shardid import Layout
from shardid.dictionary import Dictionary
from shardid.sql import dictionary, mysql, mysql_statements, segments

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "mysql"))
from server import Server  # noqa: E402

TAKE = "UPDATE seg.shardid_tags SET step = %s, next = CAST(LAST_INSERT_ID(next) AS SIGNED) + stride * %s WHERE tag = %s"


def connect(port: int, **kw: Any) -> Any:
    kw.setdefault("autocommit", True)
    return pymysql.connect(host="127.0.0.1", port=port, user="root", **kw)


def install(conn: Any, script: str) -> None:
    with conn.cursor() as cur:
        for statement in mysql_statements(script):
            cur.execute(statement)


def timed(port: int, seconds: float, out: Any, once: Any, **kw: Any) -> None:
    """Calls ``once(conn, cursor)`` on a connection of its own for ``seconds``, and puts the sum
    of what the calls returned (takes, rows) on ``out``."""
    conn = connect(port, **kw)
    cur = conn.cursor()
    n, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        n += once(conn, cur)
    out.put(n)


def shardid_takes(port: int, seconds: float, out: Any) -> None:
    def once(conn: Any, cur: Any) -> int:
        rows = cur.execute(TAKE, (1000, 1000, "bench"))
        assert rows == 1 and cur.lastrowid >= 1
        return 1

    timed(port, seconds, out, once)


def leaf_takes(port: int, seconds: float, out: Any) -> None:
    # Leaf's LeafAllocMapper: updateMaxId, then getLeafAlloc, in one transaction.
    def once(conn: Any, cur: Any) -> int:
        cur.execute("UPDATE seg.leaf_alloc SET max_id = max_id + step WHERE biz_tag = %s", ("bench",))
        cur.execute("SELECT biz_tag, max_id, step FROM seg.leaf_alloc WHERE biz_tag = %s", ("bench",))
        assert cur.fetchone() is not None
        conn.commit()
        return 1

    timed(port, seconds, out, once, autocommit=False)


def inserts(port: int, seconds: float, table: str, out: Any) -> None:
    timed(port, seconds, out, lambda conn, cur: cur.execute(f"INSERT INTO ids.{table} (note) SELECT 'x' FROM ids.seq_1_to_1000"))


def selects(port: int, seconds: float, expression: str, out: Any) -> None:
    def once(conn: Any, cur: Any) -> int:
        cur.execute(f"SELECT {expression} FROM ids.seq_1_to_1000")
        return len(cur.fetchall())

    timed(port, seconds, out, once)


def child(target: Any, args: tuple[Any, ...], out: Any) -> None:
    try:
        target(*args, out)
    except BaseException as e:  # noqa: BLE001 - reported by the parent
        out.put(e)


def parallel(target: Any, clients: int, seconds: float, *args: Any) -> float:
    """Per second, summed over ``clients`` processes running ``target`` for ``seconds``."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    work = (*args[:1], seconds, *args[1:])
    procs = [ctx.Process(target=child, args=(target, work, out)) for _ in range(clients)]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return sum(results) / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    s, rounds = args.seconds, args.rounds
    with Server() as server:
        port = server.port
        conn = connect(port)
        install(conn, segments("seg", dialect="mysql"))
        install(conn, dictionary("dict", dialect="mysql"))
        install(conn, mysql(Layout.INSTAGRAM, 5, "ids"))
        with conn.cursor() as cur:
            cur.execute("SELECT seg.create_tag('bench')")
            cur.execute(
                "CREATE TABLE seg.leaf_alloc (biz_tag VARCHAR(128) NOT NULL PRIMARY KEY, max_id BIGINT NOT NULL,"
                " step INT NOT NULL, description VARCHAR(256), update_time TIMESTAMP NOT NULL"
                " DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP) ENGINE = InnoDB"
            )
            cur.execute("INSERT INTO seg.leaf_alloc (biz_tag, max_id, step) VALUES ('bench', 1, 1000)")
            cur.execute("USE ids")
            cur.execute("CREATE TABLE by_next_id (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, note CHAR(1))")
            cur.execute(
                "CREATE TRIGGER by_next_id_id BEFORE INSERT ON by_next_id FOR EACH ROW"
                " SET NEW.id = IF(NEW.id IS NULL OR NEW.id = 0, ids.next_id(), NEW.id)"
            )
            cur.execute("CREATE TABLE by_auto_increment (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, note CHAR(1))")
            cur.execute("CREATE SEQUENCE s CACHE 1000")
            cur.execute("CREATE TABLE by_sequence (id BIGINT NOT NULL DEFAULT NEXTVAL(ids.s) PRIMARY KEY, note CHAR(1))")
            cur.execute("CREATE SEQUENCE s2 CACHE 1000")

        print(f"MariaDB {conn.get_server_info()}, {s:g} s per measurement, {rounds} rounds; medians\n")
        takes: dict[str, list[float]] = {"shardid": [], "leaf": []}
        for r in range(rounds):
            order = [("shardid", shardid_takes), ("leaf", leaf_takes)]
            for name, fn in order if r % 2 == 0 else order[::-1]:
                takes[name].append(parallel(fn, 8, s, port))
        ratios = [a / b for a, b in zip(takes["shardid"], takes["leaf"])]
        print("segment takes per second, 8 client processes, one tag:")
        print(f"  shardid, one UPDATE:                 {statistics.median(takes['shardid']):>10,.0f}")
        print(f"  Leaf, UPDATE + SELECT + COMMIT:      {statistics.median(takes['leaf']):>10,.0f}")
        print(f"  ratio per round:                     {', '.join(f'{x:.2f}' for x in ratios)}\n")

        words = Dictionary(server.url_for("dict"), "bench", schema="dict", cache_size=0)
        words.create()
        latencies = []
        for call in range(500):
            batch = [f"s{call}-{i}" for i in range(100)]
            started = time.perf_counter()
            got = words.ids(batch)
            latencies.append((time.perf_counter() - started) * 1000)
            assert len(got) == 100
        latencies.sort()
        print("dictionary, one client (PyMySQL), batch of 100 new strings, 500 calls:")
        print(f"  p50 {latencies[249]:.2f} ms, p99 {latencies[494]:.2f} ms, max {latencies[-1]:.2f} ms")
        lookups = []
        for call in range(500):
            batch = [f"s{call}-{i}" for i in range(100)]
            started = time.perf_counter()
            words.lookup(batch)
            lookups.append((time.perf_counter() - started) * 1000)
        lookups.sort()
        print(f"  batch of 100 lookups, cache off: p50 {lookups[249]:.2f} ms, p99 {lookups[494]:.2f} ms")
        cached = Dictionary(server.url_for("dict"), "bench", schema="dict")
        cached.ids([f"s0-{i}" for i in range(100)])
        n = 1_000_000
        started = time.perf_counter()
        for i in range(n):
            cached.id("s0-7")
        print(f"  cached Dictionary.id(): {n / (time.perf_counter() - started) / 1e6:.2f} M lookups/s\n")

        print("IDs made in the database, rows per second (INSERT ... SELECT of 1,000 rows):")
        for clients in (1, 8):
            rates: dict[str, list[float]] = {"next_id() trigger": [], "AUTO_INCREMENT": [], "DEFAULT NEXTVAL(s)": []}
            tables = {"next_id() trigger": "by_next_id", "AUTO_INCREMENT": "by_auto_increment", "DEFAULT NEXTVAL(s)": "by_sequence"}
            for r in range(rounds):
                names = list(tables) if r % 2 == 0 else list(tables)[::-1]
                for name in names:
                    rates[name].append(parallel(inserts, clients, s, port, tables[name]))
            base = rates["next_id() trigger"]
            print(f"  {clients} client(s):")
            for name, values in rates.items():
                ratio = ", ".join(f"{a / b:.2f}" for a, b in zip(base, values))
                print(f"    {name:<20} {statistics.median(values):>12,.0f}   next_id() / this per round: {ratio}")
        print("the function alone, values per second (SELECT f() FROM seq_1_to_1000), 1 client:")
        alone = {"ids.next_id()": [], "NEXTVAL(ids.s2)": []}
        for r in range(rounds):
            for name in alone if r % 2 == 0 else list(alone)[::-1]:
                alone[name].append(parallel(selects, 1, s, port, name))
        for name, values in alone.items():
            print(f"  {name:<20} {statistics.median(values):>12,.0f}")
        with conn.cursor() as cur:
            cur.execute("SELECT count(*), count(DISTINCT id) FROM ids.by_next_id")
            total, distinct = cur.fetchone()
        assert total == distinct, "next_id() made an ID twice"
        print(f"\n(next_id(): {total:,} rows inserted, every ID distinct)")


if __name__ == "__main__":
    main()
