"""The referee on trio's virtual clock: in-memory seats, scripted bots, no gRPC.

:func:`on_mock_clock` runs an async test with ``trio.run(...,
clock=MockClock(autojump_threshold=0))``: whenever every task waits, the
clock jumps to the next deadline, so a test that waits for a move time, a
time bank or a reconnect window takes no real time and does not depend on
the machine's load. :func:`memory_arena` is the real arena
(:func:`wizard_referee.referee.arena.open_arena`: handshake, sessions,
matchmaking, tables) with no transport; :class:`MemBot` is a scripted bot on
an in-memory seat (:mod:`wizard_referee.referee.memory`) that speaks the
domain messages: by default it greets and answers every decision with a
random legal action; ``think`` (virtual seconds) and the hooks make it
misbehave on purpose.
"""

from __future__ import annotations

import functools
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio
import trio.testing

from wizard_arena.bot import GameInfo
from wizard_arena.protocol.messages import (
    ActionMsg,
    BotMsg,
    DecisionRequest,
    EventStream,
    GameEnd,
    Hello,
    ServerMsg,
)
from wizard_arena.rules import Action, Rules
from wizard_arena.testing.inbox import Inbox
from wizard_referee.referee.arena import Arena, ArenaConfig, open_arena
from wizard_referee.referee.memory import MemoryBot, MemorySeat, connect
from wizard_referee.referee.record import GameRecord
from wizard_referee.referee.seat import CloseCode, Malformed

__all__ = ["MemBot", "memory_arena", "on_mock_clock", "play"]

T = TypeVar("T")


def on_mock_clock(fn: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """Run the async test ``fn`` in trio on a virtual clock that jumps to the
    next deadline whenever every task waits (pytest fixtures still work)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        clock = trio.testing.MockClock(autojump_threshold=0)
        return trio.run(functools.partial(fn, *args, **kwargs), clock=clock)

    return run


@asynccontextmanager
async def memory_arena(**settings: Any) -> AsyncIterator[Arena]:
    """An arena with no transport (``ArenaConfig.build(**settings)``; by
    default 3 players, a 5 s move time and seeded deals)."""
    settings.setdefault("rules", Rules(players=3))
    settings.setdefault("move_time", 5.0)
    settings.setdefault("seed", 7)
    async with open_arena(ArenaConfig.build(**settings)) as arena:
        yield arena


RequestHook = Callable[["MemBot", DecisionRequest], Awaitable[bool]]
MessageHook = Callable[["MemBot", ServerMsg], Awaitable[None]]


class MemBot(Inbox):
    """A scripted bot on an in-memory seat.

    ``think``: virtual seconds to wait before each answer (or a function of
    the request giving them). ``games``: leave (half-close) after this many
    GameOver messages (``None``: stay until the server ends the stream).
    ``on_request(bot, request) -> bool``: awaited for each decision request
    before the default answer; True when the hook answered (or deliberately
    did not). ``on_message(bot, msg)``: awaited for every message.
    ``seat``: the referee's end of the connection (default: a new
    :class:`~wizard_referee.referee.memory.MemorySeat` with the arena's limits).
    """

    def __init__(
        self,
        name: str = "mem",
        *,
        token: str = "",
        rule_options: tuple[str, ...] = (),
        resume_token: str = "",
        min_version: int = 1,
        max_version: int = 1,
        hello: bool = True,
        first: Sequence[BotMsg | Malformed] = (),
        think: float | Callable[[DecisionRequest], float] = 0.0,
        games: int | None = 1,
        on_request: RequestHook | None = None,
        on_message: MessageHook | None = None,
        event_stream: EventStream = EventStream.ALL,
        seat: MemorySeat | None = None,
    ) -> None:
        self.name = name
        self.seat = seat
        self.hello = Hello(
            bot_name=name,
            min_version=min_version,
            max_version=max_version,
            token=token,
            sdk_name="tests-memory-bot",
            sdk_version="0",
            rule_options=rule_options,
            resume_token=resume_token,
            event_stream=event_stream,
        )
        self.send_hello = hello
        self.first = list(first)
        self.think = think
        self.games = games
        self.on_request = on_request
        self.on_message = on_message
        self.rng = random.Random(name)
        self.received: list[ServerMsg] = []
        self.state: dict[str, Any] = {}
        """Free space for hooks."""
        self.games_over = 0
        self.info: GameInfo | None = None
        """The GameStarted of the current (latest) game."""
        self.end: MemoryBot | None = None
        self.done = trio.Event()

    # -- the stream --------------------------------------------------------------------

    async def run(self, arena: Arena, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Connect to ``arena``, greet it and play until the stream ends."""
        if self.seat is None:
            end = self.end = connect(arena.accept, arena.config.policy)
        else:
            arena.accept(self.seat)
            end = self.end = self.seat.bot
        for msg in self.first:
            end.send(msg)
        if self.send_hello:
            end.send(self.hello)
        task_status.started(self)
        try:
            while True:
                try:
                    msg = await end.receive()
                except trio.EndOfChannel:
                    return
                await self._handle(msg)
        finally:
            self.done.set()

    async def _handle(self, msg: ServerMsg) -> None:
        self.received.append(msg)
        if isinstance(msg, GameInfo):
            self.info = msg
        if self.on_message is not None:
            await self.on_message(self, msg)
        if isinstance(msg, DecisionRequest):
            if self.on_request is not None and await self.on_request(self, msg):
                return
            think = self.think(msg) if callable(self.think) else self.think
            if think:
                await trio.sleep(think)
            self.send_action(msg.request_id, self.random_action(msg))
        elif isinstance(msg, GameEnd):
            self.games_over += 1
            if self.games is not None and self.games_over >= self.games:
                self.leave()

    def send(self, msg: BotMsg | Malformed) -> None:
        assert self.end is not None
        self.end.send(msg)

    def send_action(self, request_id: str, action: Action | None) -> None:
        self.send(ActionMsg(request_id, action))

    def leave(self) -> None:
        """Half-close: the bot leaves (it still reads to the end of the stream)."""
        assert self.end is not None
        self.end.leave()

    def disconnect(self) -> None:
        """Drop the connection abruptly, as a crashing client would."""
        assert self.end is not None
        self.end.disconnect()

    def random_action(self, req: DecisionRequest) -> Action:
        return self.rng.choice(req.view.legal_actions)

    # -- what happened -----------------------------------------------------------------

    @property
    def closed_with(self) -> tuple[CloseCode, str] | None:
        """How the server ended the stream (None: open, or the bot disconnected)."""
        return self.end.closed_with if self.end is not None else None

    @property
    def status(self) -> CloseCode | None:
        return self.closed_with[0] if self.closed_with is not None else None

    @property
    def details(self) -> str:
        return self.closed_with[1] if self.closed_with is not None else ""

    def messages(self, kind: type | tuple[type, ...] | None = None) -> list[Any]:
        return [m for m in self.received if kind is None or isinstance(m, kind)]

    def __repr__(self) -> str:
        return f"<MemBot {self.name} status={self.status} received={len(self.received)}>"


def leave_at(n: int) -> RequestHook:
    """An on_request hook: drop the connection, unanswered, at the n-th request
    (kept in ``bot.state["left_at"]``)."""

    async def hook(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) >= n:
            bot.state["left_at"] = req
            bot.disconnect()
            return True
        return False

    return hook


async def start(nursery: trio.Nursery, arena: Arena, *bots: MemBot) -> None:
    """Connect ``bots`` to ``arena`` in order, each playing in ``nursery``."""
    for bot in bots:
        await nursery.start(bot.run, arena)


async def play(arena: Arena, *bots: MemBot) -> list[GameRecord]:
    """Connect ``bots`` (in order) and wait until each stream has ended;
    return the arena's records."""
    async with trio.open_nursery() as nursery:
        await start(nursery, arena, *bots)
    return list(arena.records)


async def wait_until(cond: Callable[[], bool]) -> None:
    """Wait (on the virtual clock) until ``cond()`` holds."""
    while not cond():
        await trio.sleep(0.01)
