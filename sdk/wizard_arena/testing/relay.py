"""A bot far away, on one machine: a TCP relay that delays what it carries.

Where the kernel has no ``netem`` (no ``sch_netem`` module, no way to load
one), the network delay of a distant bot is made in user space:
:class:`DelayRelay` listens on loopback, connects each client it accepts to
``upstream`` (the referee), and forwards the bytes both ways, each chunk
``delay`` seconds later (plus or minus up to ``jitter``, drawn for each
chunk), never out of order: a chunk leaves no earlier than the one before it
in the same direction. A client behind it has a round trip of about ``2 *
delay`` to the referee, whose socket (and so its kernel's ``tcpi_min_rtt``)
is the relay's, on loopback: to the referee a relayed bot is a bot behind a
proxy.

It runs its own asyncio loop in a thread, so a test or a bench script can
put it in front of any server (``with DelayRelay(...) as relay:
relay.address``). The standard library only.

>>> import socket
>>> with socket.create_server(("127.0.0.1", 0)) as server:
...     with DelayRelay(server.getsockname()[:2], delay=0.02) as relay:
...         with socket.create_connection(relay.address_tuple) as client:
...             conn, _ = server.accept()
...             client.sendall(b"ping")
...             conn.recv(4)
b'ping'
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["DelayRelay"]

_CHUNK = 65536


class DelayRelay:
    """Forwards TCP connections from ``host`` (a free port) to ``upstream``
    (``(host, port)`` or ``"host:port"``), delaying each direction by
    ``delay`` seconds, plus or minus ``jitter`` (uniform, per chunk; never
    below 0), keeping each direction's bytes in order. ``up_delay`` (default
    ``delay``) is the delay from the client to ``upstream``; ``seed`` seeds
    the jitter. Start it with ``with`` (or :meth:`start`, then :meth:`close`)."""

    def __init__(
        self,
        upstream: Sequence[Any] | str,
        delay: float,
        jitter: float = 0.0,
        *,
        up_delay: float | None = None,
        host: str = "127.0.0.1",
        seed: int | None = None,
    ) -> None:
        if isinstance(upstream, str):
            up_host, _, port = upstream.rpartition(":")
            self.upstream: tuple[str, int] = (up_host, int(port))
        else:
            self.upstream = (str(upstream[0]), int(upstream[1]))
        if delay < 0 or jitter < 0 or (up_delay is not None and up_delay < 0):
            raise ValueError("delays and jitter must not be negative")
        self.down_delay = delay
        """Seconds from ``upstream`` to the client."""
        self.up_delay = delay if up_delay is None else up_delay
        """Seconds from the client to ``upstream``."""
        self.jitter = jitter
        self.host = host
        self.port = 0
        self.connections = 0
        """Connections accepted so far."""
        self._rng = random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        """``host:port`` to connect to (the relay's)."""
        return f"{self.host}:{self.port}"

    @property
    def address_tuple(self) -> tuple[str, int]:
        return (self.host, self.port)

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> DelayRelay:
        started = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            try:
                asyncio.run(self._serve(started))
            except BaseException as e:  # reported by start()
                failure.append(e)
                started.set()

        self._thread = threading.Thread(target=main, name="delay-relay", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise OSError(f"the relay could not start: {failure[0]}") from failure[0]
        return self

    def close(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> DelayRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the relay (in its thread) ---------------------------------------------

    async def _serve(self, started: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_writer: asyncio.StreamWriter | None = None
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            for w in (writer, up_writer):
                sock = w.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # one direction failing (a reset) ends the other too
            async with asyncio.TaskGroup() as both:
                both.create_task(self._pipe(reader, up_writer, self.up_delay))
                both.create_task(self._pipe(up_reader, writer, self.down_delay))
        except* OSError:
            pass
        finally:
            writer.close()
            if up_writer is not None:
                up_writer.close()
            self._tasks.discard(task)

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
    ) -> None:
        """One direction: each chunk read is written ``delay`` (± jitter)
        later, no earlier than the chunk before it; the end of the stream
        (a half-close) likewise."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def write() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(write())
        last = 0.0
        try:
            while True:
                data = await reader.read(_CHUNK)
                spread = self._rng.uniform(-self.jitter, self.jitter) if self.jitter else 0.0
                last = max(last, loop.time() + max(0.0, delay + spread))
                queue.put_nowait((last, data))
                if not data:
                    break
            await sender
        finally:
            if not sender.done():
                sender.cancel()
