"""The blocking runner: :func:`run_bot` plays an ordinary bot over one
gRPC stream at a time (reconnecting if asked), in the calling thread; each
message is one step of :func:`answer`, which any transport and clock can drive."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from wizard_arena.bot import Bot, decide
from wizard_arena.client import waiting
from wizard_arena.client.connection import (
    CLOSE,
    DEFAULT_SERVER,
    bot_name,
    channel,
    decode,
    error_from_rpc,
    hello,
    log,
    probe_reply,
    requests,
)
from wizard_arena.client.driver import Driver, Effect, Hook, Send, event_stream_for
from wizard_arena.client.errors import ArenaError, ProtocolError
from wizard_arena.client.results import ClientRecord, RunResult
from wizard_arena.client.retry import Backoff, after_stream_error
from wizard_arena.client.waiting import WaitNotes, table_size, waiting_text
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ActionMsg, EventStream, ServerMsg, Welcome
from wizard_arena.rules import Action

__all__ = ["CLOSE_GRACE", "answer", "run_bot"]

CLOSE_GRACE = 2.0
"""Seconds the server has to end the stream once the bot's games are played."""


def run_bot(
    bot: Bot,
    server: str = DEFAULT_SERVER,
    name: str | None = None,
    token: str | None = None,
    games: int | None = None,
    reconnect: bool = True,
    *,
    reconnect_timeout: float = 60.0,
    strict: bool = False,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
    on_record: Callable[[ClientRecord], None] | None = None,
    keep_records: bool = True,
    event_stream: EventStream | str | None = None,
    stop_at_shutdown: bool = False,
) -> RunResult:
    """Connect ``bot`` to ``server`` (``host:port``) and play until the
    server ends the stream, or ``games`` games are over. Blocks.
    ``stop_at_shutdown``: a server that shuts down cleanly ends the run (it
    returns, :attr:`RunResult.server_shut_down` set) rather than being
    reconnected to.

    ``name`` defaults to the bot's ``name`` attribute (or its class name);
    ``token`` is sent when the server requires one; ``rule_options`` (default
    :data:`RULE_OPTIONS`) are the rule variants the bot can play. Each
    decision and fault the SDK records is passed to ``on_record`` as it
    happens and kept on :attr:`RunResult.records` (unless ``keep_records``
    is false: a long run keeps one record per decision). ``event_stream``:
    the messages to ask for (default: the bot's choice,
    :func:`~wizard_arena.client.event_stream_for`: the lean stream unless the
    bot follows the play with ``on_trick_end`` or ``on_round_end``). See
    the module documentation for errors, deadlines, rejections and
    reconnecting.
    Raises an :class:`ArenaError`; ``KeyboardInterrupt`` closes the stream
    and propagates.
    """
    if games is not None and games < 1:
        raise ValueError("games must be at least 1")
    result = RunResult()
    driver = Driver(
        result, strict=strict, games=games, on_record=on_record, keep_records=keep_records
    )
    events = event_stream_for(bot) if event_stream is None else EventStream(event_stream)
    first_hello = hello(bot_name(bot, name), token, rule_options, events)
    backoff = Backoff(reconnect_timeout)
    connected_before = False
    while True:
        welcomed = False

        def on_welcome() -> None:
            nonlocal welcomed, connected_before
            welcomed = True
            if connected_before:
                result.reconnects += 1
            connected_before = True
            backoff.reset()

        stream = _Stream(bot, server, driver, on_welcome)
        try:
            stream.run(wire.encode_bot(driver.hello(first_hello)), credentials, channel_options)
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
            time.sleep(delay)


class _Stream:
    """One Play stream of :func:`run_bot`: messages in, the bot's answers out."""

    def __init__(
        self, bot: Bot, server: str, driver: Driver, on_welcome: Callable[[], None]
    ) -> None:
        self.bot = bot
        self.server = server
        self.driver = driver
        self.on_welcome = on_welcome
        self.outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.timer: threading.Timer | None = None
        self.credentials: grpc.ChannelCredentials | None = None
        self.ended = threading.Event()
        """Set when the stream ends: the thread of :meth:`_note_waiting` stops."""

    def run(
        self,
        first: Any,
        credentials: grpc.ChannelCredentials | None,
        channel_options: Sequence[tuple[str, Any]],
    ) -> None:
        """Send ``first`` (the Hello) and play until the stream ends."""
        self.credentials = credentials
        self.outbox.put(first)
        with channel(self.server, credentials, channel_options) as ch:
            call = wire.stub(ch).Play(requests(self.outbox))
            try:
                self._play(call)
            except grpc.RpcError as e:
                if self.driver.done:
                    return  # the games are played; how the stream ended does not matter
                raise error_from_rpc(e, self.server) from None
            finally:
                self.ended.set()
                self.outbox.put(CLOSE)
                if self.timer is not None:
                    self.timer.cancel()
                call.cancel()

    def _play(self, call: Any) -> None:
        driver = self.driver
        welcomed = False
        for pb_msg in call:
            at = time.monotonic()
            msg = decode(pb_msg)
            reply = probe_reply(msg)
            if reply is not None:
                self.outbox.put(wire.encode_bot(reply))
                continue
            if not welcomed:
                self._welcome(msg)
                welcomed = True
                continue
            for out in answer(self.bot, driver, msg, at):
                self.outbox.put(wire.encode_bot(out))
            if driver.done and self.timer is None:
                # Half-close: no more games; give the server a moment to end the stream.
                self.outbox.put(CLOSE)
                self.timer = threading.Timer(CLOSE_GRACE, call.cancel)
                self.timer.daemon = True
                self.timer.start()

    def _welcome(self, msg: object) -> None:
        if not isinstance(msg, Welcome):
            raise ProtocolError(f"the server's first message is not a Welcome: {msg}")
        self.driver.welcome(msg)
        log.info(
            "connected to %s (server %s, session %s)",
            self.server,
            msg.server_version,
            msg.session_id,
        )
        self.on_welcome()
        threading.Thread(
            target=self._note_waiting, name="wizard-arena-waiting", daemon=True
        ).start()

    def _note_waiting(self) -> None:
        """Log every so often that the bot waits for a game (:mod:`.waiting`)."""
        driver = self.driver
        notes = WaitNotes(lambda: driver.idle, lambda: len(driver.result.games))
        players: int | None = None
        asked = False
        while True:
            waited = notes.due(time.monotonic())
            if waited is not None:
                if not asked:
                    players, asked = table_size(self.server, self.credentials), True
                if self.ended.is_set():
                    return
                log.info("%s", waiting_text(waited, players))
            if self.ended.wait(waiting.POLL):
                return


def answer(
    bot: Bot,
    driver: Driver,
    msg: ServerMsg,
    at: float,
    clock: Callable[[], float] = time.monotonic,
) -> list[ActionMsg]:
    """One step of the blocking runner: ``msg`` (after the Welcome), received
    at ``at`` by ``clock``, in; the messages to send out. The bot's hooks and
    decisions run here, in the calling thread, each decision timed by
    ``clock`` from the request's arrival.

    :func:`run_bot` calls it for each message off its gRPC stream with
    ``time.monotonic``; a test can drive it over any transport with a
    virtual clock (a bot then "takes" time by advancing that clock).
    """
    if driver.done:
        return []  # stopping: a next game may already have been seated
    out = []
    for effect in driver.receive(msg, at):
        sent = _perform(bot, driver, effect, clock)
        if sent is not None:
            out.append(sent)
    return out


def _perform(
    bot: Bot, driver: Driver, effect: Effect, clock: Callable[[], float]
) -> ActionMsg | None:
    if isinstance(effect, Send):
        return effect.msg
    if isinstance(effect, Hook):
        try:
            getattr(bot, effect.name)(*effect.args)
        except Exception as e:
            driver.hook_failed(effect.name, e)
        return None
    pending = effect.pending
    outcome: Action | BaseException
    try:
        outcome = decide(bot, pending.view)
    except Exception as e:
        outcome = e
    took = clock() - pending.received
    return driver.decided(pending, outcome, took)
