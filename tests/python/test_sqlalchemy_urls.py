"""SQLAlchemy's URLs (issue 56): an application hands its one URL (``postgresql+asyncpg://``,
``mysql+aiomysql://``, ``sqlite+aiosqlite:///``) to SQLAlchemy and to shardid. Before, every
client refused them at start-up ("postgresql+asyncpg" is not a database URL) while SQLAlchemy's
``sqlite:///`` was taken. The scheme before ``+`` names the database by the core's one rule;
the driver after it is run where the client has it, and refused naming the one to write where
it has not, never run with another. On SQLite files here (no server); PostgreSQL's are in
tests/postgres/test_sqlalchemy_urls.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import shardid
import shardid.mysql
import shardid.postgres
from shardid import Layout, _db
from shardid._shardid import _database_of_url
from shardid.dictionary import AsyncDictionary, Dictionary
from shardid.sqlite import lease, lease_async

URLS = [
    ("postgresql+asyncpg://u:p@db:5432/app", "postgres"),
    ("postgresql+psycopg://db/app", "postgres"),
    ("postgresql+psycopg2://db/app", "postgres"),
    ("postgres+psycopg://db/app", "postgres"),
    ("mysql+pymysql://root@db/app", "mysql"),
    ("mysql+aiomysql://root@db/app", "mysql"),
    ("mariadb+pymysql://root@db/app", "mariadb"),
    ("mariadb+aiomysql://root@db/app", "mariadb"),
    ("sqlite+aiosqlite:///app.db", "sqlite"),
    ("sqlite+pysqlite:///app.db", "sqlite"),
]


@pytest.mark.parametrize(("url", "database"), URLS)
def test_the_core_reads_the_database_before_the_plus(url: str, database: str) -> None:
    assert _database_of_url(url, "url") == database
    driver, plain = _db.split_driver(url)
    assert driver == url.split("://")[0].split("+")[1]
    assert plain == url.replace(f"+{driver}", "", 1)


def test_an_unknown_driver_or_family_is_still_refused() -> None:
    for url in ("postgresql+nosuch://db/app", "http+asyncpg://h", "sqlite+asyncpg:///a.db"):
        with pytest.raises(shardid.InvalidArgumentError, match="is not a database URL"):
            _database_of_url(url, "url")
    assert _db.split_driver("host=db dbname=app") == (None, "host=db dbname=app")


def test_a_sqlite_file_by_either_sqlalchemy_driver_is_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    plain, blocking_url, async_url = f"sqlite:///{path}", f"sqlite+pysqlite:///{path}", f"sqlite+aiosqlite:///{path}"
    Dictionary(plain, "words").create()
    with Dictionary(blocking_url, "words") as d:
        assert d.ids(["a", "b"]) == [0, 1]

    async def main() -> list[int]:
        async with AsyncDictionary(async_url, "words") as d:
            return await d.ids(["b", "c"])

    assert asyncio.run(main()) == [1, 2]
    with Dictionary(plain, "words") as d:
        assert d.ids(["a", "b", "c"]) == [0, 1, 2]

    async def leases() -> set[int]:
        with lease(Layout.TWITTER, blocking_url, range(0, 2)) as blocking:
            async with lease_async(Layout.TWITTER, async_url, range(0, 2)) as g:
                with pytest.raises(shardid.NoFreeShardError):
                    lease(Layout.TWITTER, plain, range(0, 2))
                await g.next_id()
                return {blocking.shard, g.shard}

    assert asyncio.run(leases()) == {0, 1}


def test_a_driver_the_client_does_not_run_is_refused_naming_the_one_to_write(tmp_path: Path) -> None:
    # Blocking clients run no asyncio driver, asyncio clients no blocking one: SQLAlchemy refuses
    # the same (create_async_engine on pymysql), and another driver is never run in its place.
    with pytest.raises(shardid.UnsupportedError, match=r"asyncpg runs on asyncio only") as refused:
        shardid.postgres.lease(Layout.TWITTER, "postgresql+asyncpg://db/app", range(0, 1))
    assert "postgresql+psycopg://" in str(refused.value)
    with pytest.raises(shardid.UnsupportedError, match=r"mysql\+aiomysql://"):
        AsyncDictionary("mysql+pymysql://root@db/app", "words")
    with pytest.raises(shardid.UnsupportedError, match=r"mysql\+pymysql://"):
        Dictionary("mysql+aiomysql://root@db/app", "words")
    with pytest.raises(shardid.UnsupportedError, match=r"postgresql\+psycopg://"):
        AsyncDictionary("postgresql+psycopg2://db/app", "words")
    with pytest.raises(shardid.UnsupportedError, match=r"mysql\+pymysql://"):
        shardid.mysql.lease(Layout.TWITTER, "mysql+mysqldb://root@db/app", range(0, 1))
    # UNSUPPORTED is NotImplementedError's: the usage is refused, the URL is not malformed.
    with pytest.raises(NotImplementedError):
        Dictionary("postgresql+asyncpg://db/app", "words")
