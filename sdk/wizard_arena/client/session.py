"""The trio bridge to one gRPC Play stream: :func:`open_bot_session` and
the :class:`BotSession` it yields (the server's messages as domain values,
read by a helper thread so that nothing blocks trio), and the
:class:`Session` protocol it implements for the trio runner."""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, Protocol

import grpc
import trio

from wizard_arena.client.connection import (
    CLOSE,
    DEFAULT_SERVER,
    channel,
    decode,
    error_from_rpc,
    hello,
    probe_reply,
    requests,
)
from wizard_arena.client.errors import ConnectionLostError, ProtocolError
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    PROTOCOL_VERSIONS,
    ActionMsg,
    EventStream,
    ServerMsg,
    Welcome,
)
from wizard_arena.rules import Action

__all__ = ["BotSession", "Session", "open_bot_session"]


class Session(Protocol):
    """What :func:`~wizard_arena.client.serve_bot` plays over: one open stream,
    its Welcome received. :class:`BotSession` is the gRPC one; a test may
    give :func:`~wizard_arena.client.serve.serve_sessions` another (in memory).

    Iterating gives the server's messages until it ends the stream normally;
    an error status raises an :class:`~wizard_arena.client.errors.ArenaError`.
    """

    welcome: Welcome
    received_at: float
    """When the last message arrived (by the clock the runner times decisions by)."""

    def __aiter__(self) -> AsyncIterator[ServerMsg]: ...

    async def send(self, msg: ActionMsg) -> None:
        """Send ``msg`` to the server."""
        ...

    def close_sending(self) -> None:
        """Half-close: no more actions (and games) follow."""
        ...


class BotSession:
    """One open Play stream, as trio sees it (from :func:`open_bot_session`).

    Iterate it (``async for msg in session``) or call :meth:`receive` for
    the server's messages as domain values; answer with :meth:`send_action`.
    The gRPC stream runs in a helper thread; nothing here blocks trio.
    """

    def __init__(
        self,
        server: str,
        welcome: Welcome,
        call: Any,
        outbox: queue.SimpleQueue[Any],
        inbox: trio.MemoryReceiveChannel[Any],
    ) -> None:
        self.server = server
        self.welcome = welcome
        """The server's Welcome."""
        self._call = call
        self._outbox = outbox
        self._inbox = inbox
        self._closed = False
        self.received_at = time.monotonic()
        """When the last message came off the network (``time.monotonic()``)."""

    async def receive(self) -> ServerMsg:
        """The next server message. Raises :class:`trio.EndOfChannel` when the
        server ended the stream normally, an :class:`ArenaError` when it ended
        it with an error status."""
        item, at = await self._inbox.receive()
        if isinstance(item, BaseException):
            self._inbox.close()
            raise item
        self.received_at = at
        return item  # type: ignore[no-any-return]

    def __aiter__(self) -> BotSession:
        return self

    async def __anext__(self) -> ServerMsg:
        try:
            return await self.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def send_action(self, request_id: str, action: Action) -> None:
        """Answer the DecisionRequest ``request_id``."""
        await self.send(ActionMsg(request_id, action))

    async def send(self, msg: ActionMsg) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the session is closed")
        self._outbox.put(wire.encode_bot(msg))
        await trio.lowlevel.checkpoint()

    def close_sending(self) -> None:
        """Half-close: tell the server no more actions (and games) follow."""
        if not self._closed:
            self._closed = True
            self._outbox.put(CLOSE)


def _reader(
    call: Any,
    server: str,
    send: trio.MemorySendChannel[Any],
    token: trio.lowlevel.TrioToken,
    outbox: queue.SimpleQueue[Any],
) -> None:
    """Helper thread: the blocking gRPC response stream into a trio channel.

    Items are handed over with ``run_sync_soon`` (in order, without waiting
    for trio); each is ``(message or exception, arrival time)``. A clock
    probe is answered here, at once (into ``outbox``), and not handed over."""

    def deliver(item: Any) -> None:  # runs in trio
        try:
            if item is CLOSE:
                send.close()
            else:
                send.send_nowait(item)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            call.cancel()  # the session is closed: stop reading

    def put(item: Any) -> None:
        token.run_sync_soon(deliver, item if item is CLOSE else (item, time.monotonic()))

    try:
        try:
            for pb_msg in call:
                try:
                    item: Any = decode(pb_msg)
                except ProtocolError as e:
                    put(e)
                    call.cancel()
                    return
                reply = probe_reply(item)
                if reply is not None:
                    outbox.put(wire.encode_bot(reply))
                    continue
                put(item)
        except grpc.RpcError as e:
            put(error_from_rpc(e, server))  # dropped if the session is already closed
            return
        put(CLOSE)
    except trio.RunFinishedError:
        pass


@asynccontextmanager
async def open_bot_session(
    server: str = DEFAULT_SERVER,
    *,
    name: str,
    token: str | None = None,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
    resume_token: str = "",
    event_stream: EventStream | str = EventStream.ALL,
) -> AsyncIterator[BotSession]:
    """Open a Play stream, send the Hello and wait for the Welcome.

    ``resume_token`` (a lost session's ``Welcome.resume_token``) asks to take
    that session back. ``event_stream``: every message of the table (the
    default, for whoever reads this raw stream), or ``EventStream.LEAN``
    (protocol v1.1: only GameStarted, the requests, rejections, round
    results and GameOver; ``welcome.event_stream`` says what the server sends).

    Yields a :class:`BotSession`; leaving the block (normally, by an
    exception or by cancellation) cancels the stream and closes the channel.
    Raises an :class:`ArenaError` if the server refuses the bot.
    """
    outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    greeting = replace(
        hello(name, token, rule_options, EventStream(event_stream)), resume_token=resume_token
    )
    outbox.put(wire.encode_bot(greeting))
    send, inbox = trio.open_memory_channel[Any](math.inf)
    ch = channel(server, credentials, channel_options)
    session: BotSession | None = None
    call: Any = None
    try:
        call = wire.stub(ch).Play(requests(outbox))
        thread = threading.Thread(
            target=_reader,
            args=(call, server, send, trio.lowlevel.current_trio_token(), outbox),
            name=f"wizard-arena-reader-{name}",
            daemon=True,
        )
        thread.start()
        first, _ = await inbox.receive()
        if isinstance(first, BaseException):
            raise first
        if not isinstance(first, Welcome):
            raise ProtocolError(f"the server's first message is not a Welcome: {first}")
        if first.version not in PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"the server chose protocol version {first.version}; "
                f"this SDK speaks {list(PROTOCOL_VERSIONS)}"
            )
        session = BotSession(server, first, call, outbox, inbox)
        yield session
    except trio.EndOfChannel:
        raise ConnectionLostError(
            f"{server}: the server closed the stream before Welcome"
        ) from None
    finally:
        outbox.put(CLOSE)
        if call is not None:
            call.cancel()
        inbox.close()
        ch.close()
