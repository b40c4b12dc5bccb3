"""Public IDs inside PostgreSQL (shardid.sql.public_ids_sql, plain PL/pgSQL), on one throwaway
server, against pgcrypto's Blowfish (a C 64-bit block cipher: ``encode(encrypt(int8send(id),
key, 'aes-ecb'), 'hex')``, no prefix, no alphabet, no checks) and a PL/pgSQL function that only
returns its argument as text (the floor of any PL/pgSQL function):

- ``encode``/``decode``: one statement over N IDs (``SELECT count(f(id)) FROM
  generate_series(...)``), microseconds per ID, the keys bound as a parameter (derived once);
- ``derive``: ``shardid_public_material(keys, prefix)`` alone, per call.

Rounds alternate the order; the table shows each median and its ratio to pgcrypto's.

    python bench/postgres/public_ids.py [--rounds 5] [--ids 50000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg

from shardid.sql import public_ids_sql

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

KEYS = "30313233343536373839616263646566"
SETUP = """
CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE FUNCTION floor_plpgsql(id bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN id::text;
END
$$;
"""
FIRST = 4036916263258161152


def per_id(conn: psycopg.Connection, query: str, params: dict, n: int) -> float:
    start = time.perf_counter()
    conn.execute(query, params).fetchone()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ids", type=int, default=50000)
    args = parser.parse_args()
    n = args.ids
    ids = {"first": FIRST, "last": FIRST + n - 1, "keys": KEYS, "key": bytes.fromhex(KEYS)}
    encode = {
        "shardid base32": "SELECT count(pub.shardid_public_encode(id, %(keys)s, 'note')) FROM generate_series(%(first)s::bigint, %(last)s) AS id",
        "shardid base58": "SELECT count(pub.shardid_public_encode(id, %(keys)s, 'note', 'base58')) FROM generate_series(%(first)s::bigint, %(last)s) AS id",
        "pgcrypto aes-ecb": "SELECT count(encode(encrypt(int8send(id), %(key)s, 'aes-ecb'), 'hex')) FROM generate_series(%(first)s::bigint, %(last)s) AS id",
        "plpgsql floor": "SELECT count(floor_plpgsql(id)) FROM generate_series(%(first)s::bigint, %(last)s) AS id",
    }
    decode = {
        "shardid base32": "SELECT count(pub.shardid_public_decode(t, %(keys)s, 'note')) FROM texts_base32",
        "shardid base58": "SELECT count(pub.shardid_public_decode(t, %(keys)s, 'note', 'base58')) FROM texts_base58",
        "pgcrypto aes-ecb": "SELECT count(('x' || encode(decrypt(decode(t, 'hex'), %(key)s, 'aes-ecb'), 'hex'))::bit(64)::bigint) FROM texts_aes",
    }
    with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(public_ids_sql("pub").encode())
            conn.execute(SETUP.encode())
        conn.execute("CREATE UNLOGGED TABLE texts_base32 AS SELECT pub.shardid_public_encode(id, %(keys)s, 'note') AS t FROM generate_series(%(first)s::bigint, %(last)s) AS id", ids)
        conn.execute("CREATE UNLOGGED TABLE texts_base58 AS SELECT pub.shardid_public_encode(id, %(keys)s, 'note', 'base58') AS t FROM generate_series(%(first)s::bigint, %(last)s) AS id", ids)
        conn.execute("CREATE UNLOGGED TABLE texts_aes AS SELECT encode(encrypt(int8send(id), %(key)s, 'aes-ecb'), 'hex') AS t FROM generate_series(%(first)s::bigint, %(last)s) AS id", ids)
        results: dict[str, list[float]] = {}
        for r in range(args.rounds):
            for group, queries in (("encode", encode), ("decode", decode)):
                items = list(queries.items())
                for name, query in items if r % 2 == 0 else reversed(items):
                    results.setdefault(f"{group} {name}", []).append(per_id(conn, query, ids, n))
            start = time.perf_counter()
            for _ in range(20):
                conn.execute("SELECT pub.shardid_public_material(%(keys)s, 'note')", ids).fetchone()
            results.setdefault("derive shardid (per call)", []).append((time.perf_counter() - start) / 20 * 1e6)
        print(f"{n} IDs per statement, {args.rounds} rounds, microseconds per ID (median):")
        for group in ("encode", "decode"):
            base = statistics.median(results[f"{group} pgcrypto aes-ecb"])
            for name in (encode if group == "encode" else decode):
                m = statistics.median(results[f"{group} {name}"])
                print(f"  {group:7} {name:16} {m:8.2f} us  {m / base:5.2f}x pgcrypto")
        print(f"  derive  shardid          {statistics.median(results['derive shardid (per call)']):8.0f} us per call")


if __name__ == "__main__":
    main()
