"""Dense IDs on Redis 7 or Valkey (issue 57) over redis-py (``pip install shardid[redis]``):
the executor of the core's steps (``_RedisSegments``, native: ``shardid::redis::RedisSegments``,
its Lua scripts, keys and the reading of their replies). :class:`~shardid.segments.DenseIds`
and :class:`~shardid.segments.AsyncDenseIds` run it as any database's dialect object (the
driver in ``_segments_async.py`` picks it for a ``redis://``, ``rediss://`` or ``unix://`` URL);
this module only opens the connection, reads the server's ``run_id``, sends ``EVALSHA`` (``EVAL``
on ``NOSCRIPT``) and feeds the reply back. Nothing about the numbers is decided here.

A connection is redis-py's ``Redis`` on one connection with no retries: redis-py's default
retries a command on a new connection after an error, perhaps on a server that restarted
meanwhile, with the identity read before (a take would then skip nothing past the writes the
restart lost). Here an error gives the connection up, and the core reads the identity again
before its next operation (``RedisSegments::failed``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from shardid import _mysql
from shardid._errors import DatabaseUnreachableError, InvalidArgumentError, UnsupportedError
from shardid._shardid import _error, _is_redis_url, _redis_sentinel_url, _RedisSegments

__all__ = ["create_tag_from", "is_redis_url"]

# The prefix of the keys when none is given (``shardid:tag:{orders}``): the Rust client's
# convention.
DEFAULT_PREFIX = "shardid"
# Connecting and each reply: a server that does not answer is unreachable, not a wait without end.
TIMEOUT_S = 5.0


def is_redis_url(url: Any) -> bool:
    """Whether ``url`` names a Redis server, by the core's rule."""
    return isinstance(url, str) and _is_redis_url(url)


def _redis() -> Any:
    try:
        import redis
    except ImportError as e:  # pragma: no cover - the extra is missing
        reason = "Redis URLs need redis-py: pip install shardid[redis]"
        raise UnsupportedError(f"unsupported: {reason}", reason=reason) from e
    return redis


def check_url(url: str, argument: str = "conninfo") -> None:
    """``INVALID_ARGUMENT`` now for a Redis URL this client cannot use (not at the first fetch)."""
    if url.startswith("redis+sentinel://"):
        _redis_sentinel_url(url, argument)  # INVALID_ARGUMENT now
        return
    try:
        _redis().connection.parse_url(url)
    except ValueError as e:
        reason = f"is not a Redis URL redis-py reads: {e}"
        raise InvalidArgumentError(f"{argument} {reason}", argument=argument, reason=reason) from e


def _options(redis: Any, retry: Any) -> dict[str, Any]:
    return {
        "single_connection_client": True,
        "retry": retry(redis.backoff.NoBackoff(), 0),
        "retry_on_error": [],
        "socket_timeout": TIMEOUT_S,
        "socket_connect_timeout": TIMEOUT_S,
        "health_check_interval": 0,
    }


def _primary(url: str) -> tuple[dict[str, Any], Any]:
    """Where to connect for ``url``: ``(keywords of redis-py's Redis, None)``, or for a Sentinel
    URL ``(keywords but the address, (sentinels, master))``: the primary the sentinels name is
    asked at each connection, so a connection opened again after a failover reaches the
    promoted replica."""
    if not url.startswith("redis+sentinel://"):
        return {"url": url}, None
    sentinels, master, db, username, password = _redis_sentinel_url(url, "conninfo")
    return {"db": db, "username": username, "password": password}, (sentinels, master)


class _Conn:
    """One connection and the ``run_id`` of the server it reached."""

    def __init__(self, client: Any, run_id: str) -> None:
        self.client = client
        self.run_id = run_id
        self.open = True


class _Common:
    """What the blocking and the asyncio dialect objects share: the names the driver asks, the
    errors' rules, the core's refusals."""

    name = "redis"

    def __init__(self, schema: str, tag: str) -> None:
        from shardid._segments_async import check_names

        check_names(tag, "seg")  # INVALID_ARGUMENT for a bad tag, as on every database
        self.schema = schema
        self._protocol = _RedisSegments(schema)  # INVALID_ARGUMENT for a bad prefix now
        # The connection whose server's run_id the core was given last (see ``_check``).
        self._identified: _Conn | None = None

    def protocol(self) -> Any:
        """The core's steps the allocator's driver runs."""
        return _RedisSegments(self.schema)

    @staticmethod
    def errors() -> tuple[type[BaseException], ...]:
        return (_redis().exceptions.RedisError, OSError)

    def server(self, conn: _Conn) -> str:
        self._identified = conn
        return conn.run_id

    def _check(self, conn: _Conn) -> None:
        """A script is sent only on the connection whose server's run_id the core was given: a
        step made with the run_id of the server before a reconnection, sent to the server after
        it, would find that identity on the tag and skip nothing past the writes a restart lost.
        It fails instead, and the core reads the identity again before its next operation."""
        if conn is not self._identified:
            raise _redis().exceptions.ConnectionError(
                "the connection to the Redis server was opened again since its run_id was read: read it again"
            )

    @staticmethod
    def code(e: BaseException) -> str | None:
        return None

    @staticmethod
    def unreachable(e: BaseException) -> bool:
        """Whether ``e`` says the server cannot be reached (refused, timed out, gone, or not a
        primary: a replica refuses writes, a loading server answers ``LOADING``)."""
        exceptions = _redis().exceptions
        if isinstance(e, (exceptions.ConnectionError, exceptions.TimeoutError, OSError)):
            return True
        return isinstance(e, exceptions.ResponseError) and str(e).startswith(("READONLY", "LOADING", "MASTERDOWN"))

    @classmethod
    def lost(cls, e: BaseException) -> bool:
        return True

    @classmethod
    def gives_up(cls, e: BaseException) -> bool:
        """Every error gives the connection up: the next use opens another and reads its
        server's identity (see the module)."""
        return True

    @staticmethod
    def is_open(conn: _Conn) -> bool:
        return conn.open

    @staticmethod
    def refused(refusal: tuple[str, str, str], tag: str) -> BaseException:
        """The core's refusal of a reply, with the SQLSTATE the SQL databases' protocol gives the
        same case (an unknown tag: ``UNKNOWN_TAG`` naming ``create_tag``)."""
        code, sqlstate, reason = refusal
        if code == "INVALID_ARGUMENT":
            return InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        return _mysql.ServerError(sqlstate, f"no segment of tag {tag!r}: {reason}")

    @staticmethod
    def _sha(script: str) -> str:
        return hashlib.sha1(script.encode()).hexdigest()

    def _created(self, step: Any, tag: str) -> int:
        if step[0] == "created":
            return int(step[1][1])
        raise self.refused(step[1], tag) if step[0] == "failed" and step[1] else _error(
            "DATABASE", reason=f"creating tag {tag} ended with {step!r}"
        )


class _Redis(_Common):
    """The blocking dialect object of Redis (``DenseIds``, ``create_tag``)."""

    @staticmethod
    def connect(url: str) -> _Conn:
        redis = _redis()
        where, sentinel = _primary(url)
        options = _options(redis, redis.retry.Retry)
        if sentinel is None:
            client = redis.Redis.from_url(where.pop("url"), **options)
        else:
            import redis.sentinel

            sentinels, master = sentinel
            asked = redis.sentinel.Sentinel(sentinels, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
            host, port = asked.discover_master(master)
            for sentinel_client in asked.sentinels:
                sentinel_client.close()
            client = redis.Redis(host=host, port=port, **where, **options)
        try:
            run_id = client.info("server")["run_id"]
        except BaseException:
            client.close()
            raise
        return _Conn(client, str(run_id))

    @staticmethod
    def close(conn: _Conn) -> None:
        conn.open = False
        try:
            conn.client.close()
        except Exception:  # noqa: BLE001 - a connection already gone
            pass

    def row(self, conn: _Conn, script: str, values: tuple[Any, ...]) -> Any:
        """``EVALSHA`` of ``script`` with ``values`` (the number of keys, the keys, the
        arguments), ``EVAL`` on ``NOSCRIPT``; its reply."""
        self._check(conn)
        try:
            return conn.client.evalsha(self._sha(script), *values)
        except _redis().exceptions.NoScriptError:
            return conn.client.eval(script, *values)

    def _run(self, conn: _Conn, start: Any) -> Any:
        protocol = self.protocol()
        start(protocol)
        error: BaseException | None = None
        while True:
            step = protocol.next()
            if step[0] == "connect":
                protocol.connected(self.server(conn))
            elif step[0] == "run":
                try:
                    protocol.answer(self.row(conn, step[2], step[3]))
                except self.errors() as e:
                    error = e
                    protocol.failed()
            elif step[0] == "failed" and step[1] is None:
                assert error is not None
                raise error
            else:
                return step

    def create_tag(self, conn: _Conn, tag: str, first: int = 1, explicit: bool = False) -> int:
        """Creates ``tag`` (see :func:`create_tag_from`); where its numbers continue."""
        return self._created(self._run(conn, lambda p: p.create_tag(tag, first, explicit)), tag)


class _AsyncRedis(_Common):
    """The asyncio dialect object of Redis (``AsyncDenseIds``), over ``redis.asyncio``."""

    @staticmethod
    async def connect(url: str) -> _Conn:
        redis = _redis()
        import redis.asyncio
        import redis.asyncio.retry

        where, sentinel = _primary(url)
        options = _options(redis, redis.asyncio.retry.Retry)
        if sentinel is None:
            client = redis.asyncio.Redis.from_url(where.pop("url"), **options)
        else:
            import redis.asyncio.sentinel

            sentinels, master = sentinel
            asked = redis.asyncio.sentinel.Sentinel(sentinels, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
            host, port = await asked.discover_master(master)
            for sentinel_client in asked.sentinels:
                await sentinel_client.aclose()
            client = redis.asyncio.Redis(host=host, port=port, **where, **options)
        try:
            run_id = (await client.info("server"))["run_id"]
        except BaseException:
            await client.aclose()
            raise
        return _Conn(client, str(run_id))

    @staticmethod
    async def close(conn: _Conn) -> None:
        conn.open = False
        try:
            await conn.client.aclose()
        except Exception:  # noqa: BLE001 - a connection already gone
            pass

    async def row(self, conn: _Conn, script: str, values: tuple[Any, ...]) -> Any:
        self._check(conn)
        try:
            return await conn.client.evalsha(self._sha(script), *values)
        except _redis().exceptions.NoScriptError:
            return await conn.client.eval(script, *values)


def dialect(servers: list[str], schema: str | None, tag: str, *, asyncio: bool) -> tuple[Any, list[str], str]:
    """The dialect object of Redis for ``DenseIds``' driver: one server (no ticket servers on
    Redis yet), ``schema`` the keys' prefix (``shardid`` by default)."""
    if len(servers) != 1:
        reason = "must be one Redis URL: ticket servers across several Redis servers are not supported yet"
        raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
    check_url(servers[0])
    prefix = DEFAULT_PREFIX if schema is None else schema
    steps = _AsyncRedis(prefix, tag) if asyncio else _Redis(prefix, tag)
    return steps, servers, prefix


def create_tag_from(url: str, tag: str, first: int, *, schema: str | None = None) -> int:
    """Creates the tag of dense IDs ``tag`` from ``first`` on the Redis server at ``url`` (past
    the server's fence after a step back), also on a server that holds no shardid data: 1 on a
    new server, past the last number handed out on one that lost its data (``create_tag`` refuses
    such a server, so that a deploy script creating its tags at every start never hands numbers
    out again after an empty restart). A tag already there is left as it is. Returns where its
    numbers continue.

    Raises ``InvalidArgumentError`` for a bad tag, URL, prefix or ``first``,
    ``DatabaseUnreachableError`` when the server cannot be reached."""
    if not is_redis_url(url):
        reason = "must be a Redis URL (redis://, rediss:// or unix://): create_tag_from is Redis's"
        raise InvalidArgumentError(f"url {reason}", argument="url", reason=reason)
    if not isinstance(first, int) or isinstance(first, bool) or not 1 <= first < 2**53:
        reason = "must be an int from 1 to 2**53 - 1"
        raise InvalidArgumentError(f"first {reason}", argument="first", reason=reason)
    steps, _, _ = dialect([url], schema, tag, asyncio=False)
    return _create(steps, url, tag, first, explicit=True)


def create_tag(url: str, tag: str, schema: str | None) -> None:
    """``shardid.segments.create_tag`` on a Redis URL: from 1, only on a server that holds
    shardid's marks (the core's refusal names ``create_tag_from``)."""
    steps, _, _ = dialect([url], schema, tag, asyncio=False)
    _create(steps, url, tag, 1, explicit=False)


def _create(steps: _Redis, url: str, tag: str, first: int, *, explicit: bool) -> int:
    try:
        conn = steps.connect(url)
    except steps.errors() as e:
        if steps.unreachable(e):
            raise _unreachable(e) from e
        raise
    try:
        return steps.create_tag(conn, tag, first, explicit)
    except steps.errors() as e:
        if steps.unreachable(e):
            raise _unreachable(e) from e
        raise
    finally:
        steps.close(conn)


def _unreachable(e: BaseException) -> BaseException:
    from shardid import _db

    error = _db.unreachable_error(e)
    return error if isinstance(error, DatabaseUnreachableError) else e
