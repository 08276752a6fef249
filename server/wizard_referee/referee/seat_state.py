"""One seat at a table, as the table keeps it: :class:`SeatState`.

A seat's state is its :class:`~wizard_referee.referee.seat.SeatSpec` (who
sits there, on which connection), its answers channel and
:class:`~wizard_referee.referee.pending.Pending` request, whether its bot
has gone, and its time bank. What the seat does itself, through a small
public interface the table's game flow calls:

- reading its bot (:meth:`SeatState.read`, a task in the table's nursery):
  the answer to the open request goes to the decision waiting for it (as
  it arrives, through ``Seat.route``, or read in order); anything else is
  a stray (:meth:`SeatState.stray`: faulted and rejected, or only logged);
  the end of the stream marks the bot gone;
- faults (:meth:`SeatState.fault`): counted, charged in the game's
  :class:`~wizard_referee.referee.faults.FaultBook` (whose fault policy
  says what they cost) and, when that benches the seat, ending its open
  decision; :meth:`SeatState.benched` says why the default policy plays it;
- sending (counted) and rejecting an action (with the time left);
- taken back on a new stream (:meth:`SeatState.reattach`): the game so far
  sent again (:meth:`SeatState.catch_up`).

The seat reads its table (the game, the record, the log, GameStarted)
through the small :class:`Table` protocol, as the alarm (:mod:`.alarm`)
and the broadcast (:mod:`.broadcast`) do; the game flow (asking, applying,
timing out) is the table's.
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
    ClockProbeReply,
    DecisionRequest,
    Hello,
)
from wizard_arena.rules import Game, Phase, action_text
from wizard_referee.referee.broadcast import round_start
from wizard_referee.referee.clock_probes import ClockProbes
from wizard_referee.referee.counters import ArenaCounters
from wizard_referee.referee.faults import FaultBook, Sanction
from wizard_referee.referee.pending import Offer, Pending
from wizard_referee.referee.record import GameRecord
from wizard_referee.referee.seat import CloseCode, Malformed, Seat, SeatSpec

__all__ = ["SeatState", "Table"]


class Table(Protocol):
    """What a seat reads of its table."""

    bot_game_id: str
    game: Game
    record: GameRecord
    move_time: float
    lag_credit_cap: float
    log: Any

    def game_info(self, st: SeatState) -> GameInfo:
        """The seat's GameStarted."""
        ...


@dataclass(eq=False)
class SeatState:
    table: Table
    spec: SeatSpec
    seat: int
    book: FaultBook
    """The game's faults (every seat's), and what they cost."""
    counters: ArenaCounters
    bank: float = 0.0
    """Seconds left in the seat's time bank (at the open request's start)."""
    pending: Pending | None = None
    """The open request, while a decision waits for its answer."""
    credit: float = 0.0
    """The open request's network credit (seconds; part of its deadline)."""
    probes: ClockProbes | None = None
    """The clock probes told that the open request is open (the
    connection's when it was asked; see :meth:`asking`)."""
    gone: bool = False

    def __post_init__(self) -> None:
        self.send_answer, self.answers = trio.open_memory_channel[ActionMsg | None](64)
        """The answers to the open request (None: a wake-up, see :meth:`Pending.expire`)."""
        conn = self.spec.conn
        if conn is None or conn.closed:
            self.gone = True

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
        """Seconds left on the seat's open request (0 when none is open),
        without its network credit: what the bot has left to answer in, as it
        has ``time_left_ms`` of a request (the credit pays for the answer's
        way to the referee and the rejection's to the bot)."""
        pending = self.pending
        return 0.0 if pending is None else pending.time_left()

    # -- the clock probes of the seat's connection -----------------------------------

    def asking(self) -> float:
        """A request is about to be sent: its network credit (0 without clock
        probes), and the connection's probes wait until it is answered."""
        conn = self.conn
        probes = conn.clock if conn is not None else None
        self.probes = probes
        if probes is None:
            self.credit = 0.0
            return 0.0
        probes.opened()
        self.credit = probes.credit(self.table.lag_credit_cap)
        return self.credit

    def asked(self, took: float | None) -> None:
        """The request is closed (``took``: seconds to its answer; None: not
        answered): the probes may go on."""
        probes, self.probes = self.probes, None
        if probes is not None:
            probes.closed(took)

    def reject(self, request_id: str, code: str, message: str, left: float) -> None:
        """Tell the bot its message was refused (``left``: seconds it has still)."""
        self.send(ActionRejected(request_id, self.table.bot_game_id, code, message, max(0.0, left)))

    # -- faults ----------------------------------------------------------------------------

    def fault(self, code: FaultCode, detail: str) -> None:
        """Hold a fault against the seat: counted, charged in the game's
        fault book (shown in its record at once, for spectators) and, if
        the fault policy benches the seat for it, its open decision ends
        (the default policy's)."""
        seat, book, table = self.seat, self.book, self.table
        if book.removed(seat):
            return  # out of the game: nothing more is held against it
        self.counters.faults[code] += 1
        rnd = table.game.round
        sanction = book.charge(seat, code, detail, rnd)
        book.write(table.record)
        log = table.log
        log.warning("fault", round=rnd, seat=seat, bot=self.spec.name, code=code, detail=detail)
        if sanction is None:
            return
        event = "round_forfeited" if sanction is Sanction.FORFEIT_ROUND else "seat_removed"
        log.warning(event, round=max(rnd, 1), seat=seat, bot=self.spec.name)
        if self.pending is not None:
            self.pending.expire()  # the open decision is the default policy's too

    def benched(self) -> str | None:
        """Why the default policy plays the seat's decisions now, if it does:
        a sanction of the fault policy, or its bot has gone."""
        sanction = self.book.benched(self.seat, self.table.game.round)
        if sanction is not None:
            return sanction
        if self.gone:
            return FaultCode.DISCONNECT
        return None

    # -- reading the bot: routes everything it sends -----------------------------------------

    async def read(self) -> None:
        """Read the seat's connection until it ends or the seat is taken
        back on another (a task of the table's while its game runs)."""
        conn = self.spec.conn
        if conn is None or self.gone:
            return

        def take_answer(msg: BotMsg | Malformed) -> bool:
            return self._take_answer(conn, msg)

        conn.route = take_answer
        try:
            await self._read(conn)
        finally:
            if conn.route is take_answer:
                conn.route = None

    def backlog(self) -> tuple[Seat, int] | None:
        """If messages from the bot have arrived unread: its connection and
        the count of messages read (``Seat.received``) at which they all
        have been (and handled: the reader handles each as it reads it)."""
        conn = self.spec.conn
        if conn is None or not conn.unread or self.gone:
            return None
        return conn, conn.received + conn.unread

    def caught_up(self, conn: Seat, upto: int) -> bool:
        """Whether the reader has read :meth:`backlog`'s messages (or no
        longer reads ``conn``: the bot has gone, or resumed on another)."""
        return conn.received >= upto or conn is not self.spec.conn or self.gone

    def _take_answer(self, conn: Seat, msg: BotMsg | Malformed) -> bool:
        """The connection's ``route`` while the game runs: the answer to
        the open request goes straight to the decision if it is parked
        waiting for one (:meth:`Pending.offer`); anything else, and an
        answer while the decision is busy with another, is left to
        :meth:`_read`, which handles it in order (so messages still queue,
        and count against the stream's inbound limit, while the referee
        reads none)."""
        pending = self.pending
        if (
            pending is not None
            and type(msg) is ActionMsg
            and conn is self.spec.conn
            and not self.gone
            and pending.offer(msg, arriving=True) is Offer.TAKEN
        ):
            self.counters.messages_in += 1
            return True
        return False

    async def _read(self, conn: Seat) -> None:
        while True:
            try:
                msg = await conn.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                self._mark_gone(conn)
                return
            self.counters.messages_in += 1
            if conn is not self.spec.conn:
                return  # a stale stream: the seat was resumed on another
            pending = self.pending
            if pending is not None and isinstance(msg, ActionMsg):
                offered = pending.offer(msg, arriving=False)
                if offered is Offer.TAKEN:
                    continue
                if offered is Offer.FULL:
                    self.fault(FaultCode.FLOODING, "too many answers to one request")
                    continue
            self.stray(msg)

    def _mark_gone(self, conn: Seat) -> None:
        """``conn`` ended: if it is still the seat's, its bot has gone (a
        disconnect fault, or flooding if it was cut off for that)."""
        if self.gone or conn is not self.spec.conn:
            return  # already gone, or the seat has been taken back on a new stream
        self.gone = True
        if conn.flooded:
            self.fault(FaultCode.FLOODING, conn.close_reason)
        else:
            self.fault(FaultCode.DISCONNECT, conn.close_reason or "the connection dropped")
        self.send_answer.close()

    # -- a message that answers no open request ----------------------------------------

    def stray(self, msg: BotMsg | Malformed) -> None:
        """A message from the seat's bot that does not answer its open request:
        faulted and rejected, or (a late or repeated answer) only logged."""
        table = self.table
        if isinstance(msg, ClockProbeReply):
            return  # (the connection takes them as they arrive: never a stray)
        if isinstance(msg, Malformed):
            self.fault(FaultCode.MALFORMED, msg.detail)
            detail = f"seat {self.seat}: {msg.detail}"
            self.reject("", RejectCode.MALFORMED, detail, self.time_left())
            return
        if isinstance(msg, Hello):
            self.fault(FaultCode.MALFORMED, "a second hello")
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
            self.fault(FaultCode.ILLEGAL, f"{text} out of turn")
            self.reject(
                rid,
                RejectCode.NOT_YOUR_TURN,
                f"seat {self.seat}: {text} refused: not your turn (no decision is open)",
                0.0,
            )
        else:
            self.fault(FaultCode.MALFORMED, f"unknown request id {rid!r}")
            self.reject(
                rid,
                RejectCode.UNKNOWN_REQUEST,
                f"seat {self.seat}: request id {rid!r} is not the open request "
                f"{asked.request_id!r}",
                self.time_left(),
            )

    # -- taken back on a new stream ------------------------------------------------------

    def reattach(self, conn: Seat) -> None:
        """The seat's bot is back on ``conn`` (a resumed session): its
        messages are read from there (the table starts :meth:`read` again)
        and it is sent the game in progress (:meth:`catch_up`)."""
        old = self.spec.conn
        if not self.gone and old is not None and old is not conn:
            # the bot came back before its old stream was seen to drop: a drop all the same
            self.fault(FaultCode.DISCONNECT, "resumed on a new stream")
        self.spec.conn = conn
        if self.gone:
            # the answers channel was closed when the bot went: a fresh one
            self.send_answer, self.answers = trio.open_memory_channel[ActionMsg | None](64)
            self.gone = False
        if old is not None and old is not conn:
            old.close(CloseCode.UNAVAILABLE, "the session was resumed on another stream")
        self.spec.timeouts_in_a_row = 0  # connected again
        self.table.log.info("seat_resumed", seat=self.seat, bot=self.spec.name, conn=conn.id)
        self.counters.messages_out += self.catch_up(conn)

    def catch_up(self, conn: Seat) -> int:
        """Send the seat, taken back on ``conn``, the game in progress:
        GameStarted, the round from its view (on the lean stream the
        request's view has it), and the open request (with the time left, and
        its network credit, which its deadline keeps; the new connection's
        clock probes wait until it is answered); the number of messages sent."""
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
            move_left, bank_left = asked.left_now()
            request = DecisionRequest(
                asked.request_id,
                table.bot_game_id,
                view.with_time_left(move_left),
                bank_left,
                self.credit,
            )
            if conn.clock is not None:
                self.asked(None)  # (the old connection's probes: it is gone)
                self.probes = conn.clock
                conn.clock.opened()
            conn.send(request)
            sent += 1
        return sent
