"""The string <-> ID dictionary against the design it starts from, on one throwaway server.

    python bench/dictionary/bench.py [--seconds 5] [--rounds 3]

Peers: ``ins1``, ``ins2`` and ``get_sn`` exactly as published in the article the dictionary
issue starts from (shared/seeds/001: digoal, "PostgreSQL 全局ID分配(数据字典化)服务 设计实践",
2018), installed beside shardid's ``dict`` schema on the same server, run by the same pgbench
scripts (the article's: 10 groups, md5 of a random number; -M prepared, 4 clients):

1. latencies from one client (psycopg), first, on a server at rest: a batch of 100 lookups
   with a cold cache, a batch of 100 new strings, p50/p99;
2. new strings one per call: transactions/s, and the holes each leaves (IDs allocated but not
   used, as the article measures them: (max + 1) / count - 1);
   (``get_per_gp_id`` creating a group's sequence races under concurrency — two sessions fail
   on pg_class's unique index — so the groups' sequences are created first, from one session);
3. a batch of 100 new strings per call (the article's batch form for ins1:
   ``select ins1(gid, ts) from (values ...)``): strings/s;
4. cached lookups per second in Python (``Dictionary.id``, ``Dictionary.ids`` per string) and
   Node (bench/dictionary/node.mjs); Rust's cache is a criterion bench
   (``cargo bench -p shardid-bench --bench dictionary``).

The server runs with ``fsync = on`` and ``synchronous_commit = on``: a commit waits for its WAL
to reach the disk, as in production (the disk here is whatever this machine has).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from shardid.dictionary import Dictionary
from shardid.sql import dictionary

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

# The article's functions and tables, as published (design 1, 2 and 3).
PEERS = """
create or replace function get_per_gp_id(text, int) returns int8 as $$
declare
begin
  return nextval(($1||$2)::regclass);
  exception when others then
    execute 'create sequence if not exists '||$1||$2||' start with 0 minvalue 0' ;
    return nextval(($1||$2)::regclass);
end;
$$ language plpgsql strict;

create table tbl1(gid int, ts text, sn int8, unique(gid,ts), unique(gid,sn));

create or replace function ins1(int, text) returns int8 as $$
declare
  res int8;
begin
  select sn into res from tbl1 where gid=$1 and ts=$2;
  if found then
    return res;
  else
    insert into tbl1 (gid,ts,sn) values ($1, $2, get_per_gp_id('seq_', $1)) returning sn into res;
    return res;
  end if;
  exception when others then
    select sn into res from tbl1 where gid=$1 and ts=$2;
    if found then
      return res;
    else
      raise ;
    end if;
end;
$$ language plpgsql strict;

create sequence seq_tbl2_sn start with 0 minvalue 0;
create table tbl2(ts text unique, sn int8 default nextval('public.seq_tbl2_sn'::regclass) unique);

create or replace function ins2(text) returns int8 as $$
declare
  res int8;
begin
  select sn into res from tbl2 where ts=$1;
  if found then
    return res;
  else
    insert into tbl2 (ts) values ($1) returning sn into res;
    return res;
  end if;
  exception when others then
    select sn into res from tbl2 where ts=$1;
    if found then
      return res;
    else
      raise ;
    end if;
end;
$$ language plpgsql strict;

create sequence seq_tbl_dict minvalue -2147483648 start with -2147483648;
create table tbl_dict(gid int2, ts text, sn int4 default nextval('public.seq_tbl_dict'::regclass), unique (gid,ts), unique (sn));

create or replace function get_sn(int2, text) returns int as $$
declare
  res int;
begin
  select sn into res from tbl_dict where gid=$1 and ts=$2;
  if found then
    return res;
  end if;
  insert into tbl_dict values($1,$2,nextval('public.seq_tbl_dict'::regclass)) on conflict (gid,ts) do nothing returning sn into res;
  if found then
    return res;
  else
    select sn into res from tbl_dict where gid=$1 and ts=$2;
    return res;
  end if;
end;
$$ language plpgsql strict;
"""

HEAD = "\\set gid random(1,10)\n\\set ts random(1,{range})\n"
SINGLE = {
    "ins1 (article, design 1)": "select ins1(:gid, md5(:ts::text));",
    "ins2 (article, design 2)": "select ins2(md5(:ts::text));",
    "get_sn (article, design 3)": "select get_sn(:gid::int2, md5(:ts::text));",
    "shardid dict.dict_id": "select dict.dict_id('g' || :gid, md5(:ts::text));",
}
BATCH = {
    "ins1 x 100 (article's batch form)": "select ins1(:gid, md5((:ts + i)::text)) from generate_series(1, 100) i;",
    "shardid dict.dict_ids(100)": "select dict.dict_ids('g' || :gid, array(select md5((:ts + i)::text) from generate_series(1, 100) i));",
}


def pgbench(cluster: Cluster, script: str, seconds: int) -> tuple[float, float]:
    """Transactions/s and mean latency (ms) of ``script`` under 4 clients."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    done = cluster.pgbench("-n", "-M", "prepared", "-c", "4", "-j", "2", "-T", str(seconds), "-f", f.name, "postgres")
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    tps = float(re.search(r"tps = ([0-9.]+)", done.stdout).group(1))  # type: ignore[union-attr]
    latency = float(re.search(r"latency average = ([0-9.]+) ms", done.stdout).group(1))  # type: ignore[union-attr]
    return tps, latency


def holes(db: psycopg.Connection) -> dict[str, float]:
    """Per cent of IDs allocated but unused, as the article measures it (max + 1) / count - 1,
    summed over groups."""

    def ratio(rows: list[tuple[int, int, int]]) -> float:
        count = sum(r[0] for r in rows)
        span = sum(r[2] - r[1] + 1 for r in rows)
        return (span / count - 1) * 100 if count else 0.0

    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    return {
        "ins1 (article, design 1)": ratio(q("select count(*), 0, max(sn) from tbl1 group by gid")),
        "ins2 (article, design 2)": ratio(q("select count(*), 0, max(sn) from tbl2")),
        "get_sn (article, design 3)": ratio(q("select count(*), -2147483648, max(sn) from tbl_dict")),
        "shardid dict.dict_id": ratio(q("select count(*), 0, max(id) from dict.shardid_strings group by topic_id")),
    }


def report(rows: dict[str, list[float]], ours: str, unit: str) -> None:
    """Each row's median, and shardid's ratio to it taken per round (median and range)."""
    for name, rates in rows.items():
        ratio = [o / t for o, t in zip(rows[ours], rates)]
        print(
            f"  {name:34} {statistics.median(rates):9,.0f} {unit}   shardid / this = "
            f"{statistics.median(ratio):.2f} (range {min(ratio):.2f}-{max(ratio):.2f})"
        )


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with Cluster(fsync="on", synchronous_commit="on") as cluster:
        db = psycopg.connect(cluster.dsn, autocommit=True)
        with db.transaction():
            db.execute(dictionary("dict").encode())
        db.execute(PEERS)
        for g in range(1, 11):
            db.execute("select dict.create_topic(%s)", (f"g{g}",))
            # get_per_gp_id creates a group's sequence on first use, and two sessions doing so at
            # once fail (pg_class's unique index): create them first, from one session.
            db.execute("select get_per_gp_id('seq_', %s)", (g,))
        db.execute("select dict.create_topic('latency')")

        print("1. Latency from one client (psycopg), 500 calls each, on a server at rest:")
        cold = Dictionary(cluster.dsn, "latency", cache_size=0)
        new, lookups = [], []
        for k in range(500):
            values = [f"latency-{k}-{i}" for i in range(100)]
            t0 = time.perf_counter()
            cold.ids(values)
            new.append((time.perf_counter() - t0) * 1000)
        for k in range(500):
            values = [f"latency-{(k * 7) % 500}-{i}" for i in range(100)]
            t0 = time.perf_counter()
            cold.lookup(values)
            lookups.append((time.perf_counter() - t0) * 1000)
        print(f"  batch of 100 new strings:            p50 {percentile(new, 0.5):.2f} ms, p99 {percentile(new, 0.99):.2f} ms (target p99 <= 10 ms)")
        print(f"  batch of 100 lookups, cold cache:     p50 {percentile(lookups, 0.5):.2f} ms, p99 {percentile(lookups, 0.99):.2f} ms (target p99 <= 1 ms)")

        db.execute("CHECKPOINT")

        print(f"\n2. New strings, one per call: pgbench -M prepared -c 4, {args.seconds} s x {args.rounds} rounds, md5 of random(1, 10^8)")
        single: dict[str, list[float]] = {}
        # Contended: a small range, so that clients often insert the same new string at once.
        contended: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for name, body in SINGLE.items():
                single.setdefault(name, []).append(pgbench(cluster, HEAD.format(range=100_000_000) + body, args.seconds)[0])
            for name, body in SINGLE.items():
                contended.setdefault(name, []).append(pgbench(cluster, HEAD.format(range=20_000) + body, args.seconds)[0])
        report(single, "shardid dict.dict_id", "tps")
        print("  contended (random(1, 20000): the same new strings at once, then mostly reads):")
        report(contended, "shardid dict.dict_id", "tps")
        print("  holes after all of the above (IDs allocated, never used), per cent:")
        for name, pct in holes(db).items():
            print(f"  {name:34} {pct:9.4f} %")

        print(f"\n3. Batches of 100 new strings: pgbench -M prepared -c 4, {args.seconds} s x {args.rounds} rounds")
        batch: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for name, body in BATCH.items():
                batch.setdefault(name, []).append(pgbench(cluster, HEAD.format(range=100_000_000) + body, args.seconds)[0] * 100)
        report(batch, "shardid dict.dict_ids(100)", "strings/s")
        print(f"  holes after the batches: {holes(db)['shardid dict.dict_id']:.4f} % (shardid), {holes(db)['ins1 (article, design 1)']:.4f} % (ins1)")

        print("\n4. Cached lookups (no database):")
        warm = Dictionary(cluster.dsn, "latency")
        values = [f"latency-{k}-{i}" for k in range(100) for i in range(100)]
        for start in range(0, len(values), 1000):
            warm.ids(values[start : start + 1000])
        rates = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for v in values * 20:
                warm.id(v)
            rates.append(len(values) * 20 / (time.perf_counter() - t0))
        batch_rates = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for start in range(0, len(values), 100):
                warm.ids(values[start : start + 100])
            batch_rates.append(len(values) / (time.perf_counter() - t0))
        print(f"  Python Dictionary.id(value):          {statistics.median(rates):12,.0f} lookups/s (range {min(rates):,.0f}-{max(rates):,.0f}; target >= 1,000,000)")
        print(f"  Python Dictionary.ids(100), per item: {statistics.median(batch_rates):12,.0f} lookups/s")
        url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
        node = subprocess.run(["node", str(Path(__file__).with_name("node.mjs")), url], capture_output=True, text=True)
        print(node.stdout.rstrip() if node.returncode == 0 else f"  Node: failed\n{node.stderr}")
        db.close()


if __name__ == "__main__":
    main()
