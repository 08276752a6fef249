"""The SDK's runners against the real referee over in-memory seats, on
trio's virtual clock (no gRPC, no threads, no sleeping).

:func:`memory_sessions` opens sessions of the trio runner
(:class:`wizard_arena.client.session.Session`) on an arena's in-memory seats
(:mod:`wizard_referee.referee.memory`), for
:func:`wizard_arena.client.serve.serve_sessions` with ``clock=trio.current_time``:
the runner's deadlines are then on the clock the referee's are.
:func:`run_blocking` plays an ordinary bot as :func:`~wizard_arena.client.run_bot`
does (each message through :func:`wizard_arena.client.blocking.answer`),
timed by trio's clock, in the calling trio task: a bot "takes" time by
jumping the :class:`trio.testing.MockClock` (:func:`take`).

The client room never imports the server; only tests join the two.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from types import SimpleNamespace
from typing import cast

import grpc
import trio
import trio.testing

from wizard_arena.bot import Bot
from wizard_arena.client import ArenaError, ConnectionLostError, ProtocolError, RunResult
from wizard_arena.client.blocking import CLOSE_GRACE, answer
from wizard_arena.client.connection import error_from_rpc, hello, probe_reply
from wizard_arena.client.driver import Driver, event_stream_for
from wizard_arena.client.serve import Connect
from wizard_arena.protocol.messages import ActionMsg, EventStream, ServerMsg, Welcome
from wizard_referee.referee.arena import Arena
from wizard_referee.referee.memory import MemoryBot, connect
from wizard_referee.referee.seat import CloseCode

__all__ = ["MemorySession", "memory_sessions", "run_blocking", "take"]


def _ended(end: MemoryBot) -> ArenaError | None:
    """The SDK's error for how the stream ended (None: normally), mapped as
    the gRPC client maps the status of the same name."""
    status = end.closed_with
    if status is None or status[0] is CloseCode.OK:
        return None
    code, details = status
    rpc = SimpleNamespace(code=lambda: grpc.StatusCode[code.name], details=lambda: details)
    return error_from_rpc(cast(grpc.RpcError, rpc), "memory")


class MemorySession:
    """A :class:`~wizard_arena.client.session.Session` on an in-memory seat;
    ``received_at`` is on trio's clock. It answers clock probes as they
    arrive, as the gRPC session's reader does."""

    def __init__(self, end: MemoryBot, welcome: Welcome) -> None:
        self.end = end
        self.welcome = welcome
        self.received_at = trio.current_time()

    def __aiter__(self) -> MemorySession:
        return self

    async def __anext__(self) -> ServerMsg:
        while True:
            try:
                msg = await self.end.receive()
            except trio.EndOfChannel:
                err = _ended(self.end)
                if err is not None:
                    raise err from None
                raise StopAsyncIteration from None
            reply = probe_reply(msg)
            if reply is None:
                break
            self.end.send(reply)
        self.received_at = trio.current_time()
        return msg

    async def send(self, msg: ActionMsg) -> None:
        self.end.send(msg)
        await trio.lowlevel.checkpoint()

    def close_sending(self) -> None:
        self.end.leave()


def memory_sessions(
    arena: Arena,
    name: str,
    rule_options: Sequence[str] | None = None,
    event_stream: EventStream = EventStream.ALL,
) -> Connect:
    """Opens sessions of the bot ``name`` on ``arena``'s in-memory seats, as
    :func:`~wizard_arena.client.open_bot_session` opens them over gRPC
    (the SDK's Hello; leaving drops the connection)."""

    @asynccontextmanager
    async def open_session(resume_token: str) -> AsyncIterator[MemorySession]:
        end = connect(arena.accept, arena.config.policy)
        greeting = hello(name, None, rule_options, event_stream)
        end.send(replace(greeting, resume_token=resume_token))
        try:
            try:
                first = await end.receive()
            except trio.EndOfChannel:
                raise _ended(end) or ConnectionLostError("closed before Welcome") from None
            if not isinstance(first, Welcome):
                raise ProtocolError(f"the server's first message is not a Welcome: {first}")
            yield MemorySession(end, first)
        finally:
            end.disconnect()

    return open_session


async def run_blocking(bot: Bot, arena: Arena, name: str, games: int = 1) -> RunResult:
    """Play ``bot`` on ``arena`` for ``games`` games as :func:`run_bot`'s
    stream does, with trio's clock for ``time.monotonic``; the bot runs in
    this task (while it decides, no other task runs and no time passes
    unless it :func:`take` s it). The bot's event stream is its own choice,
    as with :func:`run_bot` (:func:`~wizard_arena.client.event_stream_for`)."""
    driver = Driver(RunResult(), strict=False, games=games)
    connect = memory_sessions(arena, name, event_stream=event_stream_for(bot))
    async with connect("") as session:
        driver.welcome(session.welcome)
        async for msg in session:
            for out in answer(bot, driver, msg, session.received_at, trio.current_time):
                await session.send(out)
            if driver.done:
                session.close_sending()
                with trio.move_on_after(CLOSE_GRACE):
                    async for _ in session:
                        pass
                break
    driver.finish()
    return driver.result


def take(seconds: float) -> None:
    """Let ``seconds`` pass on the virtual clock at once (a blocking bot's
    long think, with no sleeping)."""
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, trio.testing.MockClock), "needs trio's MockClock"
    clock.jump(seconds)
