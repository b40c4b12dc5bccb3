"""Python's and Node's Prometheus exporters print the same thing: with one generator in each
process, of the same layout and shard and with the same number of IDs, the two texts have the
same HELP and TYPE lines, and prometheus_client's parser reads the same families with the same
samples (names and labels; values where both processes must agree).

Run with the Python of a virtualenv holding the installed wheel and prometheus_client, given a
Node project holding the installed shardid package and prom-client:

    python tests/packaging/same_exposition.py NODE_PROJECT
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import shardid
import shardid.prometheus

NODE = """
const promClient = require('prom-client')
const { register } = require('shardid/prometheus')
const { Generator, Layout } = require('shardid')
new Generator({ layout: Layout.DISCORD, shard: 7 }).nextIds(100)
const custom = new Layout({ epochMs: 1700000000000n, unitMs: 10n, timeBits: 41, shardBits: 21, sequenceBits: 1 })
new Generator({ layout: custom, shard: 61 }).nextIdsAt(1700000005000n, 2)
const registry = new promClient.Registry()
register(registry)
registry.metrics().then((text) => process.stdout.write(text))
"""


def python_text() -> str:
    shardid.Generator(shardid.Layout.DISCORD, 7).next_ids(100)
    custom = shardid.Layout(epoch_ms=1_700_000_000_000, unit_ms=10, time_bits=41, shard_bits=21, sequence_bits=1)
    shardid.Generator(custom, 61).next_ids_at(1_700_000_005_000, 2)
    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    return generate_latest(registry).decode()


def families(text: str) -> dict[str, Any]:
    out = {}
    for f in text_string_to_metric_families(text):
        samples = sorted((s.name, tuple(sorted(s.labels.items()))) for s in f.samples)
        ids = sorted((tuple(sorted(s.labels.items())), float(s.value)) for s in f.samples if s.name == "shardid_ids_total")
        out[f.name] = (f.type, f.documentation, samples, ids)
    return out


def main() -> int:
    project = sys.argv[1]
    node_text = subprocess.run(["node", "-e", NODE], cwd=project, check=True, capture_output=True, text=True).stdout
    py_text = python_text()
    problems = []
    py_meta = sorted(line for line in py_text.splitlines() if line.startswith("#"))
    node_meta = sorted(line for line in node_text.splitlines() if line.startswith("#"))
    problems += [f"only Python prints: {line}" for line in py_meta if line not in node_meta]
    problems += [f"only Node prints: {line}" for line in node_meta if line not in py_meta]
    py, node = families(py_text), families(node_text)
    for name in sorted(set(py) | set(node)):
        if py.get(name) != node.get(name):
            problems.append(f"{name}: Python {py.get(name)} / Node {node.get(name)}")
    if len(py) < 10 or not py["shardid_ids"][3] == [((("layout", "DISCORD"), ("shard", "7")), 100.0), ((("layout", "epoch_ms=1700000000000 unit_ms=10 bits=41/21/1"), ("shard", "61")), 2.0)]:
        problems.append(f"not the expected figures: {sorted(py)} {py.get('shardid_ids')}")
    for problem in problems:
        print(problem)
    print(f"{len(py)} families in Python's text, {len(node)} in Node's; {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
