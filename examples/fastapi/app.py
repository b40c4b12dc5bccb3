"""shardid in a FastAPI app: a time-sortable ID from a shard this worker leases, a dense order
number from database segments and a URL's dictionary ID, each on the event loop (psycopg's
AsyncConnection; nothing blocks the loop on the database).

    # once, in the database:
    #   python -m shardid.sql --segments --schema seg | psql -1 -f -
    #   python -m shardid.sql --dictionary --schema dict | psql -1 -f -
    #   psql -c "SELECT seg.create_tag('orders')"
    DATABASE_URL=postgresql://app@db/app uvicorn app:app --workers 2
    curl -X POST 'localhost:8000/orders?url=https://example.com/'

Each worker takes its own shard (``lease_async``: an expiring lease, renewed by an asyncio
task) when it starts and frees it when it stops. ``GET /lag`` reports how late the loop's
ticks of 10 ms came, at most, since the worker started: the time the loop was blocked.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from shardid import Layout
from shardid.dictionary import AsyncDictionary
from shardid.postgres import lease_async
from shardid.segments import AsyncDenseIds

DSN = os.environ["DATABASE_URL"]
lag = {"max_ms": 0.0, "ticks": 0}


async def watch_the_loop() -> None:
    """Sleeps 10 ms at a time and records how much later than asked it woke up."""
    loop = asyncio.get_running_loop()
    while True:
        t = loop.time()
        await asyncio.sleep(0.01)
        lag["max_ms"] = max(lag["max_ms"], (loop.time() - t - 0.01) * 1000)
        lag["ticks"] += 1


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with (
        lease_async(Layout.INSTAGRAM, DSN, range(0, 64)) as ids,
        AsyncDenseIds(DSN, "orders", schema="seg") as orders,
        AsyncDictionary(DSN, "urls", schema="dict") as urls,
    ):
        await urls.create()
        app.state.ids, app.state.orders, app.state.urls = ids, orders, urls
        watcher = asyncio.create_task(watch_the_loop())
        yield
        watcher.cancel()


app = FastAPI(lifespan=lifespan)


@app.post("/orders")
async def create_order(url: str) -> dict[str, object]:
    state = app.state
    return {
        # As a string: JavaScript's JSON.parse rounds integers above 2**53.
        "id": str(await state.ids.next_id()),
        "number": await state.orders.next_id(),
        "url_id": await state.urls.id(url),
        "shard": state.ids.shard,
    }


@app.get("/lag")
async def loop_lag() -> dict[str, object]:
    return {"pid": os.getpid(), **lag}
