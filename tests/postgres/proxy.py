"""A TCP proxy in front of the throwaway server that holds every chunk ``delay`` seconds: a
database far away, for the segments' tests (a client killed while its fetch is in flight) and
benchmark (the tail with 50 ms on every round trip). Loopback only."""

from __future__ import annotations

import asyncio
import socket
import threading


class DelayProxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:``target_port``, holding every chunk ``delay``
    seconds. ``queries`` counts the client chunks that contain ``watch`` (bytes), and
    ``in_flight`` is set while the answer to the last of them is being held back."""

    def __init__(self, target_port: int, delay: float, watch: bytes = b"take_segment") -> None:
        self.target_port = target_port
        self.delay = delay
        self.watch = watch
        self.queries = 0
        self.in_flight = threading.Event()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: bool) -> None:
            try:
                while data := await reader.read(65536):
                    if upstream and self.watch in data:
                        self.queries += 1
                        self.in_flight.set()
                    await asyncio.sleep(self.delay)
                    writer.write(data)
                    await writer.drain()
                    if not upstream:
                        self.in_flight.clear()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))

        async def main() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", self.port)
            self.ready.set()
            async with server:
                await server.serve_forever()

        self.loop.run_until_complete(main())
