"""A throwaway Redis server for tests and benchmarks (the Redis backend, issue 57).

``Server()`` starts Debian's ``redis-server`` (``scripts/setup.sh`` installs it) on 127.0.0.1
only, on a free port, with its data directory and unix socket in a temporary directory, and
``stop()`` shuts it down and deletes everything. No configuration file: every setting is a
command-line flag, so a test says what it relies on (``appendonly``, ``appendfsync``,
``replicaof``...). ``kill()`` ends it by SIGKILL (a crash: what ``appendfsync everysec`` had not
written is lost) and ``start()`` starts it again on the same port and directory, so a test can
lose acknowledged writes on purpose. Usable from Python tests directly, and from the Rust and
Node tests by running ``python3 tests/redis/server.py`` (prints ``url`` then waits for stdin to
close).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binary(name: str) -> str:
    found = shutil.which(name) or next(
        (str(Path(d) / name) for d in ("/usr/bin", "/usr/sbin", "/usr/local/bin") if (Path(d) / name).exists()),
        None,
    )
    if found is None:
        raise RuntimeError(f"{name} not found: run scripts/setup.sh, which installs Debian's redis-server")
    return found


class Server:
    """A running throwaway Redis; ``url`` reaches it over TCP, ``unix_url`` over its socket."""

    def __init__(self, *flags: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="shardid-redis-"))
        self.port = _free_port()
        self.socket = self.root / "redis.sock"
        # No RDB snapshots unless a test asks (`--save ...` in flags): a test's writes are kept
        # or lost by the flags it gives, not by a snapshot taken by chance.
        self.flags = ["--save", "", *flags]
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> None:
        """Starts the server (again, after ``kill()`` or ``stop(keep=True)``) and waits until it
        answers PING, at most 10 s."""
        args = [
            _binary("redis-server"),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--unixsocket", str(self.socket),
            "--dir", str(self.root),
            "--daemonize", "no",
            "--logfile", str(self.root / "redis.log"),
            "--protected-mode", "no",
            *self.flags,
        ]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.cli("PING") == "PONG":
                    return
            except subprocess.CalledProcessError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.root / "redis.log").read_text(errors="replace") if (self.root / "redis.log").exists() else ""
                raise RuntimeError(f"redis-server did not start: {log[-2000:]}")
            time.sleep(0.02)

    def cli(self, *args: str) -> str:
        """One command by redis-cli over the socket: its reply as text."""
        done = subprocess.run(
            [_binary("redis-cli"), "-s", str(self.socket), *args],
            check=True, capture_output=True, text=True, timeout=10,
        )
        return done.stdout.strip()

    def kill(self) -> None:
        """SIGKILL, as a crash: what was not yet written to disk is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self, keep: bool = False) -> None:
        """Ends the server (SIGKILL: nothing is saved on the way out); removes its directory
        unless ``keep``."""
        self.kill()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


class Sentinel:
    """A throwaway ``redis-sentinel`` on 127.0.0.1 and a free port watching the primary on
    ``primary_port`` as ``master`` (quorum 1: it alone decides; down after 1 s), its
    configuration (which it rewrites) in a temporary directory. ``failover()`` promotes a
    replica (``SENTINEL FAILOVER``) and waits until the sentinel names it; ``promoted(port)``
    waits for the failover the primary's death starts."""

    def __init__(self, primary_port: int, master: str = "mymaster") -> None:
        self.root = Path(tempfile.mkdtemp(prefix="shardid-sentinel-"))
        self.port = _free_port()
        self.master = master
        conf = self.root / "sentinel.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\nprotected-mode no\ndir {self.root}\n"
            f"logfile {self.root / 'sentinel.log'}\n"
            f"sentinel monitor {master} 127.0.0.1 {primary_port} 1\n"
            f"sentinel down-after-milliseconds {master} 1000\n"
            f"sentinel failover-timeout {master} 5000\n"
        )
        self.process = subprocess.Popen([_binary("redis-sentinel"), str(conf)], stdin=subprocess.DEVNULL)
        self._until(lambda: self.cli("PING") == "PONG", "answer PING")

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.port}/{self.master}"

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [_binary("redis-cli"), "-p", str(self.port), *args], check=False, capture_output=True, text=True, timeout=10
        )
        return done.stdout.strip()

    def primary_port(self) -> int:
        """The port of the primary the sentinel names now."""
        return int(self.cli("SENTINEL", "get-master-addr-by-name", self.master).split()[-1])

    def _until(self, done: Any, what: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.root / "sentinel.log").read_text(errors="replace") if (self.root / "sentinel.log").exists() else ""
                raise RuntimeError(f"redis-sentinel did not {what} in {timeout} s: {log[-2000:]}")
            time.sleep(0.05)

    def failover(self, timeout: float = 15) -> int:
        """Promotes a replica of the primary (once the sentinel knows one) and waits until the
        sentinel names it; its port."""
        before = self.primary_port()
        self._until(lambda: "slave" in self.cli("SENTINEL", "replicas", self.master), "see a replica")
        self._until(lambda: self.cli("SENTINEL", "failover", self.master) == "OK", "start a failover")
        self._until(lambda: self.primary_port() != before, "promote a replica", timeout)
        return self.primary_port()

    def promoted(self, port: int, timeout: float = 20) -> None:
        """Waits until the sentinel names the server on ``port`` the primary (after the primary
        died: a second to see it down, then the election and the promotion)."""
        self._until(lambda: self.primary_port() == port, f"promote the replica on port {port}", timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Sentinel":
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


if __name__ == "__main__":
    # For tests in other languages: start one server with the flags given, print its URL, and
    # stop it when stdin closes (the test's end, or its death).
    server = Server(*sys.argv[1:])
    try:
        print(server.url, flush=True)
        sys.stdin.read()
    finally:
        server.stop()
        os._exit(0)
