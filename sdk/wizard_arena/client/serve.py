"""The trio runner: :func:`serve_bot` plays an :class:`AsyncBot` (decisions
are coroutines, cancelled at the deadline) or an ordinary bot (decisions in a
worker thread) over :func:`~wizard_arena.client.open_bot_session`;
:func:`serve_sessions` is the same over any
:class:`~wizard_arena.client.session.Session` and clock."""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, Final

import grpc
import trio

from wizard_arena.bot import (
    Bot,
    BotError,
    GameInfo,
    GameSummary,
    decide,
    to_action,
)
from wizard_arena.client import waiting
from wizard_arena.client.blocking import CLOSE_GRACE
from wizard_arena.client.connection import DEFAULT_SERVER, bot_name, log
from wizard_arena.client.driver import Driver, Effect, Hook, Send, event_stream_for
from wizard_arena.client.errors import ArenaError
from wizard_arena.client.results import ClientRecord, RunResult
from wizard_arena.client.retry import Backoff, after_stream_error
from wizard_arena.client.session import Session, open_bot_session
from wizard_arena.client.waiting import WaitNotes, table_size, waiting_text
from wizard_arena.protocol.messages import ActionMsg, EventStream, ServerMsg, Welcome
from wizard_arena.rules import Action, Phase, RoundResult, SeatView, Trick

__all__ = ["AsyncBot", "Connect", "serve_bot", "serve_sessions"]


class AsyncBot:
    """Base class of a bot whose decisions are trio coroutines (for
    :func:`serve_bot`). The methods mirror :class:`~wizard_arena.bot.Bot`'s.

    A decision is cancelled ``margin`` seconds before its deadline and the
    referee's default action is sent; use :func:`trio.to_thread.run_sync`
    for long CPU-bound work so the event loop stays responsive. It gets the
    lean event stream unless it overrides ``on_trick_end`` or
    ``on_round_end`` or sets :attr:`event_stream`, as a
    :class:`~wizard_arena.bot.Bot` does.
    """

    name: str = "bot"
    #: As :attr:`wizard_arena.bot.Bot.event_stream`.
    event_stream: ClassVar[str | None] = None
    _sdk_base: ClassVar[bool] = True

    async def bid(self, view: SeatView) -> Any:
        """How many tricks to bid (an ``int`` or :class:`~wizard_arena.rules.Bid`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement bid(view)")

    async def play(self, view: SeatView) -> Any:
        """Which card to play (a :class:`~wizard_arena.rules.Card` or ``Play``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement play(view)")

    async def choose_trump(self, view: SeatView) -> Any:
        """The trump suit after a turned Wizard; by default as :class:`Bot`'s."""
        return Bot.choose_trump(_PLAIN_BOT, view)

    async def on_game_start(self, info: GameInfo) -> None:
        """The game starts."""

    async def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        """A trick was completed (``view`` is taken just after it)."""

    async def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        """A round was scored."""

    async def on_game_end(self, summary: GameSummary) -> None:
        """The game is over."""


_PLAIN_BOT: Final = Bot()


async def _decide_async(bot: AsyncBot, view: SeatView) -> Action:
    phase = view.phase
    if phase is Phase.PLAY:
        return to_action(view, await bot.play(view))
    if phase is Phase.BID:
        return to_action(view, await bot.bid(view))
    if phase is Phase.CHOOSE_TRUMP:
        return to_action(view, await bot.choose_trump(view))
    raise BotError(f"no decision in phase {phase.value}")


async def serve_bot(
    bot: Bot | AsyncBot,
    server: str = DEFAULT_SERVER,
    name: str | None = None,
    token: str | None = None,
    games: int | None = None,
    reconnect: bool = True,
    *,
    reconnect_timeout: float = 60.0,
    strict: bool = False,
    margin: float = 0.1,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
    on_record: Callable[[ClientRecord], None] | None = None,
    keep_records: bool = True,
    event_stream: EventStream | str | None = None,
    stop_at_shutdown: bool = False,
    task_status: trio.TaskStatus[Welcome] = trio.TASK_STATUS_IGNORED,
) -> RunResult:
    """The trio form of :func:`run_bot`: play ``bot`` on ``server`` until the
    server ends the stream or ``games`` games are over. ``event_stream``
    (default: the bot's choice, :func:`~wizard_arena.client.event_stream_for`)
    and ``stop_at_shutdown`` as for :func:`run_bot`.

    ``bot`` is an :class:`AsyncBot` (decisions are awaited and cancelled
    ``margin`` seconds before the deadline, then the default is sent) or a
    plain :class:`~wizard_arena.bot.Bot` (each decision runs in a worker
    thread, so other tasks go on meanwhile). With ``nursery.start(serve_bot,
    ...)`` the start returns the first :class:`~wizard_arena.protocol.messages.Welcome`.
    """
    if games is not None and games < 1:
        raise ValueError("games must be at least 1")
    driver = Driver(
        RunResult(), strict=strict, games=games, on_record=on_record, keep_records=keep_records
    )
    name = bot_name(bot, name)
    events = event_stream_for(bot) if event_stream is None else EventStream(event_stream)

    def connect(resume_token: str) -> AbstractAsyncContextManager[Session]:
        return open_bot_session(
            server,
            name=name,
            token=token,
            rule_options=rule_options,
            credentials=credentials,
            channel_options=channel_options,
            resume_token=resume_token,
            event_stream=events,
        )

    return await serve_sessions(
        connect,
        bot,
        driver,
        reconnect=reconnect,
        reconnect_timeout=reconnect_timeout,
        margin=margin,
        table_size=lambda: table_size(server, credentials),
        stop_at_shutdown=stop_at_shutdown,
        task_status=task_status,
    )


Connect = Callable[[str], AbstractAsyncContextManager[Session]]
"""Opens a session (its Welcome received), given the resume token to send
(``""``: a new session); raises an :class:`ArenaError` if refused."""


async def serve_sessions(
    connect: Connect,
    bot: Bot | AsyncBot,
    driver: Driver,
    *,
    reconnect: bool = True,
    reconnect_timeout: float = 60.0,
    margin: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
    table_size: Callable[[], int | None] | None = None,
    stop_at_shutdown: bool = False,
    task_status: trio.TaskStatus[Welcome] = trio.TASK_STATUS_IGNORED,
) -> RunResult:
    """:func:`serve_bot` over the sessions that ``connect`` opens (one at a
    time, again after a lost connection if ``reconnect``); returns
    ``driver.result``. While no game is in progress it logs every so often
    that the bot waits (:mod:`~wizard_arena.client.waiting`), with the
    players a table needs if ``table_size`` (called in a thread, once) says.

    ``clock`` is the clock of the sessions' ``received_at``, by which the
    bot's decisions are timed (:func:`serve_bot`'s gRPC sessions:
    ``time.monotonic``). This is the trio runner's transport seam: a test
    can give it sessions in memory and ``trio.current_time``, so that
    deadlines run on trio's virtual clock.
    """
    result = driver.result
    backoff = Backoff(reconnect_timeout)
    started = False
    while True:
        welcomed = False
        try:
            async with connect(driver.resume_token) as session:
                welcomed = True
                backoff.reset()
                driver.welcome(session.welcome)
                if started:
                    result.reconnects += 1
                else:
                    started = True
                    task_status.started(session.welcome)
                notes = _WaitNotes(driver, clock, table_size)
                await _play(session, bot, driver, margin, clock, notes)
            driver.finish()
            return result
        except ArenaError as e:
            try:
                delay = after_stream_error(
                    e, driver, welcomed, reconnect, backoff, stop_at_shutdown
                )
            except ArenaError:
                driver.finish()
                raise
            if delay is None:
                driver.finish()
                return result
            await trio.sleep(delay)


class _WaitNotes:
    """The trio runner's notes that the bot waits for a game."""

    def __init__(
        self,
        driver: Driver,
        clock: Callable[[], float],
        table_size: Callable[[], int | None] | None,
    ) -> None:
        self.schedule = WaitNotes(lambda: driver.idle, lambda: len(driver.result.games))
        self.clock = clock
        self.table_size = table_size
        self.players: int | None = None

    async def check(self) -> None:
        waited = self.schedule.due(self.clock())
        if waited is None:
            return
        if self.table_size is not None:
            ask, self.table_size = self.table_size, None  # once
            self.players = await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
        log.info("%s", waiting_text(waited, self.players))


async def _next(messages: AsyncIterator[ServerMsg], driver: Driver, notes: _WaitNotes) -> ServerMsg:
    """The session's next message; while the bot waits for a game, with a
    check every :data:`~wizard_arena.client.waiting.POLL` seconds whether to say so."""
    while driver.idle:
        await notes.check()
        with trio.move_on_after(waiting.POLL):
            return await anext(messages)
    return await anext(messages)


async def _play(
    session: Session,
    bot: Bot | AsyncBot,
    driver: Driver,
    margin: float,
    clock: Callable[[], float],
    notes: _WaitNotes,
) -> None:
    """Play on ``session`` until the server ends it or the games are played."""
    messages = aiter(session)
    while True:
        try:
            msg = await _next(messages, driver, notes)
        except StopAsyncIteration:
            return
        for effect in driver.receive(msg, session.received_at):
            out = await _perform_async(bot, driver, effect, margin, clock)
            if out is not None:
                await session.send(out)
        if driver.done:
            session.close_sending()
            with trio.move_on_after(CLOSE_GRACE):
                try:
                    async for _ in session:
                        pass  # a next game may already have been seated
                except ArenaError:
                    pass
            return


async def _perform_async(
    bot: Bot | AsyncBot, driver: Driver, effect: Effect, margin: float, clock: Callable[[], float]
) -> ActionMsg | None:
    if isinstance(effect, Send):
        return effect.msg
    if isinstance(effect, Hook):
        try:
            out = getattr(bot, effect.name)(*effect.args)
            if inspect.isawaitable(out):
                await out
        except Exception as e:
            driver.hook_failed(effect.name, e)
        return None
    pending = effect.pending
    view = pending.view
    outcome: Action | BaseException
    if isinstance(bot, AsyncBot):
        deadline = pending.deadline
        # trio's clock need not be the session's: convert the deadline
        until = (
            math.inf if deadline is None else trio.current_time() + (deadline - clock()) - margin
        )
        with trio.move_on_at(until) as scope:
            try:
                outcome = await _decide_async(bot, view)
            except Exception as e:
                outcome = e
        if scope.cancelled_caught:
            return driver.cancelled(pending, clock() - pending.received)
    else:
        try:
            outcome = await trio.to_thread.run_sync(decide, bot, view, abandon_on_cancel=True)
        except Exception as e:
            outcome = e
    took = clock() - pending.received
    return driver.decided(pending, outcome, took)
