"""What a table does with a message that does not answer a seat's open
request: :func:`stray` (a part of :mod:`.table`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wizard_arena.protocol.codes import FaultCode, RejectCode
from wizard_arena.protocol.messages import BotMsg, Hello
from wizard_arena.rules import action_text
from wizard_referee.referee.seat import Malformed

if TYPE_CHECKING:
    from wizard_referee.referee.table import _SeatState, _Table

__all__ = ["stray"]


def stray(table: _Table, st: _SeatState, msg: BotMsg | Malformed) -> None:
    """A message from the seat's bot that does not answer its open request:
    faulted and rejected, or (a late or repeated answer) only logged."""
    if isinstance(msg, Malformed):
        table._fault(st, FaultCode.MALFORMED, msg.detail)
        detail = f"seat {st.seat}: {msg.detail}"
        table._reject(st, "", RejectCode.MALFORMED, detail, table._time_left(st))
        return
    if isinstance(msg, Hello):
        table._fault(st, FaultCode.MALFORMED, "a second hello")
        detail = f"seat {st.seat}: hello sent twice"
        table._reject(st, "", RejectCode.MALFORMED, detail, table._time_left(st))
        return
    rid = msg.request_id
    asked = st.pending
    if rid in st.spec.issued or rid in st.spec.earlier:
        table.log.info("late_or_duplicate_answer", seat=st.seat, bot=st.spec.name, request_id=rid)
    elif asked is None or not asked.open():
        # (a decision whose wait has ended is no longer open, though it has
        # not run yet: the same at the deadline whichever trio runs first)
        text = action_text(msg.action) if msg.action is not None else "an action"
        table._fault(st, FaultCode.ILLEGAL, f"{text} out of turn")
        table._reject(
            st,
            rid,
            RejectCode.NOT_YOUR_TURN,
            f"seat {st.seat}: {text} refused: not your turn (no decision is open)",
            0.0,
        )
    else:
        table._fault(st, FaultCode.MALFORMED, f"unknown request id {rid!r}")
        table._reject(
            st,
            rid,
            RejectCode.UNKNOWN_REQUEST,
            f"seat {st.seat}: request id {rid!r} is not the open request {asked.request_id!r}",
            table._time_left(st),
        )
