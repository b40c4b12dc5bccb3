"""The string <-> ID dictionary (:mod:`shardid.dictionary`) on Django's own connections:
PostgreSQL, MySQL, MariaDB and SQLite (the tables in the file itself, schema ``main``)."""

from __future__ import annotations

import threading
from typing import Any

from shardid.dictionary import DEFAULT_CACHE, Dictionary
from shardid.django.leases import per_process

__all__ = ["dictionary"]


class _DjangoDictionary(Dictionary):
    """A :class:`~shardid.dictionary.Dictionary` whose statements run on Django's connection
    for ``using`` (the thread's own, in its transaction): the same steps, of the dialect of
    Django's database (its vendor)."""

    def __init__(self, topic: str, *, schema: str, using: str, cache_size: int) -> None:
        from django.db import connections

        from shardid import _dictionary_generated, _sqlite

        # No connection string: the statements run on Django's connection.
        vendor = connections[using].vendor
        if vendor == "sqlite":
            schema = "main"  # Django's connection attaches no other database
        self._start(topic, schema, cache_size)
        self._lock = threading.Lock()
        self.using = using
        self.servers: list[str] = []
        self.server = 0
        self.conninfo = ""
        dialect: Any
        if vendor == "sqlite":
            # The steps themselves (no thread): Django's connection is the thread's own.
            dialect = _sqlite.Dictionary(schema, topic)
        elif vendor == "mysql":  # MySQL and MariaDB
            dialect = _dictionary_generated._Mysql(schema, topic)
        else:
            dialect = _dictionary_generated._Postgres(schema, topic)
        self._connection = _DjangoConnection(using, dialect, vendor)

    def _committed(self, strings: list[Any], ids: list[Any]) -> bool:
        # Inside transaction.atomic() the answers may be this transaction's own new strings,
        # which a rollback undoes: cache them when it commits, never before.
        from django.db import connections, transaction

        if not connections[self.using].in_atomic_block:
            return True
        pairs = [(s, i) for s, i in zip(strings, ids) if s is not None and i is not None]
        keep = ([s for s, _ in pairs], [i for _, i in pairs])
        transaction.on_commit(lambda: self.cache.remember_ids(*keep), using=self.using)
        return False

    def close(self) -> None:
        """Nothing to close: the connection is Django's."""

    def __repr__(self) -> str:
        return f"dictionary(topic={self.topic!r}, schema={self.schema!r}, using={self.using!r}, cached={len(self.cache)})"


class _DjangoConnection:
    """Django's connection ``using`` as the one the dialect's steps run on (as
    ``shardid._dictionary_generated._Connection`` does for a URL): Django opens it, and reports what
    breaks it."""

    def __init__(self, using: str, dialect: Any, vendor: str) -> None:
        self.using = using
        self.dialect = dialect
        self._vendor = vendor

    def run(self, step: str, *args: Any) -> Any:
        import sqlite3

        from django.db import DatabaseError, connections

        from shardid import _dictionary_generated, _mysql, _sqlite

        conn: Any
        if self._vendor == "sqlite":
            # Django's sqlite3 connection itself: autocommit outside atomic() (the steps then
            # begin their own BEGIN IMMEDIATE), a savepoint of the caller's transaction inside.
            connection = connections[self.using]
            connection.ensure_connection()
            conn = connection.connection
        elif self._vendor == "mysql":
            conn = _DjangoMysql(self.using)
        else:
            conn = connections[self.using]
        try:
            return getattr(self.dialect, step)(conn, *args)
        except (DatabaseError, _mysql.ServerError, sqlite3.Error, _sqlite.StatementError) as e:
            raise _dictionary_generated.translate(e.__cause__ or e, self.dialect.topic) from e

    def close(self) -> None:
        """Nothing to close: the connection is Django's."""


class _DjangoMysql:
    """Django's connection ``using`` as the connection the MySQL dialect's steps
    (``shardid._dictionary_generated._Mysql``) drive: its cursors, and its transaction as ``atomic()`` (a savepoint inside the caller's).
    A transaction the server rolls back (a deadlock) is run again only outside the caller's:
    inside, the caller's transaction is gone with it, and the error is the caller's."""

    def __init__(self, using: str) -> None:
        from django.db import connections

        self.connection = connections[using]
        self.using = using
        self.retryable = not self.connection.in_atomic_block
        self._atomic: Any = None

    @property
    def shardid_dialect(self) -> str:
        from shardid import _mysql

        self.connection.ensure_connection()
        return _mysql.dialect_of(self.connection.connection)

    def cursor(self) -> Any:
        return self.connection.cursor()

    def begin(self) -> None:
        from django.db import transaction

        self._atomic = transaction.atomic(using=self.using)
        self._atomic.__enter__()

    def commit(self) -> None:
        atomic, self._atomic = self._atomic, None
        atomic.__exit__(None, None, None)

    def rollback(self) -> None:
        atomic, self._atomic = self._atomic, None
        if atomic is not None:
            error = RuntimeError("shardid: rolled back")
            atomic.__exit__(RuntimeError, error, None)


_dictionaries: dict[tuple[str, str, str], _DjangoDictionary] = {}


def dictionary(topic: str, *, schema: str = "dict", using: str = "default", cache_size: int = DEFAULT_CACHE) -> Dictionary:
    """The string <-> ID dictionary of ``topic`` (:mod:`shardid.dictionary`) on Django's
    connection ``using`` (PostgreSQL, MySQL, MariaDB or SQLite, after :class:`InstallDictionary`): one
    per process and topic, its cache shared by every thread::

        from shardid.django import dictionary

        tag_id = dictionary("tags").id(request.POST["tag"])

    The statements run in the caller's transaction: inside ``transaction.atomic()``, a call that
    assigns new IDs holds the topic's lock until that transaction ends (other writers of new
    strings of the topic wait), and a rollback gives the IDs back.
    """
    return per_process(
        _dictionaries, (using, schema, topic), lambda: _DjangoDictionary(topic, schema=schema, using=using, cache_size=cache_size)
    )
