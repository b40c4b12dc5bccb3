"""No password is ever shown (issue 60, finding 6): every way a password is written in a
connection string, given to ``shardid status`` and ``shardid restored`` and to each client's
constructor and first call, with a server that cannot be reached. Everything the process
prints (stdout, stderr, tracebacks with their causes, repr()s, DEBUG logs) is searched for the
password, as written and as the driver reads it.

No server is needed: a closed port on 127.0.0.1, so every driver fails at connect time, where
drivers quote what they were given (libpq's "invalid percent-encoded token" quotes it)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import shardid

SCRIPT = str(Path(sys.executable).with_name("shardid"))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def forms(port: int) -> list[tuple[str, list[str]]]:
    """(URL, what must not be printed: the password as written, as read, and its pieces)."""
    return [
        # user information with '@' inside (shown before as alice:***@ss1x@)
        (f"postgresql://alice:Pq@ss1x@127.0.0.1:{port}/app", ["Pq@ss1x", "ss1x"]),
        # percent-encoded
        (f"postgresql://alice:Pw%40rd2z@127.0.0.1:{port}/app", ["Pw%40rd2z", "Pw@rd2z", "rd2z"]),
        # ?password=
        (f"postgresql://alice@127.0.0.1:{port}/app?password=Qu3ryPw", ["Qu3ryPw"]),
        # libpq's key = value
        (f"host=127.0.0.1 port={port} dbname=app user=alice password = C0nnInfoPw", ["C0nnInfoPw"]),
        # quoted (shown half before)
        (f"host=127.0.0.1 port={port} dbname=app user=alice password='Qu0ted Pw9'", ["Qu0ted", "Pw9"]),
        # an invalid percent-encoding, which libpq's error quotes
        (f"postgresql://alice:Bad%zzTok3@127.0.0.1:{port}/app", ["Bad%zzTok3", "zzTok3"]),
        # the MySQL family: '@' inside, and percent-encoded
        (f"mysql://root:My@Pw9x@127.0.0.1:{port}/app", ["My@Pw9x", "Pw9x"]),
        (f"mariadb://root:Ma%40Pw7y@127.0.0.1:{port}/app", ["Ma%40Pw7y", "Ma@Pw7y", "Pw7y"]),
    ]


# Each client made on URL and used once, in a child process: its repr, its error with the
# whole chain of causes (what an uncaught error prints), and DEBUG logs, all on stdout/stderr.
CLIENTS = r"""
import asyncio, logging, sys, traceback
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
from shardid import Layout, status
from shardid.segments import AsyncDenseIds, AsyncSerials, DenseIds, Serials, create_serial, create_tag
from shardid.dictionary import AsyncDictionary, Dictionary

url = sys.argv[1]
mysql = url.startswith(("mysql:", "mariadb:"))
if mysql:
    from shardid.mysql import lease, lease_async
else:
    from shardid.postgres import lease, lease_async
FORMAT, ZONE = "C-{yyyy}{MM}{dd}-{seq:6}", "UTC"


def dense():
    ids = DenseIds(url, "d", wait_ms=300)
    print(repr(ids), ids)
    ids.next_id()


def dictionary():
    d = Dictionary(url, "t")
    print(repr(d), d)
    d.id("a")


async def adictionary():
    d = AsyncDictionary(url, "t")
    print(repr(d), d)
    await d.id("a")


async def adense():
    ids = AsyncDenseIds(url, "d", wait_ms=300)
    print(repr(ids))
    await ids.next_id()


def held():
    l = lease(Layout.INSTAGRAM, url, range(0, 4))
    print(repr(l), l)


async def aheld():
    l = await lease_async(Layout.INSTAGRAM, url, range(0, 4))
    print(repr(l))


cases = {
    "status.read": lambda: status.read(url),
    "DenseIds": dense,
    "AsyncDenseIds": lambda: asyncio.run(adense()),
    "Serials": lambda: Serials(url, "c", FORMAT, zone=ZONE, wait_ms=300).next_serial(),
    "AsyncSerials": lambda: asyncio.run(AsyncSerials(url, "c", FORMAT, zone=ZONE).next_serial()),
    "create_tag": lambda: create_tag(url, "d"),
    "create_serial": lambda: create_serial(url, "c", FORMAT, zone=ZONE),
    "Dictionary": dictionary,
    "AsyncDictionary": lambda: asyncio.run(adictionary()),
    "lease": held,
    "lease_async": lambda: asyncio.run(aheld()),
}
for name, case in cases.items():
    try:
        case()
        print(name, "did not fail")
    except BaseException as e:
        print("case", name, type(e).__name__, repr(e), str(e), getattr(e, "reason", ""))
        traceback.print_exc()
"""


def test_no_password_form_is_printed_by_status_restored_or_any_client() -> None:
    port = closed_port()
    # Every process at once (each waits on its driver's refusals): seconds, not a minute.
    runs = []
    for url, secrets in forms(port):
        for command in ("status", "restored"):
            runs.append((url, secrets, command, [SCRIPT, command, url]))
        runs.append((url, secrets, "clients", [sys.executable, "-c", CLIENTS, url]))
    started = [(url, secrets, what, subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
               for url, secrets, what, args in runs]  # fmt: skip
    for url, secrets, what, process in started:
        stdout, stderr = process.communicate(timeout=90)
        if what == "clients":
            assert process.returncode == 0, (url, stdout, stderr)
            # Every client failed, with shardid's error (at connect time, as for a server that
            # is down, or refusing the URL at once), and its traceback was printed.
            failed = [line.split()[1:3] for line in stdout.splitlines() if line.startswith("case ")]
            assert len(failed) == 11 and stderr.count("Traceback") >= 11, (url, stdout, stderr)
            for name, error in failed:
                assert issubclass(getattr(shardid, error, type(None)), shardid.ShardIdError), (url, name, stdout)
        else:
            assert process.returncode == 2, (url, stdout, stderr)
            assert stderr.startswith(f"shardid: {what}: 127.0.0.1:{port}/app: "), stderr
        for secret in secrets:
            assert secret not in stdout + stderr, f"{url} ({what}): {secret!r} printed:\n{stdout}{stderr}"
