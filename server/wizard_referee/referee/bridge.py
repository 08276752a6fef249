"""The trio <-> grpc.aio bridge: the one place where the two event loops meet.

trio owns the main thread and all game logic. grpcio has no trio support, so
the grpc.aio server runs its own asyncio loop in one background thread.
Messages cross the boundary in exactly two ways:

- asyncio -> trio: :meth:`trio.lowlevel.TrioToken.run_sync_soon`
- trio -> asyncio: :meth:`asyncio.AbstractEventLoop.call_soon_threadsafe`

The asyncio side is a thin pipe: for each ``Play`` stream it decodes what
the bot sends (through :mod:`wizard_arena.protocol.wire`, from the bytes received, so
bytes that do not decode become :class:`Malformed` rather than the end of
the stream) and hands it to trio, and writes what trio sends. A
:class:`Connection` is the trio-side handle on one stream: a
:class:`~wizard_referee.referee.seat.Seat`, all the arena and the tables
know of it. Nothing in here knows the rules of Wizard.

grpc core's own settings (the listener) are chosen by :mod:`.grpc_setup`,
imported before grpc, as is the transport thread's event loop.

Pitfall handled here: grpc.aio ends the request iterator cleanly when a
client cancels, when its connection drops and when gRPC refuses a message
over the size limit, as when the bot half-closes: the end of the inbound
stream is reported to trio as the bot having left (:attr:`Connection.closed`),
and why (``close_reason``, the detail of the seat's ``disconnect`` fault) from
what follows: gRPC cancels the handler at once unless the bot half-closed.

A bot that stops reading is cut off: gRPC takes messages until the HTTP/2
flow-control window of the stream is full, then ``context.write`` waits.
Messages queued behind it count against ``outbound_limit``; past it the
pending write is cancelled and the stream ends with RESOURCE_EXHAUSTED at
once. Likewise a stream the server closes while a write is stuck ends
``close_grace`` seconds later whatever is still unsent, so no handler waits
forever on a bot that does not read.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

# grpc core reads its settings once, when it loads: choose them first
from wizard_referee.referee.grpc_setup import new_event_loop

# isort: split
import grpc
import trio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import wizard_arena.protocol.wire as wire
from wizard_arena.protocol.messages import (
    SERVER_SHUTTING_DOWN,
    BotMsg,
    ClockProbe,
    DecisionRequest,
    GameEnd,
    ServerInfo,
    ServerMsg,
    Welcome,
)
from wizard_referee.referee.seat import CloseCode, Malformed, SeatBase
from wizard_referee.referee.tcp_rtt import KernelRtt

__all__ = [
    "KEEPALIVE_OPTIONS",
    "Bridge",
    "CloseCode",
    "Connection",
    "Malformed",
    "StreamClose",
    "host_port",
    "open_bridge",
]

#: The server's HTTP/2 keepalive (gRPC channel arguments), as documented for
#: clients in docs/protocol.md ("Connections: keepalive and dropped streams"):
#: the server pings a quiet connection every minute, also in the lobby, and
#: drops one that does not answer within 20 s; a client may ping every 10 s
#: (more often earns GOAWAY "too_many_pings" after two strikes).
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 2),
)

#: Seconds a stream closed by the server may take to send what was queued
#: before the close; then the rest is dropped and the status sent.
CLOSE_GRACE = 10.0

#: Seconds the reader waits, at the clean end of a bot's messages, for gRPC
#: to cancel the handler (a call gRPC ended rather than a half-close; it
#: comes within a millisecond): then the bot is seen to leave.
_SETTLE = 0.05

#: The gRPC status each way of closing a stream ends it with.
STATUS_OF_CLOSE = {code: grpc.StatusCode[code.name] for code in CloseCode}


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC (and a URL) reads it: an IPv6 address in brackets.

    >>> host_port("::", 50051), host_port("[::1]", 0), host_port("127.0.0.1", 80)
    ('[::]:50051', '[::1]:0', '127.0.0.1:80')
    """
    if ":" in host and not host.startswith("["):
        return f"[{host}]:{port}"
    return f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class StreamClose:
    """What a :class:`Connection` hands its stream's writer, in the asyncio
    thread, to end the stream: the close code (its gRPC status is
    :data:`STATUS_OF_CLOSE`) and the details the bot reads."""

    code: CloseCode
    details: str


class Connection(SeatBase):
    """The trio-side handle on one bot stream (a :class:`~wizard_referee.referee.seat.Seat`:
    its trio side is :class:`~wizard_referee.referee.seat.SeatBase`'s, as the
    in-memory seat's). ``send()`` and ``close()`` hand what goes out to the
    stream's writer in the asyncio thread; the asyncio side delivers what the
    bot sends, and says when the bot has gone (``_bot_left``)."""

    def __init__(self, bridge: Bridge, conn_id: str, peer: str, inbound_limit: int) -> None:
        super().__init__(conn_id, peer, inbound_limit)
        self._bridge = bridge
        # asyncio side: outbound queue and its wake-up, both used in the asyncio
        # thread only; the writer, finding the queue empty, waits on a bare
        # future that the first item put into the queue completes
        self._out: deque[ServerMsg | bytes | StreamClose] = deque()
        self._open = False
        """asyncio: the Play handler runs (items are taken)."""
        self._waiter: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[Any] | None = None
        """The Play handler (it writes): cancelled to cut a stuck write short."""
        self._between_games = True
        """asyncio: the last message written (if any) was a Welcome or a GameEnd."""
        self._ending = False
        """asyncio: a close is queued; nothing more is taken."""
        self._cut = False
        """asyncio: the writer was cancelled to end the stream now."""
        self._kernel: KernelRtt | None = None

    def kernel_rtt(self) -> float | None:
        """``tcpi_min_rtt`` of the server's socket to the bot (:mod:`.tcp_rtt`;
        its socket is looked for at the first call)."""
        if self._kernel is None:
            self._kernel = KernelRtt(self.peer, self._bridge.port)
        return self._kernel()

    # -- trio side ----------------------------------------------------------------

    def send(self, msg: ServerMsg) -> None:
        """Queue ``msg`` for the bot (dropped silently once the stream is
        closed); a DecisionRequest goes serialized (:meth:`Bridge._encode`)."""
        if not self.closed:
            item = wire.encode_server_bytes(msg) if type(msg) is DecisionRequest else msg
            self._bridge._to_aio(self._put, item)

    def _finish(self, code: CloseCode | None, details: str) -> None:
        """The status goes after everything already queued (the handler
        has finished if the bot dropped the stream)."""
        self._bridge._to_aio(self._put, StreamClose(code or CloseCode.OK, details))

    def _closed_by_aio(self, close: StreamClose) -> None:
        """trio: the asyncio side ended the stream (:meth:`_end_now`)."""
        if not self._finished:
            self._finished = True
            self._mark_closed(f"closed by server: {close.code.name} {close.details}")

    # -- asyncio side -----------------------------------------------------------------

    def _wake_writer(self) -> None:
        """asyncio: the writer waits for the queue's first item: wake it."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _put(self, item: ServerMsg | bytes | StreamClose) -> None:
        if not self._open or self._ending:
            return
        out = self._out
        out.append(item)
        if type(item) is StreamClose:
            self._ending = True
            if len(out) == 1:
                self._wake_writer()
            elif (loop := self._bridge._loop) is not None:
                # the writer is busy, perhaps stuck on a bot that does not read
                loop.call_later(self._bridge.close_grace, self._end_now, item)
            return
        n = len(out)
        if n == 1:
            self._wake_writer()
        elif n > self._bridge.outbound_limit:
            details = (
                f"outbound queue full ({self._bridge.outbound_limit} messages): "
                "the bot is not reading what the server sends"
            )
            close = StreamClose(CloseCode.RESOURCE_EXHAUSTED, details)
            self._end_now(close)
            self._bridge._to_trio(self._closed_by_aio, close)

    def _end_now(self, close: StreamClose) -> None:
        """asyncio: end the stream with ``close`` now, dropping what is unsent."""
        self._ending = True
        writer = self._writer
        if writer is None or writer.done():
            return
        self._out.clear()
        self._out.append(close)
        self._cut = True
        writer.cancel()

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.peer}{' closed' if self.closed else ''}>"


class _Servicer:
    """The WizardArena service on the asyncio side: a thin pipe to trio."""

    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge

    async def GetServerInfo(self, request: bytes, context: Any) -> Any:
        try:
            wire.check_server_info_request(request)
        except wire.WireError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return wire.encode_server_info(self._bridge.server_info)

    async def Play(self, request_iterator: AsyncIterator[Any], context: Any) -> None:
        bridge = self._bridge
        conn = Connection(bridge, f"c{next(bridge._ids)}", context.peer(), bridge.inbound_limit)
        out = conn._out
        conn._open = True
        conn._writer = asyncio.current_task()
        new_future = asyncio.get_running_loop().create_future
        if not bridge._to_trio(bridge._on_connect, conn):
            await context.abort(grpc.StatusCode.UNAVAILABLE, SERVER_SHUTTING_DOWN)
        reader = asyncio.ensure_future(self._read(request_iterator, conn))
        encode = bridge._encode
        write = context.write
        bridge.open_streams += 1
        ended = "stream ended"
        try:
            while True:
                try:
                    if not out:
                        waiter = conn._waiter = new_future()
                        await waiter
                        continue
                    # everything queued so far goes out back to back, in order,
                    # without waiting for another wake-up between messages
                    item = out.popleft()
                    if isinstance(item, StreamClose):
                        conn._writer = None  # ending: no more cuts
                        if item.code is not CloseCode.OK:
                            # the status waits behind what the bot has not read:
                            # once queued, do not wait for a bot that never reads
                            # (grpc then raises the abort itself)
                            with contextlib.suppress(TimeoutError):
                                await asyncio.wait_for(
                                    context.abort(STATUS_OF_CLOSE[item.code], item.details),
                                    bridge.close_grace,
                                )
                        return
                    await write(encode(item))
                    if type(item) is not ClockProbe:  # (a probe comes in the lobby too)
                        conn._between_games = isinstance(item, Welcome | GameEnd)
                except asyncio.CancelledError:
                    if not conn._cut:
                        # gRPC ended the call: not a half-close (_read)
                        ended = (
                            "the stream was cut: the bot cancelled its call, its connection "
                            "dropped, or it sent a message larger than "
                            f"{bridge.max_message_bytes} bytes"
                        )
                        raise
                    # Connection._end_now: the close is next in the queue
                    conn._cut = False
                    asyncio.current_task().uncancel()  # type: ignore[union-attr]
        finally:
            bridge.open_streams -= 1
            reader.cancel()
            bridge._to_trio(conn._bot_left, ended)

    async def _read(self, request_iterator: AsyncIterator[Any], conn: Connection) -> None:
        bridge = self._bridge
        reason = "the bot closed the stream"
        decode = wire.decode_bot_bytes
        try:
            # the iterator yields the bytes received (wire.add_servicer): a
            # message that does not decode is the bot's fault, not an error of
            # the stream, and reaches trio as Malformed
            async for raw in request_iterator:
                msg: BotMsg | Malformed
                try:
                    msg = decode(raw)
                except wire.WireError as e:
                    msg = Malformed(str(e))
                if not bridge._to_trio(conn._deliver, msg):
                    return
            # grpc.aio ends the iterator as cleanly when gRPC itself ends the
            # call (the bot cancelled it, its connection dropped, a message
            # over the size limit) as when the bot half-closes; then gRPC
            # cancels the handler, which says why (Play): give it the time,
            # during a game only (where the reason shows in a fault; a bot
            # leaving from the lobby is seen to leave at once)
            writer = conn._writer
            if not conn._between_games and writer is not None and not writer.done():
                await asyncio.wait((writer,), timeout=_SETTLE)
        except asyncio.CancelledError:
            reason = "stream cancelled"
            raise
        except Exception as e:
            reason = f"stream failed: {type(e).__name__}: {e}"
        finally:
            bridge._to_trio(conn._bot_left, reason)


class Bridge:
    """A running grpc.aio server in a background thread, bridged to trio."""

    def __init__(
        self,
        server_info: ServerInfo,
        on_connect: Callable[[Connection], None],
        inbound_limit: int,
        max_message_bytes: int,
        outbound_limit: int = 256,
    ) -> None:
        self.server_info = server_info
        self._on_connect_cb = on_connect
        self.inbound_limit = inbound_limit
        self.max_message_bytes = max_message_bytes
        self.outbound_limit = outbound_limit
        """Messages queued for a bot behind a write gRPC cannot take (the bot
        is not reading) before the stream is cut off."""
        self.close_grace = CLOSE_GRACE
        self.open_streams = 0
        """Play handlers running (read in any thread: an int)."""
        self._ids = itertools.count(1)
        self._token = trio.lowlevel.current_trio_token()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: grpc.aio.Server | None = None
        self._health: Any = None
        self._thread: threading.Thread | None = None
        self._trio_open = True
        self.port = 0
        # trio -> asyncio calls wait here; one wake-up of the asyncio loop
        # carries every call queued until it runs (a table's broadcast is
        # one wake-up, not one per seat)
        self._outbox: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._outbox_scheduled = False
        self._last_msg: object = None
        self._last_bytes = b""
        # asyncio -> trio calls, likewise
        self._inbox: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._inbox_scheduled = False

    # -- crossing -----------------------------------------------------------------

    def _to_trio(self, fn: Callable[..., None], *args: Any) -> bool:
        """From the asyncio thread: run ``fn(*args)`` in trio soon (calls keep their
        order). False if trio is gone."""
        if not self._trio_open:
            return False
        self._inbox.append((fn, args))
        if not self._inbox_scheduled:
            self._inbox_scheduled = True
            try:
                self._token.run_sync_soon(self._drain_inbox)
            except trio.RunFinishedError:
                self._trio_open = False
                return False
        return True

    def _drain_inbox(self) -> None:
        """In trio: run the calls queued by :meth:`_to_trio` (one trio wake-up
        for everything the asyncio thread handed over meanwhile; same flag
        protocol as :meth:`_drain_outbox`)."""
        self._inbox_scheduled = False
        inbox = self._inbox
        while inbox:
            fn, args = inbox.popleft()
            fn(*args)

    def _to_aio(self, fn: Callable[..., None], *args: Any) -> None:
        """From trio: run ``fn(*args)`` in the asyncio thread soon (calls keep their order)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        self._outbox.append((fn, args))
        if not self._outbox_scheduled:
            self._outbox_scheduled = True
            # the loop may close between the check and the call
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._drain_outbox)

    def _drain_outbox(self) -> None:
        """In the asyncio thread: run the calls queued by :meth:`_to_aio`.

        The flag is cleared before draining, so a call queued while (or
        after) this runs is either drained here or schedules a new drain."""
        self._outbox_scheduled = False
        outbox = self._outbox
        while outbox:
            fn, args = outbox.popleft()
            fn(*args)

    def _encode(self, msg: ServerMsg | bytes) -> bytes:
        """In the asyncio thread: ``msg`` serialized
        (:func:`wire.encode_server_bytes`). A table sends the same event
        object to every seat and the seats' writers run one after the other,
        so the last one encoded is reused (by identity: messages are frozen).
        Events are serialized here, not in trio, for a lower added latency
        with 256 bots; a DecisionRequest, one seat's alone, comes serialized
        by :meth:`Connection.send` in trio, where its view was just built,
        for less server CPU (both measured: docs/performance.md)."""
        if isinstance(msg, bytes):
            return msg
        if msg is not self._last_msg:
            self._last_bytes = wire.encode_server_bytes(msg)
            self._last_msg = msg
        return self._last_bytes

    def _on_connect(self, conn: Connection) -> None:
        self._on_connect_cb(conn)

    # -- lifecycle ----------------------------------------------------------------

    async def start(self, host: str, port: int, unix_socket: str | None = None) -> int:
        started = trio.Event()
        failure: list[BaseException] = []

        def thread_main() -> None:
            loop = new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                loop.run_until_complete(self._aio_start(host, port, unix_socket))
            except BaseException as e:
                failure.append(e)
                self._token.run_sync_soon(started.set)
                loop.close()
                return
            self._token.run_sync_soon(started.set)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=thread_main, name="grpc-aio", daemon=True)
        self._thread.start()
        await started.wait()
        if failure:
            raise OSError(f"cannot serve on {host}:{port}: {failure[0]}") from failure[0]
        return self.port

    async def _aio_start(self, host: str, port: int, unix_socket: str | None) -> None:
        options = [
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
            ("grpc.so_reuseport", 0),
            *KEEPALIVE_OPTIONS,
        ]
        server = grpc.aio.server(options=options)
        wire.add_servicer(_Servicer(self), server)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (
                wire.SERVICE_NAME,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ),
            server,
        )
        bound = server.add_insecure_port(host_port(host, port))
        if bound == 0:
            raise OSError(f"could not bind {host_port(host, port)}")
        # a Unix socket's add_insecure_port answers 1 (not a port), 0 when it fails
        if unix_socket is not None and server.add_insecure_port(f"unix:{unix_socket}") == 0:
            raise OSError(f"could not bind the Unix socket {unix_socket}")
        await server.start()
        if unix_socket is not None:
            os.chmod(unix_socket, 0o666)  # every confined bot's uid connects
        serving = health_pb2.HealthCheckResponse.SERVING
        await self._health.set("", serving)
        await self._health.set(wire.SERVICE_NAME, serving)
        self._server = server
        self.port = bound

    async def stop(self, grace: float = 1.0) -> None:
        """Stop the grpc server (``grace`` seconds for open calls) and its thread."""
        loop, server = self._loop, self._server
        if loop is None or loop.is_closed():
            return

        async def aio_stop() -> None:
            if self._health is not None:
                await self._health.enter_graceful_shutdown()
            if server is not None:
                await server.stop(grace)

        def blocking_stop() -> None:
            fut = asyncio.run_coroutine_threadsafe(aio_stop(), loop)
            try:
                fut.result(timeout=grace + 5)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                if self._thread is not None:
                    self._thread.join(timeout=5)

        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(blocking_stop)
        self._trio_open = False


async def open_bridge(
    host: str,
    port: int,
    server_info: ServerInfo,
    on_connect: Callable[[Connection], None],
    *,
    inbound_limit: int = 64,
    max_message_bytes: int = 64 * 1024,
    outbound_limit: int = 256,
    unix_socket: str | None = None,
) -> Bridge:
    """Start serving on ``host:port`` (0 picks a free port; see ``Bridge.port``),
    and on the Unix socket ``unix_socket`` if given."""
    bridge = Bridge(server_info, on_connect, inbound_limit, max_message_bytes, outbound_limit)
    await bridge.start(host, port, unix_socket)
    return bridge
