"""PostgreSQL makes IDs of the same layout as the application, and both sides decode both:
installs the emitted DDL on a throwaway server (started here, removed at the end)."""

import sys
from pathlib import Path

import psycopg

from shardid import Generator, Layout
from shardid.sql import postgres

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as db:
    db.execute(postgres(Layout.INSTAGRAM, 5, "insta5").encode())
    version = db.execute("SHOW server_version").fetchone()[0]
    print(f"PostgreSQL {version}: insta5.next_id() (Instagram layout, database shard 5):")
    for (new_id,) in db.execute("SELECT insta5.next_id() FROM generate_series(1, 3)"):
        parts = Layout.INSTAGRAM.decode(new_id)  # decoded by the library
        print(f"  {new_id}  ->  {parts.datetime.isoformat(timespec='milliseconds')}"
              f"  shard {parts.shard}  sequence {parts.sequence}")
    app_id = Generator(Layout.INSTAGRAM, 1).next_id()
    ts, shard, seq = db.execute(
        "SELECT insta5.shardid_timestamp(%s), insta5.shardid_shard(%s), insta5.shardid_sequence(%s)",
        (app_id, app_id, app_id),
    ).fetchone()
    print(f"  the application's {app_id} (shard 1), decoded in SQL  ->  {ts.isoformat(timespec='milliseconds')}"
          f"  shard {shard}  sequence {seq}")
