"""A table's per-move deadlines: one alarm for the whole table.

Each decision a table asks for has a deadline (the move time, plus what is
left of the seat's time bank). A decision waits for its answer on the
seat's answers channel; :func:`expire` ends that wait (its deadline passed,
or a fault benched the seat) by marking the request expired and waking the
decision with ``None`` on the channel. :class:`Alarm` is the one task per
table that calls :func:`expire` at each deadline.

Why not a trio cancel scope (``trio.move_on_at``) around each wait: entering
and leaving a cancel scope, once per decision, cost about a tenth of the
trio thread's time per decision with lean bots (docs/performance.md, "The
fast target"). The alarm sleeps until the earliest deadline it knows; a
decision asked meanwhile moves it only if its deadline is earlier (rare: a
table's deadlines come later and later), so it rings about once per move
time, not once per decision, and a deadline is kept to the same instant of
trio's clock as a cancel scope would keep it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any, Protocol

import trio

__all__ = ["Alarm", "Waiting", "expire"]


class Waiting(Protocol):
    """What the alarm reads and writes of a seat (the table's seat state)."""

    open_request: str | None
    deadline: float
    waiting: bool
    """A decision waits for the answer to ``open_request``."""
    expired: str | None
    """The request whose wait was ended (by :func:`expire`)."""
    send_answer: trio.MemorySendChannel[Any]


def _waits(st: Waiting) -> bool:
    """A decision waits for ``st``'s open request and its wait is not ended."""
    rid = st.open_request
    return st.waiting and rid is not None and st.expired != rid


def expire(st: Waiting) -> None:
    """End the wait for ``st``'s open request, if a decision waits for it:
    the decision sees ``expired`` and returns without an answer, unless it
    was handed one before (then woken, it has not run yet): that answer
    counts, as it did when a cancel scope ended the wait (a cancel reaches
    a task only where it waits, not one already handed what it waited for)."""
    if not _waits(st):
        return
    st.expired = st.open_request
    with contextlib.suppress(trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
        # wake the decision (with a full queue it wakes anyway, and checks ``expired``)
        st.send_answer.send_nowait(None)


class Alarm:
    """Calls :func:`expire` on each seat of ``states`` at its deadline
    (:meth:`run`, in the table's nursery); :meth:`asked` after each deadline set."""

    def __init__(self, states: Sequence[Waiting]) -> None:
        self._states = states
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
            for st in self._states:
                if _waits(st):
                    if st.deadline <= now:
                        expire(st)
                    else:
                        at = min(at, st.deadline)
            self._at = at
            with trio.CancelScope(deadline=at) as self._scope:
                await trio.sleep_forever()
            self._scope = None
