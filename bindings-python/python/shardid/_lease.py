"""The database leases that :mod:`shardid.postgres`, :mod:`shardid.mysql` and
:mod:`shardid.sqlite` share, blocking (:class:`DatabaseLease`: the heartbeat a thread) and on an event loop
(:class:`AsyncDatabaseLease`: the heartbeat a task). Both are written once, for asyncio, in
``shardid._lease_public_async``; the blocking one is generated from it
(``shardid._lease_public_generated``, by ``bindings-python/tools/async_to_sync.py``). Both run
the core's lease protocol (``shardid::sql::LeaseProtocol``) through a session of
``shardid._lease_async`` (the blocking one generated from it, ``shardid._lease_generated``), in
the SQL of the database the entry point names; what differs between the databases' drivers is
the session's dialect object. Not for direct use.
"""

from __future__ import annotations

from shardid._lease_generated import DEFAULT_TTL_MS, check_url
from shardid._lease_public_async import AsyncDatabaseLease
from shardid._lease_public_generated import DatabaseLease

__all__ = ["DEFAULT_TTL_MS", "AsyncDatabaseLease", "DatabaseLease", "check_url"]
