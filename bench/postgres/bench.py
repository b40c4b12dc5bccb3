"""IDs per second made inside PostgreSQL, side by side on one throwaway server:

- shardid's emitted ``insta5.next_id()`` (Instagram's layout, shard 5);
- Instagram's published PL/pgSQL ``next_id()`` (``nextval() % 1024``), verbatim;
- the same formula as an inlinable ``LANGUAGE sql`` function (fast, and it repeats IDs);
- a PL/pgSQL function whose body only returns ``nextval()``: the floor of any PL/pgSQL
  function, which pays the language's per-call cost and nothing else;
- plain ``nextval()`` on a sequence, the floor of every function here.

Three measures: one statement making N IDs (``SELECT count(f()) FROM generate_series(1, N)``);
one ID per transaction, timed inside the server (a procedure that calls ``f()`` and commits,
20,000 times: the cost a column default adds to a one-row INSERT, without the network); and
pgbench with 4 clients each running ``SELECT f();`` per transaction. Rounds alternate the
functions (forwards, then backwards); the table shows the median and each function's ratio to Instagram's, and for pgbench
also the median of the per-round ratios (each run against Instagram's run of the same round,
which cancels most of a shared machine's drift). Duplicates are counted in one statement of
100,000 IDs.

    scripts/bench-postgres.sh [--rounds 6] [--ids 200000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

import psycopg

import shardid
from shardid.sql import postgres

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

INSTAGRAM = """
CREATE SCHEMA ig;
CREATE SEQUENCE ig.table_id_seq;
-- Instagram's function as published (2012), for shard 5.
CREATE OR REPLACE FUNCTION ig.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('ig.table_id_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
-- The same formula, inlinable.
CREATE FUNCTION ig.next_id_sql() RETURNS bigint LANGUAGE sql AS $$
    SELECT ((FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint - 1314220021721) << 23)
        | (5 << 10) | (nextval('ig.table_id_seq') % 1024)
$$;
CREATE SEQUENCE plain_seq;
-- The floor of any PL/pgSQL function: the language's per-call cost around one nextval().
CREATE FUNCTION plpgsql_nextval() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RETURN nextval('plain_seq');
END
$$;
-- One ID per transaction, timed inside the server.
CREATE PROCEDURE bench_per_transaction(call text, n int, INOUT us double precision) LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
    id bigint;
BEGIN
    FOR i IN 1..n LOOP
        EXECUTE 'SELECT ' || call INTO id;
        COMMIT;
    END LOOP;
    us := extract(epoch FROM clock_timestamp() - started) * 1e6 / n;
END
$$;
"""

FUNCTIONS = {
    "shardid insta5.next_id()": "insta5.next_id()",
    "Instagram's next_id() (PL/pgSQL, as published)": "ig.next_id()",
    "Instagram's formula as LANGUAGE sql": "ig.next_id_sql()",
    "PL/pgSQL returning nextval()": "plpgsql_nextval()",
    "plain nextval()": "nextval('plain_seq')",
}
BASELINE = "Instagram's next_id() (PL/pgSQL, as published)"


def orders(rounds: int) -> list[list[tuple[str, str]]]:
    """The functions in order, then in reverse, round after round: no function always runs
    first (after a pause) or last."""
    forward = list(FUNCTIONS.items())
    return [forward if i % 2 == 0 else forward[::-1] for i in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--ids", type=int, default=200_000)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(postgres(shardid.Layout.INSTAGRAM, 5, "insta5").encode())  # type: ignore[call-overload]
        conn.execute(INSTAGRAM.encode())  # type: ignore[call-overload]
        version = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
        one: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        per_tx: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        bench: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
        duplicates = {
            name: conn.execute(f"SELECT count(*) - count(DISTINCT x) FROM (SELECT {call} AS x FROM generate_series(1, 100000)) s").fetchone()[0]  # type: ignore[index]
            for name, call in FUNCTIONS.items()
        }
        for order in orders(args.rounds):
            for name, call in order:
                start = time.perf_counter()
                conn.execute(f"SELECT count({call}) FROM generate_series(1, {args.ids})")
                one[name].append(args.ids / (time.perf_counter() - start))
                us = conn.execute("CALL bench_per_transaction(%s, 20000, NULL)", (call,)).fetchone()[0]  # type: ignore[index]
                per_tx[name].append(us)
        for order in orders(args.rounds):
            for name, call in order:
                script = cluster.root / "select.sql"
                script.write_text(f"SELECT {call};\n")
                run = cluster.pgbench("-n", "-M", "prepared", "-c", "4", "-j", "2", "-T", str(args.seconds), "-f", str(script), "postgres")
                found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", run.stdout)
                if run.returncode != 0 or found is None:
                    raise SystemExit(f"pgbench failed for {name}:\n{run.stdout}{run.stderr}")
                bench[name].append(float(found.group(1)))
    base_one, base_bench = statistics.median(one[BASELINE]), statistics.median(bench[BASELINE])
    base_tx = statistics.median(per_tx[BASELINE])
    print(f"PostgreSQL {version}; {args.rounds} rounds: {args.ids:,} IDs in one statement; 20,000 one-ID transactions in a procedure; pgbench -c 4 -j 2 -T {args.seconds} -M prepared, SELECT f() per transaction\n")
    print("| function | one statement, IDs/s | vs Instagram's | one ID per transaction, us | vs Instagram's | pgbench, IDs/s | vs Instagram's | per round (median, range) | duplicates in 100,000 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in FUNCTIONS:
        o, t, b = statistics.median(one[name]), statistics.median(per_tx[name]), statistics.median(bench[name])
        paired = sorted(x / y for x, y in zip(bench[name], bench[BASELINE]))
        rounds = f"{statistics.median(paired):.2f}x ({paired[0]:.2f}-{paired[-1]:.2f})"
        print(f"| {name} | {o:,.0f} | {o / base_one:.2f}x | {t:.2f} | {base_tx / t:.2f}x | {b:,.0f} | {b / base_bench:.2f}x | {rounds} | {duplicates[name]:,} |")


if __name__ == "__main__":
    main()
