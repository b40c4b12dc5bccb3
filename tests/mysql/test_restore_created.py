"""Issue 54 on MariaDB: a serial period, a dense tag and a topic created after a
``mariadb-dump``, and created again after the dump is restored into the same server, start
past what the lost state could have handed out from them (restore_checks.created_after_backup):
marked with ``shardid restored``, and seen without a mark (the dump recreates the tables: another
origin, a second later). A few seconds each."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import install
from server import Server, _binary

from restore_checks import after_given, created_after_backup, first_claims_not_delayed, lease_created_after_backup
from shardid.sql import dictionary, mysql_serials, segments
from shardid.status import main as status_main


def _scenario(server: Server, conn: Any, tmp_path: Path, seg: str, dic: str, *, marked: bool) -> str:
    install(conn, segments(seg, dialect="mariadb"))
    install(conn, dictionary(dic, dialect="mariadb"))
    install(conn, mysql_serials(seg))
    dump = tmp_path / f"{seg}.sql"

    def backup() -> None:
        with open(dump, "w") as f:
            done = subprocess.run(
                [_binary("mariadb-dump"), "--no-defaults", "-uroot", f"--socket={server.socket}", "--single-transaction",
                 "--routines", "--databases", seg, dic],
                stdout=f, stderr=subprocess.PIPE, text=True, timeout=120,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def restore() -> None:
        # The tables the dump recreates get another creation second (their origin) than the
        # ones it replaces: unmarked, that is the only sign of the step back.
        time.sleep(1.1)
        server.sql(dump.read_text())

    def mark(url: str) -> None:
        stdout, stderr, code = status_main(["restored", url, "--segments-schema", seg, "--dictionary-schema", dic])
        assert code == 0, stderr
        assert "marked restored: 2 tags, 1 topic" in stdout, stdout  # orders and the first day; words

    return created_after_backup(
        server.url_for(seg),
        backup,
        restore,
        mark if marked else None,
        schema=seg,
        dictionary_schema=dic,
        dictionary_url=server.url_for(dic),
    )


def test_a_dump_restored_into_the_same_server_and_marked(server: Any, conn: Any, tmp_path: Path) -> None:
    print(f"\nmariadb-dump restored, marked: {_scenario(server, conn, tmp_path, 'rcm_seg', 'rcm_dict', marked=True)}")


def test_a_dump_restored_into_the_same_server_is_seen_by_its_origin(server: Any, conn: Any, tmp_path: Path) -> None:
    print(f"\nmariadb-dump restored, not marked: {_scenario(server, conn, tmp_path, 'rcs_seg', 'rcs_dict', marked=False)}")


def test_restored_after_starts_right_past_what_the_operator_gives(server: Any, conn: Any, tmp_path: Path) -> None:
    seg, dic = "rca_seg", "rca_dict"
    install(conn, segments(seg, dialect="mariadb"))
    install(conn, dictionary(dic, dialect="mariadb"))
    install(conn, mysql_serials(seg))
    dump = tmp_path / "after.sql"

    def backup() -> None:
        with open(dump, "w") as f:
            done = subprocess.run(
                [_binary("mariadb-dump"), "--no-defaults", "-uroot", f"--socket={server.socket}", "--single-transaction",
                 "--routines", "--databases", seg, dic],
                stdout=f, stderr=subprocess.PIPE, text=True, timeout=120,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def restored(url: str, options: list[str]) -> None:
        stdout, stderr, code = status_main(["restored", url, "--segments-schema", seg, "--dictionary-schema", dic, *options])
        assert code == 0, stderr
        assert "(--after:" in stdout, stdout

    def restore() -> None:
        server.sql(dump.read_text())

    said = after_given(
        server.url_for(seg),
        backup,
        restore,
        restored,
        schema=seg,
        dictionary_schema=dic,
        dictionary_url=server.url_for(dic),
    )
    print(f"\nmariadb-dump restored, restored --after: {said}")


def test_status_says_how_much_of_the_period_the_skip_used_and_when_it_runs_out(server: Any, conn: Any) -> None:
    """After a marked restore on MariaDB, ``shardid status`` says of a serial's current period
    how much of its numbers the restore's skip used and when the rest runs out at the rate its
    row recorded (issue 54; Django's shardid.W003 reads the same warnings), as on PostgreSQL."""
    from shardid.segments import Serials, create_serial

    seg = "rcw_seg"
    install(conn, segments(seg, dialect="mariadb"))
    install(conn, mysql_serials(seg))
    url = server.url_for(seg)
    fmt = "N-{yyyy}{MM}{dd}-{seq:4}"
    create_serial(url, "narrow", fmt, zone="UTC", schema=seg)
    with Serials(url, "narrow", fmt, zone="UTC", schema=seg, min_size=1, max_size=1) as s:
        s.next_serial()
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {seg}.shardid_tags SET rate = 200")  # what a busy day recorded
    _, stderr, code = status_main(["restored", url, "--segments-schema", seg])
    assert code == 0, stderr
    with Serials(url, "narrow", fmt, zone="UTC", schema=seg, min_size=1, max_size=1) as s:
        after = s.next_serial()
    stdout, stderr, code = status_main(["status", url, "--segments-schema", seg])
    assert code == 0, stderr
    period = after.split("-")[1]
    said = f"serial period narrow@{period[:4]}-{period[4:6]}-{period[6:]} has used "
    assert said in stdout and "at its recorded rate (200.0/s) the rest runs out at" in stdout, stdout
    print(f"\nafter the skip ({after}): {stdout[stdout.index(said):].splitlines()[0]}")


def _lease_scenario(server: Server, conn: Any, tmp_path: Path, db: str, *, marked: bool) -> str:
    """Issue 54's lease row on MariaDB: a ``mariadb-dump`` with the lease table but not shard
    0's row, a holder of shard 0 dating IDs 1.95 s ahead of the server's clock, the dump
    restored into the same server (marked, or seen by the table's origin: the dump recreates
    it) and a new holder of shard 0 at once: none of the lost holder's IDs again."""
    from shardid.mysql import lease

    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
    dump = tmp_path / f"{db}.sql"
    url = server.url_for(db)

    def backup() -> None:
        with open(dump, "w") as f:
            done = subprocess.run(
                [_binary("mariadb-dump"), "--no-defaults", "-uroot", f"--socket={server.socket}", "--single-transaction",
                 "--databases", db],
                stdout=f, stderr=subprocess.PIPE, text=True, timeout=120,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def restore() -> None:
        time.sleep(1.1)  # another creation second: the origin the unmarked case sees
        server.sql(dump.read_text())

    def mark(url: str) -> None:
        stdout, stderr, code = status_main(["restored", url])
        assert code == 0, stderr

    return lease_created_after_backup(
        lease, url, "shardid_leases", backup, restore, mark if marked else None, table_in_backup=True
    )


def test_a_lease_row_the_dump_lacks_marked(server: Any, conn: Any, tmp_path: Path) -> None:
    print(f"\nmariadb-dump restored, marked, a lease row it lacks: {_lease_scenario(server, conn, tmp_path, 'rcl_m', marked=True)}")


def test_a_lease_row_the_dump_lacks_seen_by_its_origin(server: Any, conn: Any, tmp_path: Path) -> None:
    print(f"\nmariadb-dump restored, not marked, a lease row it lacks: {_lease_scenario(server, conn, tmp_path, 'rcl_s', marked=False)}")


def test_a_first_claim_on_a_database_never_restored_is_not_delayed(server: Any, conn: Any) -> None:
    """The lease table's fence costs a database never restored nothing: a first claim (the
    table and its fence made) and a first claim of a shard the table lacks start at the clock."""
    from shardid.mysql import lease

    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE rcl_new")
    said = first_claims_not_delayed(lease, server.url_for("rcl_new"), "shardid_leases")
    print(f"\na fresh database's first claims: {said}")
