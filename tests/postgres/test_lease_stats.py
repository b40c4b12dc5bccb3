"""A database lease's counters equal what happened on the server (shardid.postgres): every
statement that touched the lease's row is logged by a trigger, and the lease's ``stats()``
(counted by the core's Hold and CeilingGenerator, not by the binding) must match it exactly;
a renewal held back by a row lock past two thirds of the time to live is one late renewal; a
takeover is one loss, a retake one more acquisition, a close no loss; the Prometheus collector
reports the lease under its layout, shard and table."""

from __future__ import annotations

import gc
import json
import time
from typing import Any

import psycopg

from shardid import Layout
from shardid.postgres import lease

# Logs each row change of the lease table: a claim (the token set), a release (the token
# cleared), a ceiling write (the ceiling raised) or a renewal (the expiry only).
LOG = """
CREATE TABLE {t}_log (op text NOT NULL);
CREATE FUNCTION {t}_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {t}_log VALUES (CASE
        WHEN TG_OP = 'INSERT' OR NEW.token IS DISTINCT FROM OLD.token THEN
            CASE WHEN NEW.token IS NULL THEN 'release' ELSE 'claim' END
        WHEN NEW.ceiling > OLD.ceiling THEN 'record'
        ELSE 'renew' END);
    RETURN NEW;
END $$;
CREATE TRIGGER {t}_log AFTER INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_log();
"""


def logged(admin: Any, table: str) -> dict[str, int]:
    rows = admin.execute(f"SELECT op, count(*) FROM {table}_log GROUP BY op").fetchall()
    return {op: n for op, n in rows}


def wait_for(predicate: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_renewals_and_ceiling_writes_equal_the_statements_the_server_saw(cluster: Any) -> None:
    table = "stats_leases"
    lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table).close()  # makes the table
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(LOG.format(t=table).encode())
        held = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table, ttl_ms=600)
        assert held.stats() == {
            "acquisitions": 1,
            "renewals": 0,
            "ceiling_writes": 0,
            "late_renewals": 0,
            "losses": 0,
            "held": 1,
        }
        # IDs for 0.6 s: a ceiling write every 100 ms; heartbeats every 200 ms meanwhile.
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            held.next_ids(100)
        # Heartbeats alone for 0.7 s more (the ceiling writes renewed the lease meanwhile).
        time.sleep(0.7)
        held.close()
        stats = held.stats()
        log = logged(admin, table)
    assert log["claim"] == stats["acquisitions"] == 1
    assert log["release"] == 1
    assert log["record"] == stats["ceiling_writes"] >= 4
    assert log["renew"] >= 2, log
    # A ceiling write renews the lease too: both are renewals.
    assert log["renew"] + log["record"] == stats["renewals"]
    assert (stats["late_renewals"], stats["losses"], stats["held"]) == (0, 0, 0)


def test_a_held_back_renewal_is_late_a_takeover_a_loss_and_a_retake_an_acquisition(cluster: Any) -> None:
    import shardid.prometheus
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    table = "late_leases"
    lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table).close()  # makes the table
    gc.collect()  # that lease (a cycle with its tenure) no longer reported
    # 3 s to live: renewals due every second, late after 2 s, the holder stops at 2.4 s.
    held = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table, ttl_ms=3000, retake=True)
    claimed = time.monotonic()  # the claim was sent before this
    with psycopg.connect(cluster.dsn) as blocker:
        # The row locked: the renewal sent at 1 s waits for the lock...
        blocker.execute(f"SELECT * FROM {table} FOR UPDATE")
        time.sleep(max(0.0, claimed + 2.15 - time.monotonic()))
        blocker.commit()  # ...and comes back at 2.15 s: late, still held.
    wait_for(lambda: held.stats()["renewals"] >= 1, 2.0)
    stats = held.stats()
    assert (stats["late_renewals"], stats["losses"], stats["held"]) == (1, 0, 1), stats
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        # Another process takes the row over (and it has expired for anyone to claim).
        admin.execute(f"UPDATE {table} SET token = 'intruder', expires_at = now() - interval '1 second' WHERE layout <> ''")
    wait_for(lambda: held.stats()["held"] == 0, 3.0)
    assert held.stats()["losses"] == 1
    held.next_id()  # retake=True: a new claim
    stats = held.stats()
    assert (stats["acquisitions"], stats["losses"], stats["held"]) == (2, 1, 1), stats

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
    labels = {"layout": "TWITTER", "shard": "0", "table": table}
    samples = {s.name: s.value for f in families.values() for s in f.samples if s.labels == labels}
    assert samples["shardid_lease_acquisitions_total"] == 2
    assert samples["shardid_lease_late_renewals_total"] == 1
    assert samples["shardid_lease_losses_total"] == 1
    assert samples["shardid_lease_held"] == 1
    held.close()
    stats = held.stats()
    assert (stats["losses"], stats["held"]) == (1, 0), "a close is no loss"


def test_nodes_lease_counts_the_same_statements(cluster: Any) -> None:
    from test_lease_postgres import node, url

    table = "node_stats_leases"
    lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table).close()  # makes the table
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(LOG.format(t=table).encode())
        out = node(url(cluster), "stats", table)
        admin.execute(f"DROP TRIGGER {table}_log ON {table}")
        log = logged(admin, table)
    assert out["types"] is True, "bigint counts"
    first = out["first"]
    # The trigger logged both leases (and the intruder's takeover, a change of token): compare
    # the sums.
    assert log["claim"] - 1 == first["acquisitions"] + out["closed"]["acquisitions"] == 1 + 2
    assert first["ceilingWrites"] >= 4 and first["renewals"] >= first["ceilingWrites"] + 2, first
    assert (first["lateRenewals"], first["losses"], first["held"]) == (0, 0, 0)
    assert out["lost"]["losses"] == 1 and out["lost"]["held"] == 0, out
    assert out["retaken"]["acquisitions"] == 2 and out["retaken"]["held"] == 1, out
    assert out["closed"]["losses"] == 1 and out["closed"]["held"] == 0, out
    total = first["renewals"] + out["closed"]["renewals"]
    writes = first["ceilingWrites"] + out["closed"]["ceilingWrites"]
    assert log["record"] == writes
    assert log["renew"] + log["record"] == total


def test_rusts_lease_counts_the_same_statements(cluster: Any) -> None:
    import subprocess

    from examples import example

    binary = example("lease")
    table = "rust_stats_leases"
    lease(Layout.TWITTER, cluster.dsn, range(0, 1), table=table).close()  # makes the table
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(LOG.format(t=table).encode())
        done = subprocess.run([binary, cluster.dsn, "stats", table], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        log = logged(admin, table)
    acquisitions, renewals, writes, late, losses, held = json.loads(done.stdout.strip().splitlines()[-1])
    assert log["claim"] == acquisitions == 1 and log["release"] == 1
    assert log["record"] == writes >= 4
    assert log["renew"] >= 2 and log["renew"] + log["record"] == renewals
    assert (late, losses, held) == (0, 0, 0)
