"""A table's per-move deadlines: one alarm for the whole table.

Each decision a table asks for has a deadline (the move time, plus what is
left of the seat's time bank), kept by its :class:`~.pending.Pending`.
:class:`Alarm` is the one task per table that ends each wait at its
deadline (:meth:`Pending.ring <.pending.Pending.ring>`).

Why not a trio cancel scope (``trio.move_on_at``) around each wait: entering
and leaving a cancel scope, once per decision, cost about a tenth of the
trio thread's time per decision with lean bots (docs/performance.md, "What
keeps it fast"). The alarm sleeps until the earliest deadline it knows; a
decision asked meanwhile moves it only if its deadline is earlier (rare: a
table's deadlines come later and later), so it rings about once per move
time, not once per decision, and a deadline is kept to the same instant of
trio's clock as a cancel scope would keep it (``tests/test_pending.py``
checks the two against each other).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import trio

from wizard_referee.referee.pending import Pending

__all__ = ["Alarm", "Asking"]


class Asking(Protocol):
    """What the alarm reads of a seat (the table's seat state)."""

    @property
    def pending(self) -> Pending | None:
        """The seat's request a decision waits for, if any."""
        ...


class Alarm:
    """Ends each seat's pending wait at its deadline (:meth:`run`, in the
    table's nursery); :meth:`asked` after each deadline set."""

    def __init__(self, seats: Sequence[Asking]) -> None:
        self._seats = seats
        self._at = math.inf
        """The earliest deadline the alarm rings at."""
        self._scope: trio.CancelScope | None = None

    def asked(self, deadline: float) -> None:
        """A decision was asked with ``deadline``: ring no later than that."""
        if deadline < self._at:
            self._at = deadline
            if self._scope is not None:
                self._scope.deadline = deadline

    async def run(self) -> None:
        while True:
            now = trio.current_time()
            at = math.inf
            for st in self._seats:
                pending = st.pending
                if pending is not None:
                    at = min(at, pending.ring(now))
            self._at = at
            with trio.CancelScope(deadline=at) as self._scope:
                await trio.sleep_forever()
            self._scope = None
