"""The ``shardid`` console script and ``python -m shardid``, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import shardid
from shardid.sql import postgres

# The console script pip installed next to this interpreter.
SCRIPT = str(Path(sys.executable).with_name("shardid"))


def run(*args: str, stdin: str | None = None, module: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "shardid", *args] if module else [SCRIPT, *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, check=False)


def test_the_console_script_is_installed() -> None:
    assert os.access(SCRIPT, os.X_OK)
    assert run("--version").stdout == f"shardid {shardid.__version__}\n"


@pytest.mark.parametrize("module", [False, True], ids=["script", "python -m"])
def test_decode_prints_what_the_library_decodes(module: bool) -> None:
    id_ = shardid.Layout.INSTAGRAM.compose(1_387_263_000_000, 1341, 7)
    done = run("decode", str(id_), module=module)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{id_}  2013-12-17T06:50:00.000Z  shard 1341  sequence 7\n"
    done = run("decode", "--json", "--layout", "twitter", str(id_), module=module)
    parts = shardid.Layout.TWITTER.decode(id_)
    assert json.loads(done.stdout) == {
        "id": str(id_),
        "timestamp_ms": parts.timestamp_ms,
        "time": done.stdout.split('"time":"')[1].split('"')[0],
        "shard": parts.shard,
        "sequence": parts.sequence,
    }


def test_decode_reads_stdin_and_reports_bad_ids_with_status_1() -> None:
    good = shardid.Generator(layout=shardid.Layout.INSTAGRAM, shard=3).next_id()
    done = run("decode", stdin=f"{good}\nnot-an-id\n")
    assert done.returncode == 1
    assert done.stdout.startswith(f"{good}  ") and done.stdout.endswith("shard 3  sequence 0\n")
    assert done.stderr == "shardid: not-an-id: not a decimal integer in 0..2^64\n"


def test_bounds_match_the_library() -> None:
    done = run("bounds", "1700000000000", "1700000060000")
    layout = shardid.Layout.INSTAGRAM
    assert done.stdout == f"{layout.min_id_at(1_700_000_000_000)} {layout.max_id_at(1_700_000_060_000)}\n"


def test_sql_is_the_libraries_ddl() -> None:
    done = run("sql", "--schema", "insta5", "--layout", "instagram", "--shard", "5")
    assert done.returncode == 0
    assert done.stdout == postgres(shardid.Layout.INSTAGRAM, shard=5, schema="insta5")


def test_new_makes_ids_of_its_shard() -> None:
    done = run("new", "--shard", "9", "-n", "3")
    ids = [int(line) for line in done.stdout.split()]
    assert len(ids) == 3 and ids == sorted(set(ids))
    assert {shardid.Layout.INSTAGRAM.decode(i).shard for i in ids} == {9}


def test_usage_errors_exit_2_and_say_why() -> None:
    done = run("decode", "--layout", "nope", "5")
    assert done.returncode == 2
    assert "is not a preset" in done.stderr
    assert run().returncode == 2
    assert run("layout", "--json", "sonyflake").returncode == 0


@pytest.mark.parametrize("module", [False, True], ids=["script", "python -m"])
def test_public_ids_as_the_library_makes_them(tmp_path: Path, module: bool) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"0123456789abcdef")
    key.chmod(0o600)
    ids = shardid.PublicIds(b"0123456789abcdef", "note", "base62")
    made = [5, 4036916263258161152]
    done = run("public", "encode", "--key-file", str(key), "--prefix", "note", "--encoding", "base62", *map(str, made), module=module)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split() == [ids.encode(i) for i in made]
    # A key file others may read is used, with a warning (as ssh warns of a private key).
    key.chmod(0o644)
    warned = run("public", "encode", "--key-file", str(key), "--prefix", "note", "--encoding", "base62", *map(str, made), module=module)
    assert (warned.returncode, warned.stdout) == (0, done.stdout)
    assert warned.stderr.startswith(f"shardid: warning: --key-file \"{key}\" may be read or written by others (mode 0644)")
    key.chmod(0o600)
    # No end of bytes (/dev/zero): refused at once, naming the forms of a key file.
    zero = run("public", "encode", "--key-file", "/dev/zero", "5", module=module)
    assert zero.returncode == 2 and "holds more than 4096 bytes, not a key file" in zero.stderr
    # Values from stdin; a refused one is reported and the others still printed.
    done = run("public", "decode", "--key-file", str(key), "--prefix", "note", "--encoding", "base62", stdin=f"{done.stdout}user_0\n", module=module)
    assert done.returncode == 1
    assert done.stdout.split() == [str(i) for i in made]
    assert "user_0" in done.stderr and "0123456789abcdef" not in done.stderr


def test_status_usage_errors_are_exit_2_and_say_why() -> None:
    for args, why in [
        (("status",), "status takes one database URL"),
        (("status", "postgresql://h/d", "--shard", "3"), "--shard does not apply here"),
        (("status", "postgresql://h/d", "--schema", "Bad-Name"), "invalid schema name"),
        (("status", "postgresql://h/d", "--table", "x;drop"), "invalid table name"),
        (("status", "redis://h"), '"redis" is not a database URL'),
    ]:
        done = run(*args)
        assert (done.returncode, done.stdout) == (2, ""), done
        assert done.stderr.startswith("shardid: ") and why in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_status_of_a_server_that_is_down_is_exit_2_naming_it() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run("status", f"postgresql://app:secret@127.0.0.1:{port}/app")
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith(f"shardid: status: 127.0.0.1:{port}/app: ")
    assert "refused" in done.stderr.lower() and "secret" not in done.stderr and done.stderr.count("\n") == 1


def test_status_read_refuses_a_url_of_another_scheme_by_the_cores_rule() -> None:
    import pytest

    import shardid
    from shardid import status

    for url, why in [("redis://h", '"redis" is not a database URL'), ("nonsense", "not a database URL")]:
        with pytest.raises(shardid.InvalidArgumentError) as refused:
            status.read(url)
        assert refused.value.argument == "database" and why in str(refused.value)
