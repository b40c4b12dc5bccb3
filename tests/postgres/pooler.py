"""A throwaway PgBouncer in front of the throwaway cluster, as most production PostgreSQL is
reached: Debian's ``pgbouncer`` on 127.0.0.1, one process serving two pools of each database
it is given — ``<db>_tx`` in transaction mode (PgBouncer's, Supavisor's port 6543, Neon's
pooled endpoint, RDS Proxy) and ``<db>_session`` in session mode, with ``tx`` and ``session``
for the cluster's ``postgres`` database — 3 server connections for each transaction pool,
which the clients share, and 12 for each session pool. ``stop()`` ends it. ``scripts/setup.sh`` installs the package.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

POOL_SIZE = 3
# In session mode a client keeps its server connection until it disconnects: enough for the
# tests' clients to run at once.
SESSION_POOL_SIZE = 12


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Pooler:
    """A running PgBouncer; :meth:`dsn` connects to one of its pools."""

    def __init__(self, server_port: int, databases: tuple[str, ...] = ()) -> None:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(binary).exists():
            raise RuntimeError("pgbouncer not found: run scripts/setup.sh, which installs Debian's pgbouncer")
        self.root = Path(tempfile.mkdtemp(prefix="shardid-pgbouncer-"))
        self.port = _free_port()
        pools = {"tx": ("postgres", "transaction"), "session": ("postgres", "session")}
        for db in databases:
            pools.update({f"{db}_tx": (db, "transaction"), f"{db}_session": (db, "session")})
        (self.root / "users.txt").write_text('"postgres" ""\n')
        (self.root / "pgbouncer.ini").write_text(
            "[databases]\n"
            + "".join(
                f"{name} = host=127.0.0.1 port={server_port} dbname={db} user=postgres "
                f"pool_mode={mode} pool_size={POOL_SIZE if mode == 'transaction' else SESSION_POOL_SIZE}\n"
                for name, (db, mode) in pools.items()
            )
            + "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self.root / 'users.txt'}\n"
            "max_client_conn = 500\n"
            # psycopg and Django send these at start-up; PgBouncer refuses unknown ones.
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.root / 'pgbouncer.log'}\n"
            f"pidfile = {self.root / 'pgbouncer.pid'}\n"
            # Keep server connections (and whatever session state a client left on them)
            # for the whole run, as a busy production pooler does.
            "server_idle_timeout = 3600\n"
            "server_lifetime = 3600\n"
        )
        command = [binary, "-d", str(self.root / "pgbouncer.ini")]
        if os.geteuid() == 0:  # pgbouncer refuses to run as root
            subprocess.run(["chown", "-R", "postgres:", str(self.root)], check=True)
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    log = (self.root / "pgbouncer.log").read_text(errors="replace")
                    self.stop()
                    raise RuntimeError(f"PgBouncer did not start:\n{log}") from None
                time.sleep(0.05)

    def dsn(self, pool: str) -> str:
        """A libpq connection string to the pool ``pool`` (``tx``, ``session``, ``<db>_tx``,
        ``<db>_session``)."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={pool}"

    def url(self, pool: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{pool}"

    def stop(self) -> None:
        pidfile = self.root / "pgbouncer.pid"
        if pidfile.exists():
            try:
                pid = int(pidfile.read_text().strip())
                os.kill(pid, 15)
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    os.kill(pid, 0)
                    time.sleep(0.05)
            except (ValueError, ProcessLookupError):
                pass
        shutil.rmtree(self.root, ignore_errors=True)
