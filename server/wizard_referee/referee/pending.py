"""A seat's pending decision: the one object that says whether an answer counts.

A table asks a seat for a decision with a request id and a deadline (the
:class:`Allowance`: the move time, the network credit, what is left of the
seat's time bank); until the decision ends, the request is :class:`Pending`.
An answer reaches it two ways: the seat's connection hands it over as it
arrives (``Seat.route``, while the decision is parked on the seat's answers
channel) or the seat's reader task reads it; both ask :meth:`Pending.offer`,
the one place that says whether it is the answer to this request and in time. The deadline is
kept by the table's :class:`~wizard_referee.referee.alarm.Alarm`, which
calls :meth:`Pending.ring`; a fault that benches the seat calls
:meth:`Pending.expire`. The decision itself waits in :meth:`Pending.next_answer`.

The rule this keeps is the one a ``trio.move_on_at(deadline)`` around the
wait kept (``tests/test_pending.py`` checks the two against each other on
scripted games, across trio's scheduling orders): an answer offered at or
after the deadline is late; one handed to the decision before its wait
was ended counts, even if the decision runs only after the deadline.
Whatever else has arrived from the bots is handled before the table settles
a decision (applies its answer, or times it out) or asks for the next, so
that what happens at one instant does not depend on which task trio runs
first (docs/protocol.md, "Deadlines, late answers and the default action").
"""

from __future__ import annotations

import contextlib
import enum
import math
from typing import NamedTuple

import trio

from wizard_arena.protocol.messages import ActionMsg

__all__ = ["Allowance", "Offer", "Pending", "Stage"]


class Allowance(NamedTuple):
    """The time a seat is allowed for one decision, in seconds: the table's
    ``move_time``, the request's network ``credit`` (paying for the messages'
    way between bot and referee) and what is left of the seat's time
    ``bank``. The one place that does this arithmetic: the deadline, the
    bank a decision leaves, and the time left told to a bot. (A named tuple:
    one is made for every decision, and a tuple is the cheapest to make.)

    >>> a = Allowance(move_time=1.0, credit=0.25, bank=2.0)
    >>> a.total, a.free
    (3.25, 1.25)
    >>> a.bank_after(1.0), a.bank_after(1.75), a.bank_after(9.0)
    (2.0, 1.5, 0.0)
    >>> a.time_left(0.5), a.left_at(0.5), a.left_at(2.5)
    (2.5, (0.5, 2.0), (0.0, 0.75))
    """

    move_time: float
    credit: float = 0.0
    bank: float = 0.0

    @property
    def total(self) -> float:
        """From the request's start to its deadline."""
        return self.move_time + self.credit + self.bank

    @property
    def free(self) -> float:
        """What an answer may take without drawing on the bank."""
        return self.move_time + self.credit

    def bank_after(self, took: float) -> float:
        """The bank left after a decision that ended ``took`` seconds after
        the request (answered, or its bot gone): charged only beyond the move
        time and the credit, never below 0. (A timeout spends it all.)"""
        return max(0.0, self.bank - max(0.0, took - self.free))

    def time_left(self, elapsed: float) -> float:
        """What the bot has left to answer in, ``elapsed`` seconds after the
        request, as its ``time_left_ms`` says: to the deadline, without the
        credit (which pays for the answer's way to the referee)."""
        return max(0.0, self.total - elapsed - self.credit)

    def left_at(self, elapsed: float) -> tuple[float, float]:
        """``(move time left, bank left)``, ``elapsed`` seconds after the
        request: what a request sent again then (to a bot taken back on a
        new stream) says, keeping the same deadline."""
        move_left = max(0.0, self.move_time - elapsed)
        return move_left, max(0.0, min(self.bank, self.total - elapsed))


class Stage(enum.Enum):
    """Where the decision waiting for a pending request is."""

    BUSY = "busy"
    """It runs (asked, or handling an answer): an answer in time is queued for it."""
    PARKED = "parked"
    """It is parked on the answers channel: an answer in time goes straight to it."""
    ENDED = "ended"
    """Its wait was ended (the deadline passed, or a fault benched the seat)."""


class Offer(enum.Enum):
    """What :meth:`Pending.offer` did with a message."""

    TAKEN = "taken"
    """Handed to the decision (or queued for it)."""
    NOT_NOW = "not now"
    """(Handed over as it arrived) the decision is not parked: the reader offers it again."""
    FULL = "full"
    """The answers queue is full (the bot floods)."""
    STRAY = "stray"
    """Not the answer to this request in time: a stray (:meth:`.seat_state.SeatState.stray`)."""


class Pending:
    """A request a seat was asked and has not answered: its id, when it was
    asked (``start``, trio time), its :class:`Allowance` and so its
    ``deadline``, and the :class:`Stage` of the decision waiting for it;
    ``answers`` is the seat's answers channel, on which the decision waits
    (``None`` on it is a wake-up: see :meth:`expire`)."""

    __slots__ = ("_answers", "allowance", "deadline", "request_id", "stage", "start")

    def __init__(
        self,
        request_id: str,
        start: float,
        allowance: Allowance,
        answers: trio.MemorySendChannel[ActionMsg | None],
    ) -> None:
        self.request_id = request_id
        self.start = start
        self.allowance = allowance
        self.deadline = start + allowance.total
        self.stage = Stage.BUSY
        self._answers = answers

    def time_left(self) -> float:
        """What the bot has left to answer in now (:meth:`Allowance.time_left`)."""
        return self.allowance.time_left(trio.current_time() - self.start)

    def bank_after(self, took: float) -> float:
        """The seat's bank after this decision ended ``took`` seconds in."""
        return self.allowance.bank_after(took)

    def left_now(self) -> tuple[float, float]:
        """``(move time left, bank left)`` now (:meth:`Allowance.left_at`)."""
        return self.allowance.left_at(trio.current_time() - self.start)

    def offer(self, msg: ActionMsg, *, arriving: bool) -> Offer:
        """Offer ``msg`` to the decision: the one test of whether it answers
        this request in time (before the deadline, to the instant, whichever
        of the answer and the alarm trio runs first). ``arriving``: handed
        over as it arrives (``Seat.route``), taken only while the decision is
        parked (else :attr:`Offer.NOT_NOW`: the reader sees it in order)."""
        if msg.request_id != self.request_id or not self._in_time():
            return Offer.STRAY
        if arriving and self.stage is not Stage.PARKED:
            return Offer.NOT_NOW
        try:
            self._answers.send_nowait(msg)
        except trio.WouldBlock:
            return Offer.NOT_NOW if arriving else Offer.FULL
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return Offer.NOT_NOW if arriving else Offer.STRAY
        if self.stage is Stage.PARKED:
            self.stage = Stage.BUSY  # woken with this answer: the next one queues
        return Offer.TAKEN

    def open(self) -> bool:
        """Whether the request is still open: its wait not ended, its deadline
        not come (a decision ended and not yet run is not open)."""
        return self.stage is not Stage.ENDED and self._in_time()

    def _in_time(self) -> bool:
        return trio.current_time() < self.deadline

    async def next_answer(
        self, answers: trio.MemoryReceiveChannel[ActionMsg | None]
    ) -> ActionMsg | None:
        """The next answer handed to the decision; None once its wait is
        ended. An answer handed over before the end counts though the
        decision runs after it (as under a cancel scope: a cancel reaches a
        task where it waits, not one already handed what it waited for).
        Raises :class:`trio.EndOfChannel` (or ``ClosedResourceError``) once
        the bot has gone."""
        while self.stage is not Stage.ENDED:
            msg = await self._parked(answers)
            if msg is not None and msg.request_id == self.request_id:
                return msg
            # a wake-up (or a stale one), or a stale answer
        return None

    async def _parked(
        self, answers: trio.MemoryReceiveChannel[ActionMsg | None]
    ) -> ActionMsg | None:
        """The next item on ``answers``, waited for parked (an answer in
        time may be handed straight to the decision meanwhile: :meth:`offer`)."""
        self.stage = Stage.PARKED
        try:
            return await answers.receive()
        finally:
            if self.stage is Stage.PARKED:
                self.stage = Stage.BUSY

    def expire(self) -> None:
        """End the wait (a fault benched the seat, or the deadline passed):
        the decision returns without an answer, unless it was handed one
        before (it takes that first: :meth:`next_answer`)."""
        if self.stage is Stage.ENDED:
            return
        self.stage = Stage.ENDED
        with contextlib.suppress(
            trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError
        ):
            # wake the decision (with a full queue it wakes anyway, and sees ENDED)
            self._answers.send_nowait(None)

    def ring(self, now: float) -> float:
        """The alarm's call: end the wait if its deadline has come; the
        deadline still to ring for (``inf``: none)."""
        if self.stage is Stage.ENDED:
            return math.inf
        if self.deadline <= now:
            self.expire()
            return math.inf
        return self.deadline

    def __repr__(self) -> str:
        return f"<Pending {self.request_id} {self.stage.value} until {self.deadline:g}>"
