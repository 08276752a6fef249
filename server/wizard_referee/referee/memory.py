"""An in-memory transport: a bot's connection as two trio channels, no gRPC.

:class:`MemorySeat` is the referee's end, a :class:`~wizard_referee.referee.seat.Seat`
the arena accepts exactly as it accepts a gRPC stream
(``arena.accept(seat)``); :class:`MemoryBot` is the bot's end, which a test
(or any trio code) drives with the domain messages of
:mod:`wizard_arena.protocol.messages`. Both ends live in one trio run, so a
whole server (handshake, resume, matchmaking, tables) runs on trio's
virtual clock (``trio.testing.MockClock``): deterministic, no threads, no ports.

Its trio side is the gRPC transport's (:class:`~wizard_referee.referee.seat.SeatBase`,
the base of both; ``tests/test_seat_contract.py``), short of the bytes: a
bot that sends more than ``inbound_limit``
messages the referee has not read is cut off (``flooded``,
RESOURCE_EXHAUSTED); a bot that leaves ends its stream with OK, except
while its first message is unread (then the referee's close, if any, is
what it learns); more than ``outbound_limit`` messages left unread by the bot
(there is no flow-control window here: every unread message counts) end the
stream with RESOURCE_EXHAUSTED at once, dropping them.

>>> import trio
>>> from wizard_arena.protocol.messages import Hello, Welcome
>>> async def main():
...     bot = connect(lambda seat: None)
...     bot.send(Hello("me"))
...     hello = await bot.seat.receive()
...     bot.seat.send(Welcome(1, "s1", "0"))
...     bot.seat.close(CloseCode.UNAVAILABLE, "bye")
...     welcome = await bot.receive()
...     return hello.bot_name, welcome.session_id, bot.closed_with
>>> trio.run(main)
('me', 's1', (<CloseCode.UNAVAILABLE: 'UNAVAILABLE'>, 'bye'))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import trio

from wizard_arena.protocol.messages import BotMsg, ServerMsg
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.seat import CloseCode, Malformed, Seat, SeatBase

__all__ = ["MemoryBot", "MemorySeat", "connect"]

_ids = itertools.count(1)


class MemorySeat(SeatBase):
    """The referee's end of an in-memory bot connection (a :class:`Seat`)."""

    def __init__(
        self, *, inbound_limit: int = 64, outbound_limit: int = 256, peer: str = "memory"
    ) -> None:
        super().__init__(f"m{next(_ids)}", peer, inbound_limit)
        self.outbound_limit = outbound_limit
        self.min_rtt: float | None = None
        """What :meth:`kernel_rtt` says (a test sets the kernel's measure
        of a connection that has none)."""
        self.closed_with: tuple[CloseCode, str] | None = None
        """How the stream ended for the bot (None while it is open, and for a
        bot that disconnected abruptly)."""
        self._out, self._outbox = trio.open_memory_channel[ServerMsg](math.inf)
        self.bot = MemoryBot(self)

    def send(self, msg: ServerMsg) -> None:
        if self.closed:
            return
        if self._outbox.statistics().current_buffer_used >= self.outbound_limit:
            self._drop_unsent()
            details = (
                f"outbound queue full ({self.outbound_limit} messages): "
                "the bot is not reading what the server sends"
            )
            self.close(CloseCode.RESOURCE_EXHAUSTED, details)
            return
        self._out.send_nowait(msg)

    def kernel_rtt(self) -> float | None:
        return self.min_rtt

    def _finish(self, code: CloseCode | None, details: str) -> None:
        """End the outbound side: the bot reads what is left, then the end
        (``code`` None: the bot dropped it)."""
        if code is not None:
            self.closed_with = (code, details)
        self._out.close()

    def _drop_unsent(self) -> None:
        while True:
            try:
                self._outbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return

    def __repr__(self) -> str:
        return f"<MemorySeat {self.id}{' closed' if self.closed else ''}>"


class MemoryBot:
    """The bot's end of a :class:`MemorySeat`."""

    def __init__(self, seat: MemorySeat) -> None:
        self.seat = seat
        self._leaving = False
        self.cancelled = False
        """True once the bot dropped the connection abruptly (:meth:`disconnect`)."""

    @property
    def closed_with(self) -> tuple[CloseCode, str] | None:
        """The status the stream ended with: ``(code, details)``; None while open."""
        return self.seat.closed_with

    def send(self, msg: BotMsg | Malformed) -> None:
        """Send ``msg`` to the referee (a :class:`Malformed` stands for bytes
        that do not decode). Nothing is sent once the bot left or the stream ended."""
        if not self._leaving and not self.cancelled:
            self.seat._deliver(msg)

    async def receive(self) -> ServerMsg:
        """The next message from the referee; :class:`trio.EndOfChannel` once
        the stream has ended and everything sent before was read (at once
        after :meth:`disconnect`)."""
        if self.cancelled:
            raise trio.EndOfChannel
        return await self.seat._outbox.receive()

    def leave(self) -> None:
        """Half-close: the bot sends nothing more and leaves (reading goes on)."""
        if not self._leaving:
            self._leaving = True
            self.seat._bot_left("the bot closed the stream")

    def disconnect(self) -> None:
        """Drop the connection abruptly, as a crashing client would."""
        if not self.cancelled:
            self.cancelled = True
            self.seat._mark_closed("stream cancelled")
            self.seat._end(None)  # (what was sent before is lost with it)


def connect(
    accept: Callable[[Seat], None], policy: RefereePolicy | None = None, peer: str = "memory"
) -> MemoryBot:
    """A new in-memory connection handed to ``accept`` (e.g. ``arena.accept``),
    with the limits of ``policy``, from ``peer`` (e.g. ``ipv4:10.0.0.1:5555``);
    returns the bot's end."""
    p = policy or RefereePolicy()
    seat = MemorySeat(inbound_limit=p.inbound_limit, outbound_limit=p.outbound_limit, peer=peer)
    accept(seat)
    return seat.bot
