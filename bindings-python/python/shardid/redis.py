"""Shard leases through a Redis 7 or Valkey server (``pip install shardid[redis]``: redis-py),
as :mod:`shardid.postgres`, :mod:`shardid.mysql` and :mod:`shardid.sqlite` lease through their
databases. Dense IDs on Redis are :mod:`shardid.segments`' (a ``redis://`` URL)::

    from shardid import Layout
    from shardid.redis import lease

    with lease(Layout.INSTAGRAM, "redis://127.0.0.1:6379", range(1024)) as ids:
        ids.next_id()

On an event loop, ``lease_async`` takes the same lease over ``redis.asyncio`` (the heartbeat an
asyncio task)::

    async with lease_async(Layout.INSTAGRAM, "redis://127.0.0.1:6379", range(1024)) as ids:
        await ids.next_id()
"""

from shardid._redis_lease import RedisLease, lease
from shardid._redis_lease_async import AsyncRedisLease, lease_async

__all__ = ["AsyncRedisLease", "RedisLease", "lease", "lease_async"]
