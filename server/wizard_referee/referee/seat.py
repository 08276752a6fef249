"""What the referee needs of a bot's connection: the :class:`Seat` protocol.

The arena (handshake, sessions, matchmaking) and the tables talk to bots
only through this protocol (a table's seats are :class:`SeatSpec` values).
It is implemented by the gRPC transport
(:class:`wizard_referee.referee.bridge.Connection`) and by the in-memory
seat of :mod:`wizard_referee.referee.memory`, so the whole referee runs with
no transport at all, on trio's virtual clock in tests.

Both are written on one base, :class:`SeatBase`: the trio side of a
stream (the inbound queue and its limit, ``route``, the end of the stream
as the referee sees it), so the mock-clock tests, run on in-memory seats,
hold for the gRPC stream too (``tests/test_seat_contract.py`` runs the
same contract on both). A transport adds how messages go out and how the
stream ends for the bot (:meth:`SeatBase._finish`).

Deadlines are the caller's (a table's :mod:`~wizard_referee.referee.alarm`),
so the transport knows nothing of time.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from wizard_arena.protocol.codes import EventStream
from wizard_arena.protocol.messages import BotMsg, ClockProbeReply, ServerMsg
from wizard_referee.referee.clock_probes import ClockProbes

__all__ = ["CloseCode", "Malformed", "Seat", "SeatBase", "SeatSpec"]


class CloseCode(enum.Enum):
    """How the server ends a bot's stream (the gRPC transport maps each to
    the status code of the same name)."""

    OK = "OK"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    UNAVAILABLE = "UNAVAILABLE"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message from the bot that did not decode (e.g. an empty message)."""

    detail: str


class Seat(Protocol):
    """One bot's connection, as the referee sees it.

    ``receive()`` gives the bot's messages in order (a message that did not
    decode as :class:`Malformed`) and raises :class:`trio.EndOfChannel` once
    the bot has gone and everything it sent has been read. ``send()`` and
    ``close()`` never block: a message for a bot that is gone is dropped.
    """

    id: str
    """Names the connection in logs (``c12``)."""
    peer: str
    """Where the bot is (``ipv4:127.0.0.1:5555``; ``memory`` in memory)."""
    closed: bool
    """True once the stream has ended (the bot left, or the server closed it)."""
    close_reason: str
    """Why it ended (``closed by server: CODE details``, ``the bot closed the stream``...)."""
    flooded: bool
    """True if it was cut off for sending faster than the referee reads."""
    on_closed: Callable[[Seat], None] | None
    """Called once (in trio) when the stream ends, for any reason."""
    unread: int
    """Messages that have arrived and that ``receive()`` has not returned yet."""
    received: int
    """Messages ``receive()`` has returned (so a reader can tell when it has
    read everything that had arrived at some point: ``received + unread``)."""
    route: Callable[[BotMsg | Malformed], bool] | None
    """Set by a table while its game runs: offered each message (in trio) as
    it arrives while nothing is queued for ``receive()``; a message it takes
    (returns True) is not queued. The table takes only the answer to the
    seat's open request, handing it straight to the decision waiting for it
    (one trio task switch fewer per decision than through its reader task)."""
    clock: ClockProbes | None
    """The connection's clock probes, when the bot asked for them and the
    server gives a network credit (set by the arena): each ClockProbeReply
    goes there as it arrives, never to ``route`` or ``receive()`` (without
    probes it is dropped), except as the first message (the handshake
    refuses it). Replies count against the flood limit: more than the
    probes sent plus ``inbound_limit`` cut the bot off (``flooded``)."""

    def kernel_rtt(self) -> float | None:
        """The kernel's smallest round trip on the connection, in seconds
        (``tcpi_min_rtt``; 0 for a bot on this machine); None when not known."""
        ...

    async def receive(self) -> BotMsg | Malformed:
        """The next message from the bot; :class:`trio.EndOfChannel` when it has gone."""
        ...

    def send(self, msg: ServerMsg) -> None:
        """Queue ``msg`` for the bot."""
        ...

    def close(self, code: CloseCode = CloseCode.OK, details: str = "") -> None:
        """End the stream with ``code`` after everything already sent."""
        ...


class SeatBase:
    """The trio side of one bot's stream (a :class:`Seat` but for ``send``):
    what the transport delivers (:meth:`_deliver`, in trio) is offered to
    ``route`` or queued for :meth:`receive`; more than ``inbound_limit``
    messages unread cut the bot off (``flooded``, RESOURCE_EXHAUSTED).

    How the stream ends: :meth:`close` (the server), :meth:`_bot_left` (the
    bot half-closed, or the stream ended under it), or the end of the queue
    read (:meth:`receive`). When the bot leaves the stream ends with OK,
    except while its first message is unread: then it ends when that
    message has been read, with the status the reader gives it (``close()``;
    or OK once ``receive()`` reaches the end), so a bot that sends one
    message and half-closes still learns why it was refused. A transport
    ends the stream for the bot in :meth:`_finish`, called once."""

    def __init__(self, conn_id: str, peer: str, inbound_limit: int) -> None:
        self.id = conn_id
        self.peer = peer
        self.closed = False
        """True once the stream has ended (bot left, or closed by the server)."""
        self.close_reason = ""
        self.flooded = False
        self.on_closed: Callable[[Seat], None] | None = None
        """Called (in trio) once, when the stream ends for any reason."""
        self.route: Callable[[BotMsg | Malformed], bool] | None = None
        """Offered each message before it is queued (:class:`Seat`)."""
        self.clock: ClockProbes | None = None
        """Takes the clock probe replies (:class:`Seat`)."""
        self.inbound_limit = inbound_limit
        self.unread = 0
        """Messages queued and not yet returned by ``receive()``: ``route``
        is offered none while one is (the reader sees them in order)."""
        self.received = 0
        """Messages ``receive()`` has returned."""
        self._first_unread = True
        self._probe_replies = 0
        """ClockProbeReply messages received: more than the probes sent plus
        ``inbound_limit`` is a flood (each probe earns at most one reply)."""
        self._finished = False
        """The end of the stream for the bot is decided (:meth:`_end`)."""
        self._in, self._inbox = trio.open_memory_channel[BotMsg | Malformed](inbound_limit)

    async def receive(self) -> BotMsg | Malformed:
        """The next message from the bot; EndOfChannel when it has gone."""
        try:
            msg = await self._inbox.receive()
        except trio.EndOfChannel:
            self._end(CloseCode.OK)  # the bot left and everything was read
            raise
        self._first_unread = False
        self.unread -= 1
        self.received += 1
        return msg

    def send(self, msg: ServerMsg) -> None:
        """The transport's: queue ``msg`` for the bot (dropped once closed)."""
        raise NotImplementedError

    def kernel_rtt(self) -> float | None:
        """The transport's: the kernel's measure of the connection (:class:`Seat`)."""
        return None

    def close(self, code: CloseCode = CloseCode.OK, details: str = "") -> None:
        """End the stream with ``code`` after everything already sent."""
        if self._finished:
            return
        self._mark_closed(f"closed by server: {code.name} {details}".strip())
        self._end(code, details)

    # -- what the transport calls, in trio ---------------------------------------

    def _deliver(self, msg: BotMsg | Malformed) -> None:
        """A message from the bot."""
        if self.closed:
            return
        if type(msg) is ClockProbeReply and not (self._first_unread and not self.unread):
            # (a reply as the first message is queued: the handshake refuses it)
            self._probe_replies += 1
            clock = self.clock
            if clock is not None:
                clock.reply(msg.id)
            if self._probe_replies > self.inbound_limit + (clock.sent if clock else 0):
                self._flood(
                    f"{self._probe_replies} clock probe replies to "
                    f"{clock.sent if clock else 0} probes: "
                    "the bot sent faster than the referee reads"
                )
            return
        route = self.route
        if route is not None and not self.unread and route(msg):
            self._first_unread = False  # read: by the table it was routed to
            return
        try:
            self._in.send_nowait(msg)
            self.unread += 1
        except trio.WouldBlock:
            self._flood(
                f"inbound queue full ({self.inbound_limit} messages): "
                "the bot sent faster than the referee reads"
            )

    def _flood(self, details: str) -> None:
        """Cut the bot off for flooding (RESOURCE_EXHAUSTED)."""
        self.flooded = True
        self.close(CloseCode.RESOURCE_EXHAUSTED, details)

    def _bot_left(self, reason: str) -> None:
        """The bot sends nothing more (it half-closed, or the stream ended
        under it: ``reason``): the stream ends with OK, unless its first
        message is unread (then the reader ends it)."""
        self._mark_closed(reason)
        if not self._first_unread:
            self._end(CloseCode.OK)

    def _mark_closed(self, reason: str) -> None:
        """The stream is closed (``reason``): nothing more is delivered."""
        if not self.closed:
            self.closed = True
            self.close_reason = reason
            if self.on_closed is not None:
                self.on_closed(self)
        self._in.close()

    def _end(self, code: CloseCode | None, details: str = "") -> None:
        """End the stream for the bot, once (``code`` None: it dropped it)."""
        if not self._finished:
            self._finished = True
            self._finish(code, details)

    def _finish(self, code: CloseCode | None, details: str) -> None:
        """The transport's: end the stream for the bot with ``code`` after
        what was sent (None: the bot dropped the connection)."""
        raise NotImplementedError


@dataclass
class SeatSpec:
    """Who sits in a seat: a name and the bot's connection (``None``: the
    referee's default policy plays the seat from the start)."""

    name: str
    conn: Seat | None
    issued: set[str] = field(default_factory=set)
    """Request ids issued to this bot in this game (so late answers are recognised)."""
    earlier: set[str] = field(default_factory=set)
    """Request ids issued to it in its previous game (late answers, too)."""
    timeouts_in_a_row: int = 0
    """The bot's last decisions that timed out (carried over from its
    previous games by the arena)."""
    reattach: Callable[[Seat], None] | None = None
    """Set by the table while the game runs: give the seat back to the bot on
    a new connection (a resumed session). The table sends it the game in
    progress and, if a decision is open for the seat, the request again."""
    event_stream: EventStream = EventStream.ALL
    """The messages the bot chose (Hello.event_stream): with ``LEAN`` the
    table sends it no RoundStarted, TrumpChosen, BidMade, CardPlayed or
    TrickWon."""
