"""A daily ``{seq:6}`` serial across a real failover (issue 42): a primary and an asynchronous
standby (tests/postgres/failover.py's :class:`Pair`), two clients issuing serials at 10 and at
200 a second in all, the walsender held 1 s, the primary killed, the standby promoted. Every
serial stays unique, none fails with ``SERIAL_OVERFLOW`` (before issue 42 the period's tag
jumped 20,970,000 numbers at the first take on the new timeline, and every serial of the day
failed), and the gap is bounded: at most MARGIN times the rate the row can record (the
traffic's, plus 5 segments a second: two clients fetching ahead, and the take that closes a
window) over the time from the last write the standby had to the first take after the
promotion plus 2 s of skew, plus FLOOR_BATCHES segments of twice their size. Measured: about 50
times the traffic the second of lost WAL carried at 10 a second (segments of 5), about 20 times
at 200 a second (segments of 20).

Small segments (a take every 0.1 to 0.5 s) put takes in the lost WAL. Each rate runs on a pair
of its own: about 10 s each. The figures are printed (``pytest -s``).
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from failover import Pair, _connect, _one

from shardid.segments import Serials, create_serial
from shardid.sql import segments

FMT = "ORD-{yyyy}{MM}{dd}-{seq:6}"
MARGIN = 4  # shardid::sql::failover
FLOOR_BATCHES = 4
SKEW_S = 2.0
WARM_S = 2.5
HOLD_S = 1.0
AFTER_S = 3.0

pytestmark = pytest.mark.failover


class Client(threading.Thread):
    def __init__(self, conninfo: str, per_second: float, size: int) -> None:
        super().__init__()
        self.conninfo = conninfo
        self.period = 1 / per_second
        self.size = size
        self.stop = threading.Event()
        self.issued: list[tuple[int, str]] = []  # (monotonic ns, serial)
        self.errors: list[str] = []

    def run(self) -> None:
        s = Serials(self.conninfo, "orders", FMT, zone="UTC", schema="seg", min_size=self.size, max_size=self.size, wait_ms=500)
        due = time.monotonic()
        while not self.stop.is_set():
            try:
                self.issued.append((time.monotonic_ns(), s.next_serial()))
            except Exception as e:  # noqa: BLE001 (counted: the outage, or an overflow)
                self.errors.append(str(e).splitlines()[0])
                self.stop.wait(0.05)
                continue
            # At the pace, without catching up in a burst after a stall.
            due = max(due + self.period, time.monotonic())
            self.stop.wait(max(0.0, due - time.monotonic()))


RATE = (
    "SELECT greatest(rate, window_n / greatest(extract(epoch FROM updated_at - window_at)::float8, 1))"
    " FROM seg.shardid_tags WHERE tag = %s"
)

# The first number of the first take on this server's timeline, or NULL before it.
FIRST_TAKE = (
    "SELECT next - window_n FROM seg.shardid_tags WHERE tag = %s"
    " AND tli = ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int"
)


def _number(serial: str) -> int:
    return int(serial.rsplit("-", 1)[1])


@pytest.mark.parametrize(("per_second", "size"), [(10, 5), (200, 20)])
def test_a_daily_serial_keeps_issuing_across_a_failover(per_second: int, size: int) -> None:
    with Pair() as pair:
        with _connect(pair.primary.dsn) as conn:
            with conn.transaction():
                conn.execute(segments("seg").encode())
            create_serial(conn, "orders", FMT, zone="UTC", schema="seg")
            # The period's tag remembers segments of `size`: the clients' first take (size 0,
            # the remembered one) is not the default 1,000.
            day = conn.execute("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD')").fetchone()[0]
            conn.execute("SELECT * FROM seg.take_serial_segment('orders', %s, %s)", (day, size))
        clients = [Client(pair.conninfo, per_second / 2, size) for _ in range(2)]
        for c in clients:
            c.start()
        try:
            time.sleep(WARM_S)
            pair.pause_walsender()
            paused = time.monotonic_ns()
            time.sleep(HOLD_S)
            period = _one(pair.primary.dsn, "SELECT tag FROM seg.shardid_tags WHERE tag LIKE 'orders@%'")
            primary_next = int(_one(pair.primary.dsn, "SELECT next FROM seg.shardid_tags WHERE tag = %s", period))
            # The highest rate the row records: its closed windows', or its open window's.
            rate = float(_one(pair.primary.dsn, RATE, period))
            pair.crash_primary()
            crashed = time.monotonic_ns()
            pair.settle_standby()
            standby_next = int(_one(pair.standby_dsn, "SELECT next FROM seg.shardid_tags WHERE tag = %s", period))
            pair.promote()
            promoted = time.monotonic_ns()
            # The first take on the new timeline starts a rate window with what it took, so
            # next - window_n is its first number until that window closes, a second later.
            first_new = None
            deadline = time.monotonic() + AFTER_S
            while first_new is None and time.monotonic() < deadline:
                first_new, first_take_ns = _one(pair.standby_dsn, FIRST_TAKE, period), time.monotonic_ns()
                time.sleep(0.02)
            time.sleep(max(0.0, deadline - time.monotonic()))
        finally:
            for c in clients:
                c.stop.set()
            for c in clients:
                c.join(30)
    issued = [x for c in clients for x in c.issued]
    errors = [e for c in clients for e in c.errors]
    serials = [s for _, s in issued]
    overflows = [e for e in errors if "SERIAL_OVERFLOW" in e]
    assert not overflows, f"{len(overflows)} SERIAL_OVERFLOW after the failover: {overflows[0]}"
    after = [(t, _number(s)) for t, s in issued if t > promoted]
    assert first_new is not None, f"no segment taken after the promotion: {after[:5]}"
    skip = first_new - standby_next
    lost = primary_next - standby_next
    # From the last write the standby had (a take at most two segments' time before the pause)
    # to the first take on the new timeline.
    outage_s = (first_take_ns - paused) / 1e9 + 2 * size / per_second
    # The rate a row records: the traffic's, plus what two clients that fetch their next
    # segment ahead (two each) and the take closing a window add to a window of 1 s.
    # (Or what the primary's row recorded, when a busy machine made the traffic burstier.)
    recorded = max(per_second + (2 * 2 + 1) * size, rate)
    bound = MARGIN * recorded * (outage_s + SKEW_S) + FLOOR_BATCHES * 2 * size
    print(
        f"\n{per_second}/s, segments of {size}: the standby had next {standby_next:,}, the primary"
        f" {primary_next:,} ({lost:,} handed out in the lost WAL; {per_second * HOLD_S:,.0f} at the traffic's rate"
        f" over the {HOLD_S:g} s held back), rate recorded {rate:,.1f}/s; first new number after the promotion"
        f" {first_new:,}: skip {skip:,} = {skip / (per_second * HOLD_S):.1f} x the held-back traffic,"
        f" {skip / max(lost, 1):.1f} x what was lost; bound {bound:,.0f} (outage {outage_s:.2f} s);"
        f" crash to promoted {(promoted - crashed) / 1e9:.2f} s; {len(serials):,} serials,"
        f" errors during the outage: {len(errors)} ({sorted(set(re.sub(r'[0-9]+', 'N', e) for e in errors))[:3]})"
    )
    assert len(after) > per_second, "too few serials after the promotion"
    assert len(serials) == len(set(serials)), f"{len(serials) - len(set(serials))} serials issued twice"
    assert lost > 0, "no take in the lost WAL: the test would not see a repeat"
    assert lost <= skip <= bound, (lost, skip, bound)
