"""Dense IDs from segments: one throwaway server (started here, removed at the end), one tag,
and the Python, Node and Rust clients taking segments of it in turn — every number once.

Run by scripts/demo.sh, which passes the Rust example's path (core/examples/segments.rs)."""

import json
import subprocess
import sys
from pathlib import Path

import psycopg

from shardid.segments import DenseIds
from shardid.sql import segments

root = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as db:
    with db.transaction():
        db.execute(segments("seg").encode())
    db.execute("SELECT seg.create_tag('orders')")
    # A demo's segments: 5 numbers each (the row remembers the size last asked for).
    db.execute("SELECT seg.take_segment('orders', 5)")
    db.execute("SELECT seg.give_back('orders', 1, 6)")
    print("seg.take_segment('orders', ...) on a throwaway server; each client gives its rest back:")

    with DenseIds(cluster.dsn, "orders", min_size=5, max_size=5) as orders:
        print(f"  Python  {[orders.next_id() for _ in range(7)]}")

    node = """
const { denseIds } = require(process.argv[1] + '/bindings-node/segments.js')
;(async () => {
  const orders = await denseIds({ connectionString: process.argv[2], tag: 'orders', minSize: 5, maxSize: 5 })
  const ids = [...await orders.nextIdsAsync(7)].map(Number)
  await orders.close()
  console.log(JSON.stringify(ids))
})()
"""
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    out = subprocess.run(["node", "-e", node, str(root), url], capture_output=True, text=True, check=True)
    print(f"  Node    {json.loads(out.stdout)}")

    if len(sys.argv) > 1:
        dsn = f"host=127.0.0.1 port={cluster.port} user=postgres dbname=postgres"
        out = subprocess.run([sys.argv[1], dsn, "demo"], capture_output=True, text=True, check=True)
        print(f"  Rust    {json.loads(out.stdout)}")
    (next_number,) = db.execute("SELECT next FROM seg.shardid_tags WHERE tag = 'orders'").fetchone()
    print(f"  the tag's next number: {next_number} (no hole: every client gave its unused rest back)")
