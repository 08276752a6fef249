"""A seat taken back on a new stream (a resumed session) is sent the game in
progress: :func:`send_game_so_far` (a part of :mod:`.table`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from wizard_arena.protocol.messages import DecisionRequest
from wizard_arena.rules import Phase
from wizard_referee.referee.broadcast import round_start
from wizard_referee.referee.seat import Seat

if TYPE_CHECKING:
    from wizard_referee.referee.table import _SeatState, _Table

__all__ = ["send_game_so_far"]


def send_game_so_far(table: _Table, st: _SeatState, conn: Seat) -> int:
    """Send a seat taken back the game in progress: GameStarted, the round
    from its view (on the lean stream the request's view has it), and the
    open request (with the time left); the number of messages sent."""
    conn.send(table._game_info(st))
    sent = 1
    view = table.game.view(st.seat)
    if view.round > 0 and view.phase is not Phase.DEAL and st.all_events:
        pending = (
            view.phase is Phase.CHOOSE_TRUMP
            and not view.trick
            and not view.tricks
            and view.turned_card is not None
            and view.turned_card.is_wizard
        )
        conn.send(round_start(table.game_id, view, pending))
        sent += 1
    asked = st.pending
    if asked is not None:
        now = trio.current_time()
        move_left = max(0.0, asked.start + table.move_time - now)
        bank_left = max(0.0, min(st.bank, asked.deadline - now))
        request = DecisionRequest(
            asked.request_id, table.game_id, view.with_time_left(move_left), bank_left
        )
        conn.send(request)
        sent += 1
    return sent
