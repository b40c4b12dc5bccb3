"""A throwaway PostgreSQL cluster for tests and benchmarks.

``Cluster()`` runs ``initdb`` into a temporary directory (as the ``postgres`` system user when
run as root: ``initdb`` refuses root), starts the server on 127.0.0.1 only with its socket in
the same directory, and ``stop()`` shuts it down and deletes everything. The server binaries
come from ``pg_config --bindir`` or Debian's ``/usr/lib/postgresql/<version>/bin``;
``scripts/setup.sh`` installs the ``postgresql`` package when neither is there.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def bindir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``pgbench``."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.insert(0, out.stdout.strip())
    for candidate in candidates:
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: run scripts/setup.sh, "
        "which installs Debian's postgresql package"
    )


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A running throwaway cluster; ``dsn`` connects to its ``postgres`` database."""

    # The directory its temporary directory is made in (None: the system's default).
    parent: str | None = None

    def __init__(self, **settings: str) -> None:
        self.bin = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="shardid-pg-", dir=self.parent))
        self.port = _free_port()
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            subprocess.run(["chown", "postgres:", str(self.root)], check=True)
        self._initdb()
        self._start("PostgreSQL", **settings)

    def _start(self, what: str, **settings: str) -> None:
        """Starts the server on its data directory with a throwaway cluster's options and
        `settings`; on failure, stops it and raises with its log, naming it `what`."""
        options = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            # A throwaway cluster: durability buys nothing, and the benchmarks compare
            # functions, not disks.
            "fsync": "off",
            "full_page_writes": "off",
            "max_connections": "50",
            **settings,
        }
        self._flags = " ".join(f"-c {k}={v}" for k, v in options.items())
        try:
            self.start_server()
        except subprocess.CalledProcessError:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            self.stop()
            raise RuntimeError(f"{what} did not start:\n{log}") from None
        self.dsn = f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def _initdb(self) -> None:
        """Makes the cluster's data directory (tests/postgres/failover.py copies one instead)."""
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "--no-sync", "-E", "UTF8", "--locale", "C",
        )  # fmt: skip

    # Variables set for the server's programs (``pg_ctl`` and the server it starts): e.g.
    # libfaketime's, to run a server whose clock is behind (tests/postgres/failover.py).
    env: dict[str, str] = {}

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / program), *args]
        if self.env:
            command = ["env", *(f"{k}={v}" for k, v in self.env.items()), *command]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True, cwd=self.root)

    def _base_backup(self, primary: Cluster, prefix: str, *flags: str, dir: str | None = None) -> None:  # noqa: A002 (tempfile's name)
        """Makes this cluster a base backup of `primary` (``pg_basebackup`` with `flags`), in a
        new directory (`prefix`, in `dir`) with a free port, not started: a standby, or a
        copy to recover to a point in time. Instead of ``__init__``'s initdb."""
        self.bin = primary.bin
        self.root = Path(tempfile.mkdtemp(prefix=prefix, dir=dir))
        self.port = _free_port()
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            subprocess.run(["chown", "postgres:", str(self.root)], check=True)
        self._run(
            "pg_basebackup", "-D", str(self.data), "-h", "127.0.0.1", "-p", str(primary.port),
            "-U", "postgres", *flags, "-X", "stream", "-c", "fast", "--no-sync",
        )  # fmt: skip

    def crash_and_restart(self) -> None:
        """Kills the server as a crash would (``pg_ctl stop -m immediate``: no checkpoint, WAL
        replayed at the next start) and starts it again on the same port."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self._run("pg_ctl", "-D", str(self.data), "-o", self._flags, "-l", str(self.root / "log"), "-w", "start")

    def stop_server(self) -> None:
        """Stops the server (``-m fast``), keeping its data, to test clients against a database
        that is down; :meth:`start_server` starts it again on the same port."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_server(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-o", self._flags, "-l", str(self.root / "log"), "-w", "start")

    def pgbench(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Runs ``pgbench`` against the cluster (not checked: the caller reads the result)."""
        command = [str(self.bin / "pgbench"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", *args]
        return subprocess.run(command, capture_output=True, text=True)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
