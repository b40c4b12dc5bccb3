"""Dense IDs, a serial number and the dictionary on one SQLite file, with no server: Python,
Node and Rust taking turns on the same file (its tables made on first use), every number once.

Run by scripts/demo.sh, which passes the Rust example's path (core/examples/sqlite.rs)."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from shardid.dictionary import Dictionary
from shardid.segments import DenseIds, Serials, create_serial, create_tag

root = Path(__file__).resolve().parents[2]
FORMAT = "ORD-{yyyy}{MM}{dd}-{seq:6}"

with tempfile.TemporaryDirectory(prefix="shardid-demo-") as tmp:
    path = Path(tmp) / "app.db"
    url = f"sqlite:///{path}"  # four slashes: an absolute path
    print(f"one file, {path.name}, shared by three languages ({url}):")

    create_tag(url, "orders")  # once (again: nothing)
    create_serial(url, "invoices", FORMAT, zone="Europe/Paris")
    with DenseIds(url, "orders") as orders, Serials(url, "invoices", FORMAT, zone="Europe/Paris") as invoices:
        with Dictionary(url, "countries") as countries:
            countries.create()
            print(
                f"  Python  dense IDs {[orders.next_id() for _ in range(3)]}, serial "
                f"{invoices.next_serial()}, dictionary {countries.ids(['FR', 'DE', 'FR', 'JP'])}"
            )

    node = """
const { denseIds, serials } = require(process.argv[1] + '/bindings-node/segments.js')
const { Dictionary } = require(process.argv[1] + '/bindings-node/dictionary.js')
;(async () => {
  const url = process.argv[2]
  const format = 'ORD-{yyyy}{MM}{dd}-{seq:6}'
  const orders = await denseIds({ connectionString: url, tag: 'orders' })
  const invoices = await serials({ connectionString: url, tag: 'invoices', format, zone: 'Europe/Paris' })
  const countries = new Dictionary(url, 'countries')
  const out = {
    ids: [orders.nextId(), orders.nextId(), orders.nextId()].map(Number),
    serial: await invoices.nextSerialAsync(),
    dictionary: (await countries.ids(['FR', 'DE', 'FR', 'JP'])).map(Number),
  }
  await Promise.all([orders.close(), invoices.close(), countries.close()])
  console.log(JSON.stringify(out))
})()
"""
    out = json.loads(subprocess.run(["node", "-e", node, str(root), url], capture_output=True, text=True, check=True).stdout)
    print(f"  Node    dense IDs {out['ids']}, serial {out['serial']}, dictionary {out['dictionary']}")

    if len(sys.argv) > 1:
        out = subprocess.run([sys.argv[1], str(path)], capture_output=True, text=True, check=True).stdout
        print("  Rust    " + ", ".join(line for line in out.splitlines() if not line.startswith("file:")))
    print("  (each client gave its unused rest back: the next one goes on without a hole)")
