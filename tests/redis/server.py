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
