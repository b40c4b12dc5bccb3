"""Generator.stats(): the core's counters, named by the core's table, equal what a scripted
clock made happen; every ID counted under 8 threads."""

from __future__ import annotations

import functools


import pytest

import shardid
from shardid import Generator, Layout
from together import on_threads

NAMES = ["ids", "waits", "borrowed_units", "clock_backwards", "clock_backwards_refused", "ticker_starts"]
T = 1_700_000_000_000


def test_stats_is_a_dict_named_by_the_cores_table() -> None:
    g = Generator(Layout.SONYFLAKE, 4201)
    stats = g.stats()
    assert list(stats) == NAMES
    assert all(type(v) is int for v in stats.values())
    assert stats["ids"] == 0 and stats["waits"] == 0


def test_borrowed_units_and_steps_back_are_counted_exactly() -> None:
    # Sonyflake: 256 IDs per 10 ms unit; one unit may be borrowed.
    g = Generator(Layout.SONYFLAKE, 4202, max_borrow_units=1)
    assert len(g.next_ids_at(T, 256 + 64)) == 320  # the unit, then 64 of the next, borrowed
    assert len(g.next_ids_at(T, 256)) == 192  # the rest of the borrowed unit
    with pytest.raises(shardid.SequenceExhaustedError):
        g.next_id_at(T)  # both units used up
    for k in range(7):
        now = T + 1_000 * (k + 1)
        g.next_id_at(now)
        g.next_id_at(now - 50)  # 5 units behind, within the tolerance: continues the last unit
    for _ in range(3):
        with pytest.raises(shardid.ClockMovedBackwardsError):
            g.next_id_at(T - 5_000)
    stats = g.stats()
    assert stats["ids"] == 512 + 14
    assert stats["borrowed_units"] == 1
    assert stats["clock_backwards"] == 7
    assert stats["clock_backwards_refused"] == 3
    assert stats["waits"] == 0, "the _at calls never wait"
    # Every handle on the layout and shard reports the same state.
    assert Generator(Layout.SONYFLAKE, 4202).stats() == stats


def test_every_id_is_counted_under_8_threads() -> None:
    g = Generator(Layout.TWITTER, 1001)
    before = g.stats()["ids"]

    def work(batch: bool) -> None:
        for _ in range(500):
            if batch:
                g.next_ids(10)
            else:
                g.next_id()

    on_threads(functools.partial(work, t % 2 == 1) for t in range(8))
    assert g.stats()["ids"] - before == 4 * 500 + 4 * 500 * 10


def test_the_prometheus_collector_reports_every_generator_in_parsable_text() -> None:
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    g = Generator(Layout.DISCORD, 1003)
    g.next_ids(1234)
    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    text = generate_latest(registry).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    ids = families["shardid_ids"]
    assert ids.type == "counter"
    values = {(s.labels.get("layout"), s.labels.get("shard")): s.value for s in ids.samples if s.name == "shardid_ids_total"}
    assert values[("DISCORD", "1003")] == g.stats()["ids"] == 1234
    for name in ("shardid_waits", "shardid_borrowed_units", "shardid_clock_backwards", "shardid_clock_backwards_refused"):
        assert families[name].type == "counter", name
    ticker = [s for s in families["shardid_ticker_starts"].samples if s.name == "shardid_ticker_starts_total"]
    assert len(ticker) == 1 and ticker[0].labels == {}, "one figure for the process"
    assert "# HELP shardid_ids_total IDs handed out" in text
    # A histogram's help is its sum's, with or without an object reporting it (no DenseIds here).
    from shardid._shardid import _stats_table

    (sum_help,) = [m[2] for m in _stats_table()["segments"]["metrics"] if m[1] == "sum"]
    latency = families["shardid_segment_fetch_latency_seconds"]
    assert (latency.type, latency.documentation, latency.samples) == ("histogram", sum_help, [])
    # Help texts name no unit: the name says seconds (OpenTelemetry's unit says ms).
    assert sum_help == "How long the fetches took, added up (failed ones too)"
    assert "# HELP shardid_segment_fetch_latency_last_seconds How long the last fetch took\n" in text


def test_opentelemetry_observables_read_through_the_sdk() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    import shardid.opentelemetry

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    shardid.opentelemetry.instrument(provider.get_meter("shardid-test"))
    g = Generator(Layout.INSTAGRAM, 1004)
    g.next_ids(321)
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    points = {(p.attributes["layout"], p.attributes["shard"]): p.value for p in metrics["shardid.ids"].data.data_points}
    assert points[("INSTAGRAM", "1004")] == 321
    assert metrics["shardid.ids"].data.is_monotonic
    assert metrics["shardid.ids"].description == "IDs handed out"
    provider.shutdown()


def test_a_leases_counters_reach_both_exporters_under_layout_shard_and_table() -> None:
    # A database lease's parts without a database: the core's tally and ceiling generator, with
    # a store that records whatever it is asked (shardid.postgres's stores write the row).
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.opentelemetry
    import shardid.prometheus
    from shardid._shardid import _CeilingGenerator, _Hold, _LeaseTally

    writes: list[int] = []
    tally = _LeaseTally(Layout.TWITTER, "exported_leases")
    hold = _Hold(60_000, _Hold.now())
    g = _CeilingGenerator(Layout.TWITTER, 42, None, lambda units, _at_least: writes.append(units), hold=hold, tally=tally)
    for i in range(5):
        g.next_id_at(T + i * 1000)  # each a second apart: a ceiling write each
    sent = hold.sending()
    assert sent is not None
    hold.renewed(sent)
    expected = {"acquisitions": 1, "renewals": 1, "ceiling_writes": 5, "late_renewals": 0, "losses": 0, "held": 1}
    assert tally.stats() == expected and len(writes) == 5

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
    labels = {"layout": "TWITTER", "shard": "42", "table": "exported_leases"}
    got = {s.name: s.value for f in families.values() for s in f.samples if s.labels == labels}
    assert got == {
        "shardid_lease_acquisitions_total": 1,
        "shardid_lease_renewals_total": 1,
        "shardid_lease_ceiling_writes_total": 5,
        "shardid_lease_late_renewals_total": 0,
        "shardid_lease_losses_total": 0,
        "shardid_lease_held": 1,
    }
    assert families["shardid_lease_held"].type == "gauge"

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    shardid.opentelemetry.instrument(provider.get_meter("shardid-lease-test"))
    g.revoke()  # lost: one loss, no longer held
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}

    def point(name: str) -> int:
        (value,) = [p.value for p in metrics[name].data.data_points if dict(p.attributes) == labels]
        return value  # type: ignore[no-any-return]

    assert point("shardid.lease.ceiling_writes") == 5
    assert point("shardid.lease.losses") == 1
    assert point("shardid.lease.held") == 0
    provider.shutdown()
