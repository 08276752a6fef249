"""One seat at a table, as the table keeps it: :class:`SeatState`.

A seat's state is its :class:`~wizard_referee.referee.seat.SeatSpec` (who
sits there, on which connection), its answers channel and
:class:`~wizard_referee.referee.pending.Pending` request, whether its bot
has gone, and its time bank. What the seat does itself: sending (counted),
rejecting an action (with the time left on its open request), handling a
message that answers no open request (:meth:`SeatState.stray`: faulted and
rejected, or only logged) and, taken back on a new stream, sending the game
so far (:meth:`SeatState.catch_up`). What a fault costs is the table's (its
:class:`~wizard_referee.referee.faults.FaultBook`, the sanctions): the seat
talks to the table through the small :class:`Table` protocol, as the alarm
(:mod:`.alarm`) and the broadcast (:mod:`.broadcast`) do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import trio

from wizard_arena.bot import GameInfo
from wizard_arena.protocol.codes import EventStream, FaultCode, RejectCode
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    BotMsg,
    DecisionRequest,
    Hello,
)
from wizard_arena.rules import Game, Phase, action_text
from wizard_referee.referee.broadcast import round_start
from wizard_referee.referee.counters import ArenaCounters
from wizard_referee.referee.pending import Pending
from wizard_referee.referee.seat import Malformed, Seat, SeatSpec

__all__ = ["SeatState", "Table"]


class Table(Protocol):
    """What a seat asks of its table."""

    game_id: str
    bot_game_id: str
    game: Game
    move_time: float
    log: Any

    def fault(self, st: SeatState, code: FaultCode, detail: str) -> None:
        """Hold a fault against the seat (the fault policy says what it costs)."""
        ...

    def game_info(self, st: SeatState) -> GameInfo:
        """The seat's GameStarted."""
        ...


@dataclass(eq=False)
class SeatState:
    table: Table
    spec: SeatSpec
    seat: int
    send_answer: trio.MemorySendChannel[ActionMsg | None]
    answers: trio.MemoryReceiveChannel[ActionMsg | None]
    """The answers to the open request (None: a wake-up, see :meth:`Pending.expire`)."""
    counters: ArenaCounters
    bank: float = 0.0
    """Seconds left in the seat's time bank (at the open request's start)."""
    pending: Pending | None = None
    """The open request, while a decision waits for its answer."""
    gone: bool = False

    @property
    def conn(self) -> Seat | None:
        return None if self.gone else self.spec.conn

    @property
    def all_events(self) -> bool:
        """Whether the bot gets the table's public events (not the lean stream)."""
        return self.spec.event_stream is not EventStream.LEAN

    def send(self, msg: Any) -> None:
        conn = self.conn
        if conn is not None:
            conn.send(msg)
            self.counters.messages_out += 1

    def time_left(self) -> float:
        """Seconds left on the seat's open request (0 when none is open)."""
        return 0.0 if self.pending is None else self.pending.time_left()

    def reject(self, request_id: str, code: str, message: str, left: float) -> None:
        """Tell the bot its message was refused (``left``: seconds it has still)."""
        self.send(ActionRejected(request_id, self.table.bot_game_id, code, message, max(0.0, left)))

    # -- a message that answers no open request ----------------------------------------

    def stray(self, msg: BotMsg | Malformed) -> None:
        """A message from the seat's bot that does not answer its open request:
        faulted and rejected, or (a late or repeated answer) only logged."""
        table = self.table
        if isinstance(msg, Malformed):
            table.fault(self, FaultCode.MALFORMED, msg.detail)
            detail = f"seat {self.seat}: {msg.detail}"
            self.reject("", RejectCode.MALFORMED, detail, self.time_left())
            return
        if isinstance(msg, Hello):
            table.fault(self, FaultCode.MALFORMED, "a second hello")
            detail = f"seat {self.seat}: hello sent twice"
            self.reject("", RejectCode.MALFORMED, detail, self.time_left())
            return
        rid = msg.request_id
        asked = self.pending
        if rid in self.spec.issued or rid in self.spec.earlier:
            table.log.info(
                "late_or_duplicate_answer", seat=self.seat, bot=self.spec.name, request_id=rid
            )
        elif asked is None or not asked.open():
            # (a decision whose wait has ended is no longer open, though it has
            # not run yet: the same at the deadline whichever trio runs first)
            text = action_text(msg.action) if msg.action is not None else "an action"
            table.fault(self, FaultCode.ILLEGAL, f"{text} out of turn")
            self.reject(
                rid,
                RejectCode.NOT_YOUR_TURN,
                f"seat {self.seat}: {text} refused: not your turn (no decision is open)",
                0.0,
            )
        else:
            table.fault(self, FaultCode.MALFORMED, f"unknown request id {rid!r}")
            self.reject(
                rid,
                RejectCode.UNKNOWN_REQUEST,
                f"seat {self.seat}: request id {rid!r} is not the open request "
                f"{asked.request_id!r}",
                self.time_left(),
            )

    # -- taken back on a new stream ------------------------------------------------------

    def catch_up(self, conn: Seat) -> int:
        """Send the seat, taken back on ``conn``, the game in progress:
        GameStarted, the round from its view (on the lean stream the
        request's view has it), and the open request (with the time left);
        the number of messages sent."""
        table = self.table
        conn.send(table.game_info(self))
        sent = 1
        view = table.game.view(self.seat)
        if view.round > 0 and view.phase is not Phase.DEAL and self.all_events:
            pending = (
                view.phase is Phase.CHOOSE_TRUMP
                and not view.trick
                and not view.tricks
                and view.turned_card is not None
                and view.turned_card.is_wizard
            )
            conn.send(round_start(table.bot_game_id, view, pending))
            sent += 1
        asked = self.pending
        if asked is not None:
            now = trio.current_time()
            move_left = max(0.0, asked.start + table.move_time - now)
            bank_left = max(0.0, min(self.bank, asked.deadline - now))
            request = DecisionRequest(
                asked.request_id, table.bot_game_id, view.with_time_left(move_left), bank_left
            )
            conn.send(request)
            sent += 1
        return sent
