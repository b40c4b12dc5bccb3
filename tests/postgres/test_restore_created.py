"""Issue 54 on PostgreSQL: a serial period, a dense tag and a topic created after a backup,
and created again after it is restored, start past what the lost state could have handed out
from them (restore_checks.created_after_backup): a ``pg_dump`` restored with ``pg_restore
--clean`` into the same database and marked with ``shardid restored``, one restored into a
fresh cluster (another system identifier), and point-in-time recovery (a new timeline): both
seen without a mark. Then ``shardid restored --after`` and the status of a period a restore's
skip left short. Each takes a few seconds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cluster import Cluster, bindir

from restore_checks import after_given, created_after_backup, first_claims_not_delayed, lease_created_after_backup
from shardid.sql import dictionary, segments


def _run(*args: str) -> None:
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (args, out.stdout, out.stderr)


def _database(cluster: Cluster, name: str) -> str:
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    dsn = cluster.dsn.replace("dbname=postgres", f"dbname={name}")
    with psycopg.connect(dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(segments("rc_seg").encode())
        conn.execute(dictionary("rc_dict").encode())
    return dsn


def _mark(dsn: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shardid", "restored", dsn, "--segments-schema", "rc_seg", "--dictionary-schema", "rc_dict"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "marked restored: 2 tags, 1 topic" in done.stdout, done.stdout  # orders and the first day; words


def test_a_dump_restored_with_clean_into_the_same_database_and_marked(cluster: Any, tmp_path: Path) -> None:
    dsn = _database(cluster, "rc_same")
    dump = tmp_path / "rc.pgdump"
    said = created_after_backup(
        dsn,
        backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
        restore=lambda: _run(str(bindir() / "pg_restore"), "--clean", "--if-exists", "-d", dsn, str(dump)),
        mark=_mark,
        schema="rc_seg",
        dictionary_schema="rc_dict",
    )
    print(f"\npg_restore --clean, marked: {said}")


def test_a_dump_restored_into_a_fresh_cluster_is_seen_without_a_mark(cluster: Any, tmp_path: Path) -> None:
    dsn = _database(cluster, "rc_fresh")
    dump = tmp_path / "rc.pgdump"
    with Cluster() as fresh:

        def restore() -> tuple[str, str]:
            with psycopg.connect(fresh.dsn, autocommit=True) as admin:
                admin.execute("CREATE DATABASE rc_fresh")
            new = fresh.dsn.replace("dbname=postgres", "dbname=rc_fresh")
            _run(str(bindir() / "pg_restore"), "-d", new, str(dump))
            return new, new

        said = created_after_backup(
            dsn,
            backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
            restore=restore,
            mark=None,
            schema="rc_seg",
            dictionary_schema="rc_dict",
        )
    print(f"\npg_restore into a fresh cluster, not marked: {said}")


def test_point_in_time_recovery_is_seen_without_a_mark(tmp_path: Path) -> None:
    """Point-in-time recovery to a restore point (a new timeline): what was created after the
    point and made again on the recovered cluster starts past what the lost WAL handed out."""
    from test_dump_restore import Recovered

    archive = Path(tempfile.mkdtemp(prefix="shardid-pg-archive-"))
    if os.geteuid() == 0:
        subprocess.run(["chown", "postgres:", str(archive)], check=True)
    try:
        with Cluster(wal_level="replica", archive_mode="on", archive_command=f"'cp %p {archive}/%f'") as primary:
            with psycopg.connect(primary.dsn, autocommit=True) as conn, conn.transaction():
                conn.execute(segments("rc_seg").encode())
                conn.execute(dictionary("rc_dict").encode())
            recovered = Recovered(primary)

            def backup() -> None:
                with psycopg.connect(primary.dsn, autocommit=True) as conn:
                    conn.execute("SELECT pg_create_restore_point('rc')")

            def restore() -> tuple[str, str]:
                with psycopg.connect(primary.dsn, autocommit=True) as conn:
                    wal = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()[0]
                    conn.execute("SELECT pg_switch_wal()")
                    deadline = time.monotonic() + 30
                    while (conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()[0] or "") < wal:
                        assert time.monotonic() < deadline, "the WAL was not archived"
                        time.sleep(0.05)
                primary.stop_server()
                recovered.recover(archive, "rc")
                return recovered.dsn, recovered.dsn

            try:
                said = created_after_backup(
                    primary.dsn, backup, restore, None, schema="rc_seg", dictionary_schema="rc_dict"
                )
            finally:
                recovered.stop()
    finally:
        shutil.rmtree(archive, ignore_errors=True)
    print(f"\npoint-in-time recovery, not marked: {said}")


def test_restored_after_starts_right_past_what_the_operator_gives(cluster: Any, tmp_path: Path) -> None:
    dsn = _database(cluster, "rc_after")
    dump = tmp_path / "rc.pgdump"

    def restored(url: str, options: list[str]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "shardid", "restored", url, "--segments-schema", "rc_seg", "--dictionary-schema", "rc_dict",
             *options],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "tag rst@" in done.stdout and "(--after:" in done.stdout, done.stdout

    said = after_given(
        dsn,
        backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
        restore=lambda: _run(str(bindir() / "pg_restore"), "--clean", "--if-exists", "-d", dsn, str(dump)),
        restored=restored,
        schema="rc_seg",
        dictionary_schema="rc_dict",
    )
    print(f"\npg_restore --clean, restored --after: {said}")


def test_status_says_how_much_of_the_period_the_skip_used_and_when_it_runs_out(cluster: Any) -> None:
    """After a restore, ``shardid status`` says, of each serial's current period, how much its
    numbers (the restore's skip included) used and when the rest runs out at the rate its row
    recorded, when that is before the period ends (issue 54); Django's shardid.W003 reads the
    same warnings."""
    from shardid.segments import Serials, create_serial

    dsn = _database(cluster, "rc_status")
    fmt = "N-{yyyy}{MM}{dd}-{seq:4}"
    create_serial(dsn, "narrow", fmt, zone="UTC", schema="rc_seg")
    with Serials(dsn, "narrow", fmt, zone="UTC", schema="rc_seg", min_size=1, max_size=1) as s:
        s.next_serial()
    with psycopg.connect(dsn, autocommit=True) as conn:
        # What a busy day recorded: the skip is 4 x rate x the seconds since the last handout (a
        # Python start or two here), so 500/s overflowed a {seq:4} period (9999) at 5 s under load.
        conn.execute("UPDATE rc_seg.shardid_tags SET rate = 200")
    _mark_only(dsn)
    with Serials(dsn, "narrow", fmt, zone="UTC", schema="rc_seg", min_size=1, max_size=1) as s:
        after = s.next_serial()
    done = subprocess.run(
        [sys.executable, "-m", "shardid", "status", dsn, "--segments-schema", "rc_seg", "--dictionary-schema", "rc_dict"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    period = after.split("-")[1]
    said = f"serial period narrow@{period[:4]}-{period[4:6]}-{period[6:]} has used "
    assert said in done.stdout and "at its recorded rate (200.0/s) the rest runs out at" in done.stdout, done.stdout
    print(f"\nafter the skip ({after}): {done.stdout[done.stdout.index(said):].splitlines()[0]}")


def _mark_only(dsn: str, *options: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shardid", "restored", dsn, "--segments-schema", "rc_seg", "--dictionary-schema", "rc_dict",
         *options],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture(autouse=True)
def _pg_dump_present() -> None:
    if not (bindir() / "pg_dump").exists():
        pytest.skip("pg_dump not found")


def test_a_lease_row_the_dump_lacks_starts_past_the_lost_holders_ceiling(cluster: Any, tmp_path: Path) -> None:
    """Issue 54's lease row: a dump with the lease table but not shard 0's row, a holder of
    shard 0 dating IDs 1.95 s ahead of the database's clock, ``pg_restore --clean`` and the
    mark, and a new holder of shard 0 at once: none of the lost holder's IDs again."""
    from shardid.postgres import lease

    dsn = _database(cluster, "rc_lease")
    dump = tmp_path / "rc.pgdump"
    said = lease_created_after_backup(
        lease, dsn, "rc_leases",
        backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
        restore=lambda: _run(str(bindir() / "pg_restore"), "--clean", "--if-exists", "-d", dsn, str(dump)),
        mark=lambda url: _mark_only(url, "--table", "rc_leases"), table_in_backup=True,
    )  # fmt: skip
    print(f"\npg_restore --clean, marked, a lease row the dump lacks: {said}")


def test_a_lease_row_the_dump_lacks_restored_into_a_fresh_cluster_is_seen_without_a_mark(
    cluster: Any, tmp_path: Path
) -> None:
    """The same, the dump restored into a fresh cluster and not marked: the table's fence row,
    in the dump, was written in another cluster (its system identifier), so the new holder of
    shard 0 starts past the clock plus the skew as after a mark."""
    from shardid.postgres import lease

    dsn = _database(cluster, "rc_lease_fresh")
    dump = tmp_path / "rc.pgdump"
    with Cluster() as fresh:

        def restore() -> str:
            with psycopg.connect(fresh.dsn, autocommit=True) as admin:
                admin.execute("CREATE DATABASE rc_lease_fresh")
            new = fresh.dsn.replace("dbname=postgres", "dbname=rc_lease_fresh")
            _run(str(bindir() / "pg_restore"), "-d", new, str(dump))
            return new

        said = lease_created_after_backup(
            lease, dsn, "rc_leases",
            backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
            restore=restore, mark=None, table_in_backup=True,
        )  # fmt: skip
    print(f"\npg_restore into a fresh cluster, not marked, a lease row the dump lacks: {said}")


def test_a_dump_taken_before_any_lease_restored_into_a_new_database_and_marked(cluster: Any, tmp_path: Path) -> None:
    """The same, the dump taken before any lease ran (it has no lease table: the lost holders
    made it after) and restored into a new database of the cluster, which nothing sees, then
    marked: ``shardid restored`` makes the lease table as a lease would and marks its fence,
    so the new holders start past the lost ones' IDs. Before, it made nothing on PostgreSQL
    and every new holder dated the lost holders' IDs again."""
    from shardid.postgres import lease

    dsn = _database(cluster, "rc_lease_none")
    dump = tmp_path / "rc.pgdump"

    def restore() -> str:
        with psycopg.connect(cluster.dsn, autocommit=True) as admin:
            admin.execute("CREATE DATABASE rc_lease_none_back")
        new = cluster.dsn.replace("dbname=postgres", "dbname=rc_lease_none_back")
        _run(str(bindir() / "pg_restore"), "-d", new, str(dump))
        return new

    def mark(url: str) -> None:
        _mark_only(url, "--table", "rc_leases")
        with psycopg.connect(url, autocommit=True) as conn:
            fence = conn.execute("SELECT taken_at IS NOT NULL FROM public.rc_leases WHERE layout = ''").fetchall()
        assert fence == [(True,)], f"the made table's fence row: {fence}"

    said = lease_created_after_backup(
        lease, dsn, "rc_leases",
        backup=lambda: _run(str(bindir() / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn),
        restore=restore, mark=mark, table_in_backup=False,
    )  # fmt: skip
    print(f"\na dump without the lease table restored into a new database, marked: {said}")


def test_restored_by_a_role_that_may_not_create_tables_makes_no_lease_table_and_goes_on(cluster: Any) -> None:
    """Where the role running ``shardid restored`` may not create tables in the schema a lease
    of its would use (``public`` for a role that does not own the database, PostgreSQL 15 on),
    no lease of that role could have made the table either: nothing is made, and the tags and
    topics are still marked, where a ``CREATE TABLE`` would have failed the whole command."""
    dsn = _database(cluster, "rc_lease_plain")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE ROLE rc_plain LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute("GRANT USAGE ON SCHEMA rc_seg, rc_dict TO rc_plain")
        conn.execute("GRANT ALL ON ALL TABLES IN SCHEMA rc_seg, rc_dict TO rc_plain")
        conn.execute("SELECT rc_seg.create_tag('orders')")
    plain = dsn.replace("user=postgres", "user=rc_plain")
    done = subprocess.run(
        [sys.executable, "-m", "shardid", "restored", plain, "--segments-schema", "rc_seg", "--dictionary-schema", "rc_dict"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "marked restored: 1 tag, 0 topics" in done.stdout, done.stdout
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('public.shardid_leases')").fetchone() == (None,)
    # The database's owner may: the table is made and its fence marked.
    _mark_only(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        fence = conn.execute("SELECT taken_at IS NOT NULL FROM public.shardid_leases WHERE layout = ''").fetchall()
    assert fence == [(True,)], fence


def test_django_shardid_restored_marks_the_lease_table_where_the_projects_lease_keeps_it(
    cluster: Any, tmp_path: Path
) -> None:
    """``manage.py shardid_restored`` marks the lease table in the schema the project's lease
    uses (``SHARDID["lease"]["schema"]``), made there where the restored data has none: the
    fence the project's leases read. Before, it marked (and now would have made)
    ``public.shardid_leases``, which no lease of the project reads."""
    from django_project import database

    _database(cluster, "rc_django")
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=rc_django")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app")
    (tmp_path / "settings.py").write_text(
        'SECRET_KEY = "test"\nINSTALLED_APPS = ["shardid.django"]\nUSE_TZ = True\n'
        f"DATABASES = {{'default': {database('postgresql', cluster.port, 'rc_django')}}}\n"
        'SHARDID = {"layout": "instagram", "lease": {"schema": "app", "shards": [0, 4]}}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "django", "shardid_restored"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "DJANGO_SETTINGS_MODULE": "settings"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with psycopg.connect(dsn, autocommit=True) as conn:
        fence = conn.execute("SELECT taken_at IS NOT NULL FROM app.shardid_leases WHERE layout = ''").fetchall()
        assert conn.execute("SELECT to_regclass('public.shardid_leases')").fetchone() == (None,)
    assert fence == [(True,)], fence


def test_a_first_claim_on_a_database_never_restored_is_not_delayed(cluster: Any) -> None:
    """The lease table's fence costs a database never restored nothing: a first claim (the
    table and its fence made) and a first claim of a shard the table lacks start at the clock."""
    from shardid.postgres import lease

    said = first_claims_not_delayed(lease, _database(cluster, "rc_lease_new"), "rc_leases")
    print(f"\na fresh database's first claims: {said}")


def test_a_lease_row_the_lost_wal_held_is_seen_after_point_in_time_recovery(tmp_path: Path) -> None:
    """Issue 54's lease row under point-in-time recovery to a restore point (a new timeline),
    not marked: shard 0's row, made after the point, is lost with the WAL; the table's fence
    row, from before the point, was written on the old timeline, so the new holder of shard 0
    starts past the clock plus the skew."""
    from test_dump_restore import Recovered

    from shardid.postgres import lease

    archive = Path(tempfile.mkdtemp(prefix="shardid-pg-archive-"))
    if os.geteuid() == 0:
        subprocess.run(["chown", "postgres:", str(archive)], check=True)
    try:
        with Cluster(wal_level="replica", archive_mode="on", archive_command=f"'cp %p {archive}/%f'") as primary:
            recovered = Recovered(primary)

            def backup() -> None:
                with psycopg.connect(primary.dsn, autocommit=True) as conn:
                    conn.execute("SELECT pg_create_restore_point('rl')")

            def restore() -> str:
                with psycopg.connect(primary.dsn, autocommit=True) as conn:
                    wal = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()[0]
                    conn.execute("SELECT pg_switch_wal()")
                    deadline = time.monotonic() + 30
                    while (conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()[0] or "") < wal:
                        assert time.monotonic() < deadline, "the WAL was not archived"
                        time.sleep(0.05)
                primary.stop_server()
                recovered.recover(archive, "rl")
                return recovered.dsn

            try:
                said = lease_created_after_backup(
                    lease, primary.dsn, "rc_leases", backup, restore, None, table_in_backup=True
                )
            finally:
                recovered.stop()
    finally:
        shutil.rmtree(archive, ignore_errors=True)
    print(f"\npoint-in-time recovery, not marked, a lease row the lost WAL held: {said}")
