"""What the referee needs of a bot's connection: the :class:`Seat` protocol.

The arena (handshake, sessions, matchmaking) and the tables talk to bots
only through this protocol (a table's seats are :class:`SeatSpec` values).
It is implemented by the gRPC transport
(:class:`wizard_referee.referee.bridge.Connection`) and by the in-memory
seat of :mod:`wizard_referee.referee.memory`, so the whole referee runs with
no transport at all, on trio's virtual clock in tests.

Deadlines are the caller's (a table's :mod:`~wizard_referee.referee.alarm`),
so the transport knows nothing of time.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from wizard_arena.protocol.codes import EventStream
from wizard_arena.protocol.messages import BotMsg, ServerMsg

__all__ = ["CloseCode", "Malformed", "Seat", "SeatSpec"]


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
    route: Callable[[BotMsg | Malformed], bool] | None
    """Set by a table while its game runs: offered each message (in trio) as
    it arrives while nothing is queued for ``receive()``; a message it takes
    (returns True) is not queued. The table takes only the answer to the
    seat's open request, handing it straight to the decision waiting for it
    (one trio task switch fewer per decision than through its reader task)."""

    async def receive(self) -> BotMsg | Malformed:
        """The next message from the bot; :class:`trio.EndOfChannel` when it has gone."""
        ...

    def send(self, msg: ServerMsg) -> None:
        """Queue ``msg`` for the bot."""
        ...

    def close(self, code: CloseCode = CloseCode.OK, details: str = "") -> None:
        """End the stream with ``code`` after everything already sent."""
        ...


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
