"""A throwaway 3-node MariaDB Galera cluster on loopback ports, for tests.

``Galera()`` makes three data directories (``server.Server``: ``mariadb-install-db`` each, so
a joining node takes the first's state by rsync, ``wsrep_sst_method=rsync``), starts the first node as a new cluster and the other two joining
it, and waits until all three are synced. ``kill(i)`` SIGKILLs a node; ``stop()`` removes
everything. Debian's ``galera-4`` (installed with ``mariadb-server``) is the provider.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from server import Server, _free_port

PROVIDER = "/usr/lib/galera/libgalera_smm.so"


def available() -> bool:
    return Path(PROVIDER).exists()


class Galera:
    def __init__(self, nodes: int = 3) -> None:
        gcomm = [_free_port() for _ in range(nodes)]
        ist = [_free_port() for _ in range(nodes)]
        sst = [_free_port() for _ in range(nodes)]
        address = "gcomm://" + ",".join(f"127.0.0.1:{p}" for p in gcomm)
        self.nodes: list[Server] = []
        try:
            for i in range(nodes):
                flags = [
                    "--wsrep-on=ON", f"--wsrep-provider={PROVIDER}", "--wsrep-cluster-name=shardid_test",
                    f"--wsrep-cluster-address={'gcomm://' if i == 0 else address}",
                    f"--wsrep-node-address=127.0.0.1:{gcomm[i]}", f"--wsrep-node-name=node{i}",
                    f"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{gcomm[i]};ist.recv_addr=127.0.0.1:{ist[i]};gcache.size=32M;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.inactive_check_period=PT0.5S",
                    "--wsrep-sst-method=rsync", f"--wsrep-sst-receive-address=127.0.0.1:{sst[i]}", "--binlog-format=ROW", "--innodb-autoinc-lock-mode=2",
                    "--default-storage-engine=InnoDB",
                ]  # fmt: skip
                self.nodes.append(Server(*flags))
                self.wait_synced(i)
        except BaseException:
            self.stop()
            raise

    def status(self, i: int, variable: str) -> str:
        out = self.nodes[i].sql(f"SHOW STATUS LIKE '{variable}'")
        return out.split("\t")[1].strip() if "\t" in out else ""

    def wait_synced(self, i: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.status(i, "wsrep_local_state_comment") == "Synced" and self.status(i, "wsrep_ready") == "ON":
                    return
            except (RuntimeError, subprocess.SubprocessError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"Galera node {i} did not sync:\n{(self.nodes[i].root / 'err.log').read_text(errors='replace')[-3000:]}")

    def size(self, i: int) -> int:
        return int(self.status(i, "wsrep_cluster_size") or 0)

    def kill(self, i: int) -> None:
        """SIGKILLs node ``i``: the others see it gone and go on as a cluster of the rest."""
        process: Any = self.nodes[i].process
        if process is not None:
            process.kill()
            process.wait()
        self.nodes[i].process = None

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()

    def __enter__(self) -> Galera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
