"""A string ↔ ID dictionary on PostgreSQL, MySQL or MariaDB: a string and a topic in, that
string's ID out, the same one forever. IDs of a topic are dense, from 0, with no holes (rolled-back batches give
their numbers back).

Install the DDL once (``python -m shardid.sql --dictionary --schema dict | psql -1 -f -``, or
:func:`shardid.sql.dictionary`), create a topic, then::

    from shardid.dictionary import Dictionary

    urls = Dictionary("postgresql://app@db/app", "urls")
    urls.create()                         # once; idempotent
    urls.id("https://example.com/")       # 0, the same forever
    urls.ids(["/a", "/b", "/a"])          # [1, 2, 1]: one round trip, new strings numbered in order
    urls.lookup(["/a", "/nope"])          # [1, None]: never assigns
    urls.value(2), urls.values([0, 9])    # "/b", ["https://example.com/", None]

On an event loop (FastAPI, Starlette, Django's async views), :class:`AsyncDictionary` is the
same client over psycopg's ``AsyncConnection`` (aiomysql's on ``mysql://`` URLs): the same
calls, awaited (``await urls.id("/a")``), the same cache, rules and statements; a cached answer
never suspends the task, and ``urls.cache.id("/a")`` answers from the cache alone without an
``await``.

Answers are cached (both ways, at most ``cache_size`` each, recently used kept): a mapping never
changes, so a cached answer is never stale and a cached call never touches the database. The
strings of one call that the cache does not hold go to the server in one statement.

Rules (the core's, the same in every language): a topic is 1 to 200 bytes of UTF-8, a string 1
to 2048 bytes (PostgreSQL's ``text`` holds no NUL character, so neither may they), an ID 0 to
2**63 - 1, one call at most 100,000 strings. A bad one raises
:class:`~shardid.InvalidArgumentError` naming it (``values[3]``); an unknown topic
:class:`~shardid.UnknownTopicError`; a new string for a dropped topic
:class:`~shardid.TopicDroppedError`. A broken connection is reopened and the statement sent once
more (every statement is safe to repeat); a database that cannot be reached is
:class:`~shardid.DatabaseUnreachableError` (a :class:`ConnectionError`, the driver's error as its
``__cause__``); the database's own errors are the driver's (psycopg 3, psycopg2 or PyMySQL). After
:meth:`Dictionary.close`, every call raises :class:`~shardid.ClosedError`.

``conninfo`` may be a list: topics are then spread over the servers, each topic on the server
:func:`server_for` names (FNV-1a then jump consistent hash, as in every shardid package). The
list is part of the data: growing it moves some topics (about ``1/(n + 1)`` of them) to the new
server, with their strings to be moved by you.
"""

from __future__ import annotations

# Written once, for asyncio (_dictionary_public_async.py); the blocking Dictionary is generated
# from it (_dictionary_public_generated.py) by bindings-python/tools/async_to_sync.py, as are the
# steps and the connection under both (_dictionary_async.py, _dictionary_generated.py).
from shardid._dictionary_public_async import AsyncDictionary
from shardid._dictionary_public_generated import Dictionary
from shardid._shardid import DEFAULT_CACHE, MAX_BATCH, MAX_VALUE_LEN, server_for

__all__ = ["DEFAULT_CACHE", "MAX_BATCH", "MAX_VALUE_LEN", "AsyncDictionary", "Dictionary", "server_for"]
