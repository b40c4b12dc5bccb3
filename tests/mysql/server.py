"""A throwaway MariaDB server for tests and benchmarks.

``Server()`` makes a data directory with ``mariadb-install-db`` in a temporary directory (owned
by the ``mysql`` system user when run as root), starts ``mariadbd`` on 127.0.0.1 only with its
socket in the same directory, and ``stop()`` shuts it down and deletes everything. Debian's
``mariadb-server`` package provides the binaries (``scripts/setup.sh`` installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


_HANDED_OUT: set[int] = set()


def _free_port() -> int:
    """A loopback port nothing listens on now, and never one this process handed out before: a
    port bound and closed can come back from the next bind, and a Galera cluster asks for nine
    before its first node listens (a gcomm peer list once named one port twice: the node could
    not start)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def _binary(name: str) -> str:
    for directory in ("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"):
        if (Path(directory) / name).exists():
            return str(Path(directory) / name)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found: run scripts/setup.sh, which installs Debian's mariadb-server")
    return found


class Server:
    """A running throwaway MariaDB; ``url`` connects to it as root (no password),
    ``url_for(database)`` to a database of it."""

    def __init__(self, *flags: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="shardid-mariadb-"))
        self.data = self.root / "data"
        self.socket = self.root / "sock"
        self.port = _free_port()
        self.flags = list(flags)
        self.data.mkdir()
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "mysql:mysql", str(self.root)], check=True)
        done = subprocess.run(
            [
                _binary("mariadb-install-db"), "--no-defaults", "--user=mysql", f"--datadir={self.data}",
                "--auth-root-authentication-method=normal", "--skip-test-db",
            ],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            self.stop()
            raise RuntimeError(f"mariadb-install-db failed:\n{done.stdout}\n{done.stderr}")
        self.process: subprocess.Popen[bytes] | None = None
        self.start_server()
        self.url = f"mysql://root@127.0.0.1:{self.port}"

    def url_for(self, database: str, user: str = "root", password: str | None = None) -> str:
        from urllib.parse import quote

        auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password is not None else "")
        return f"mysql://{auth}@127.0.0.1:{self.port}/{database}"

    def start_server(self) -> None:
        """Starts the server on its port (after ``__init__``, ``stop_server`` or a crash)."""
        command = [
            _binary("mariadbd"), "--no-defaults", "--user=mysql", f"--datadir={self.data}",
            f"--socket={self.socket}", f"--port={self.port}", "--bind-address=127.0.0.1",
            f"--pid-file={self.root / 'pid'}", f"--log-error={self.root / 'err.log'}",
            "--innodb-buffer-pool-size=64M", "--skip-name-resolve",
            # A throwaway server: durability buys nothing, and the benchmarks compare
            # statements, not disks.
            "--innodb-flush-log-at-trx-commit=2", "--max-connections=300",
            *self.flags,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ping = subprocess.run(
                [_binary("mariadb-admin"), "--no-defaults", "-uroot", f"--socket={self.socket}", "ping"],
                capture_output=True,
            )
            if ping.returncode == 0:
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        log = (self.root / "err.log").read_text(errors="replace") if (self.root / "err.log").exists() else ""
        raise RuntimeError(f"MariaDB did not start:\n{log}")

    def stop_server(self) -> None:
        """Stops the server (SIGTERM, a clean shutdown), keeping its data."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)
        self.process = None

    def crash_and_restart(self) -> None:
        """Kills the server as a crash would (SIGKILL: InnoDB recovers from its log at the next
        start) and starts it again on the same port."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        self.start_server()

    def sql(self, script: str, database: str | None = None) -> str:
        """Runs a script with the ``mariadb`` command line (which reads ``DELIMITER``), as root
        over the socket; returns its output, raises with its errors."""
        command = [_binary("mariadb"), "--no-defaults", "-uroot", f"--socket={self.socket}", "--batch", "--skip-column-names"]
        if database:
            command.append(database)
        done = subprocess.run(command, input=script, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout

    def stop(self) -> None:
        try:
            self.stop_server()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
