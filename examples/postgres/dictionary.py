"""The string <-> ID dictionary: one throwaway server (started here, removed at the end), one
topic, and the Python, Node and Rust clients asking for the IDs of overlapping strings — each
string gets one ID, the same in every language, numbered densely from 0.

Run by scripts/demo.sh, which passes the Rust example's path (core/examples/dictionary.rs)."""

import subprocess
import sys
from pathlib import Path

import psycopg

from shardid.dictionary import Dictionary
from shardid.sql import dictionary

root = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as db:
    with db.transaction():
        db.execute(dictionary("dict").encode())
    print("dict.dict_ids('demo', ...) on a throwaway server:")
    words = Dictionary(cluster.dsn, "demo")
    words.create()
    for value, id in zip(batch := ["https://example.com/", "/pricing", "/docs"], words.ids(batch)):
        print(f"  python: {value:<22} -> {id}")

    node = """
const { Dictionary } = require(process.argv[1] + '/bindings-node/dictionary.js')
;(async () => {
  const words = new Dictionary({ connectionString: process.argv[2], topic: 'demo' })
  const values = ['/docs', '/blog', 'https://example.com/']
  const ids = await words.ids(values)
  values.forEach((v, i) => console.log(`  node:   ${v.padEnd(22)} -> ${ids[i]}`))
  await words.close()
})()
"""
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    print(subprocess.run(["node", "-e", node, str(root), url], capture_output=True, text=True, check=True).stdout, end="")

    if len(sys.argv) > 1:
        dsn = f"host=127.0.0.1 port={cluster.port} user=postgres dbname=postgres"
        rust = subprocess.run([sys.argv[1], dsn, "demo", "/blog", "/careers", "/pricing"], capture_output=True, text=True, check=True)
        print(rust.stdout, end="")
    print(f"  and back: {words.values(range(6))}")
    count, highest = db.execute("SELECT count(*), max(id) FROM dict.shardid_strings").fetchone()
    print(f"  {count} strings, IDs 0..{highest}: no hole, every string once")
