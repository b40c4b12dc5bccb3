"""FastAPI + SQLAlchemy's asyncio engine over asyncpg with ONE URL (issue 56's done-when, the
part this tree does): ``postgresql+asyncpg://`` for SQLAlchemy's engine, shardid's asyncio lease
and its dictionary, under ``uvicorn --workers 2``; 1,000 POSTs, every row's ID distinct, one
dictionary ID per string across both workers, and the database's connections counted during the
load (``pg_stat_activity``): at most the engine's pool and the lease's and dictionary's own
connection per worker, none per request. Before, the URL was refused at start-up and psycopg
was needed beside asyncpg with a second URL. About 10 s."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

import shardid
from shardid.sql import dictionary

POOL_SIZE = 5
# Per worker: the engine's pool, the lease's connection, the dictionary's.
MOST_CONNECTIONS = 2 * (POOL_SIZE + 2)

APP = f'''
import os
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy import BigInteger
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from shardid import Layout
from shardid.dictionary import AsyncDictionary
from shardid.postgres import lease_async

URL = os.environ["DATABASE_URL"]


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    url_id: Mapped[int] = mapped_column(BigInteger)
    pid: Mapped[int] = mapped_column(BigInteger)


engine = create_async_engine(URL, pool_size={POOL_SIZE}, max_overflow=0)
Session = async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def lifespan(app):
    async with lease_async(Layout.INSTAGRAM, URL, range(0, 64)) as ids, AsyncDictionary(URL, "urls") as urls:
        app.state.ids, app.state.urls = ids, urls
        yield
    await engine.dispose()


app = FastAPI(lifespan=lifespan)


@app.get("/pid")
async def pid():
    return {{"pid": os.getpid()}}


@app.post("/orders")
async def create_order(url: str):
    async with Session.begin() as session:
        order = Order(id=await app.state.ids.next_id(), url_id=await app.state.urls.id(url), pid=os.getpid())
        session.add(order)
    return {{"id": str(order.id), "url_id": order.url_id, "pid": order.pid}}
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_fastapi_sqlalchemy_asyncpg_one_url_two_workers_1000_posts(cluster: Any, tmp_path: Path) -> None:
    import httpx

    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE fastapi_asyncpg")
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=fastapi_asyncpg")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(dictionary("dict").encode())
        conn.execute("SELECT dict.create_topic('urls')")
        conn.execute("CREATE TABLE orders (id bigint PRIMARY KEY, url_id bigint NOT NULL, pid bigint NOT NULL)")
    (tmp_path / "app.py").write_text(APP)
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{cluster.port}/fastapi_asyncpg"
    port = free_port()
    log = open(tmp_path / "uvicorn.log", "w")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--workers", "2", "--port", str(port), "--log-level", "warning"],
        cwd=tmp_path, env={**os.environ, "DATABASE_URL": url}, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    counts: list[int] = []
    done = threading.Event()

    def count_connections() -> None:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            while not done.is_set():
                row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = 'fastapi_asyncpg'").fetchone()
                counts.append(row[0] if row else 0)
                time.sleep(0.02)

    counter = threading.Thread(target=count_connections)
    try:
        deadline = time.monotonic() + 60
        pids: set[int] = set()
        while len(pids) < 2:  # both workers up (each took its shard)
            assert server.poll() is None, (tmp_path / "uvicorn.log").read_text()
            assert time.monotonic() < deadline, "the workers did not start"
            try:
                pids.add(httpx.get(f"{base}/pid", timeout=2, headers={"Connection": "close"}).json()["pid"])
            except httpx.HTTPError:
                time.sleep(0.2)
        counter.start()

        async def load() -> list[tuple[str, Any]]:
            urls = [f"/p{i % 50}" for i in range(1000)]

            async def client_of(part: list[str]) -> list[Any]:
                limits = httpx.Limits(max_connections=20, max_keepalive_connections=0)
                async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60, headers={"Connection": "close"}) as client:
                    return await asyncio.gather(*(client.post("/orders", params={"url": u}) for u in part))

            parts = await asyncio.gather(*(client_of(urls[i::5]) for i in range(5)))
            return [(u, r) for i, part in enumerate(parts) for u, r in zip(urls[i::5], part, strict=True)]

        answers = asyncio.run(load())
    finally:
        done.set()
        if counter.is_alive():
            counter.join(10)
        server.terminate()
        server.wait(timeout=30)
        log.close()
    assert [r.status_code for _, r in answers] == [200] * 1000, (tmp_path / "uvicorn.log").read_text()[-3000:]
    bodies = [(u, r.json()) for u, r in answers]
    ids = [int(b["id"]) for _, b in bodies]
    assert len(set(ids)) == 1000, "0 duplicates"
    assert {b["pid"] for _, b in bodies} == pids, "both workers answered"
    assert len({shardid.Layout.INSTAGRAM.decode(i).shard for i in ids}) == 2, "each worker on its own shard"
    by_url: dict[str, int] = {}
    for u, b in bodies:
        assert by_url.setdefault(u, b["url_id"]) == b["url_id"], "one URL, two dictionary IDs"
    assert sorted(set(by_url.values())) == list(range(50))
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(DISTINCT id) FROM orders").fetchone() == (1000,)
        # The workers freed their shards when they stopped.
        assert conn.execute("SELECT count(*) FROM shardid_leases WHERE expires_at > now()").fetchone() == (0,)
    print(f"connections to the database during the load: at most {max(counts)} (bound {MOST_CONNECTIONS}), {len(counts)} samples")
    assert counts and max(counts) <= MOST_CONNECTIONS
