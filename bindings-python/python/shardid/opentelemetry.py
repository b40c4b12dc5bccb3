"""shardid's counters as OpenTelemetry observable instruments (``opentelemetry-api``, an
optional dependency imported only when instrumenting)::

    from opentelemetry import metrics
    import shardid.opentelemetry

    shardid.opentelemetry.instrument(metrics.get_meter("shardid"))

Every generator of the process (``shardid.ids``, ``shardid.waits``, ... with attributes
``layout`` and ``shard``), every live ``DenseIds`` (``shardid.segment.*``: ``schema``, ``tag``;
the fetch latency's buckets as the counter ``shardid.segment.fetch_latency.bucket`` with an
``le`` attribute in milliseconds, its sum as ``shardid.segment.fetch_latency.sum``) and every
live ``Dictionary`` (``shardid.dictionary.*``: ``schema``, ``topic``). Names, kinds and
descriptions come from the core's table; durations are in milliseconds (unit ``ms``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._shardid import _collect, _stats_table

_INF = 2**64 - 1

__all__ = ["instrument"]


def instrument(meter: Any) -> list[Any]:
    """Creates shardid's observable instruments on ``meter``; returns them."""
    from opentelemetry.metrics import CallbackOptions, Observation

    instruments = []
    for family, spec in _stats_table().items():
        labels: list[str] = spec["labels"]
        # One instrument per OpenTelemetry name: a histogram's buckets share one.
        grouped: dict[str, list[tuple[int, str, str, int | None, int, bool]]] = {}
        for i, (name, kind, help, _prom, otel, le_ms, divide_by, process_wide) in enumerate(spec["metrics"]):
            grouped.setdefault(otel, []).append((i, kind, help, le_ms, divide_by, process_wide))
        for otel, rows in grouped.items():
            kind, help, divide_by = rows[0][1], rows[0][2], rows[0][4]

            def callback(
                options: CallbackOptions, family: str = family, labels: list[str] = labels, rows: Any = rows
            ) -> Iterable[Observation]:
                samples = [(values_labels, values) for (f, values_labels, values) in _collect() if f == family]
                for i, kind, _help, le_ms, _divide_by, process_wide in rows:
                    if process_wide:
                        if samples:
                            yield Observation(max(values[i] for _, values in samples))
                        continue
                    for values_labels, values in samples:
                        attributes = dict(zip(labels, values_labels))
                        if kind == "bucket":
                            attributes["le"] = "+Inf" if le_ms == _INF else str(le_ms)
                        yield Observation(values[i], attributes)

            unit = "ms" if divide_by == 1000 else "1"
            if kind in ("gauge", "gauge_max"):
                instruments.append(meter.create_observable_gauge(otel, [callback], unit=unit, description=help))
            else:
                instruments.append(meter.create_observable_counter(otel, [callback], unit=unit, description=help))
    return instruments
