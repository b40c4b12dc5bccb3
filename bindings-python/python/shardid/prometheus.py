"""shardid's counters for Prometheus (``prometheus_client``, an optional dependency imported
only when a registry collects)::

    from prometheus_client import REGISTRY
    import shardid.prometheus

    REGISTRY.register(shardid.prometheus.ShardIdCollector())

Reports every generator of the process (``shardid_ids_total{layout,shard}``,
``shardid_waits_total``, ...), every live ``DenseIds`` (``shardid_segment_*{schema,tag}``, the
fetch latency as the histogram ``shardid_segment_fetch_latency_seconds``) and every live
``Dictionary`` (``shardid_dictionary_*{schema,topic}``). Names, kinds and help texts come from
the core's table (the same names as ``stats()``); milliseconds are reported in seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._shardid import _collect, _stats_table

_INF = 2**64 - 1

__all__ = ["ShardIdCollector"]


class ShardIdCollector:
    """A ``prometheus_client`` collector of every shardid object alive in the process."""

    def collect(self) -> Iterator[Any]:
        """The metric families of every generator, dense-ID allocator and dictionary alive in
        the process, as the core's table names, types and describes them (``prometheus_client``
        calls it at each scrape)."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        samples = _collect()
        for family, spec in _stats_table().items():
            labels: list[str] = spec["labels"]
            rows = [(values_labels, values) for (f, values_labels, values) in samples if f == family]
            histograms: dict[str, dict[str, Any]] = {}
            for i, (name, kind, help, prom, _otel, le_ms, divide_by, process_wide) in enumerate(spec["metrics"]):
                if kind in ("bucket", "sum"):
                    h = histograms.setdefault(prom, {"help": help, "rows": {}})
                    if kind == "sum":
                        # The histogram's help is its sum's, whether or not an object reports it.
                        h["help"] = help
                    for row_labels, values in rows:
                        r = h["rows"].setdefault(tuple(row_labels), {"buckets": [], "sum": 0.0})
                        if kind == "bucket":
                            le = "+Inf" if le_ms == _INF else str(le_ms / 1000)
                            r["buckets"].append((le, values[i]))
                        else:
                            r["sum"] = values[i] / divide_by
                    continue
                metric: Any
                if process_wide:  # one value for the process: no labels
                    metric = CounterMetricFamily(prom, help) if kind == "counter" else GaugeMetricFamily(prom, help)
                    if rows:
                        metric.add_metric([], max(values[i] for _, values in rows) / divide_by)
                    yield metric
                    continue
                if kind == "counter":
                    metric = CounterMetricFamily(prom, help, labels=labels)
                else:
                    metric = GaugeMetricFamily(prom, help, labels=labels)
                for row_labels, values in rows:
                    value = values[i] / divide_by if divide_by != 1 else values[i]
                    metric.add_metric(row_labels, value)
                yield metric
            for prom, h in histograms.items():
                histogram = HistogramMetricFamily(prom, h["help"], labels=labels)
                for row_labels, r in h["rows"].items():
                    histogram.add_metric(list(row_labels), buckets=r["buckets"], sum_value=r["sum"])
                yield histogram
