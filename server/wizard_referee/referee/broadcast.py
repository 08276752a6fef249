"""What each seat of a table is sent of the game's public events (a part of
:mod:`.table`): :func:`send_new_events` after every step of the game.

A seat on every event (protocol v1.0's default) gets each event as it
happens, and its own RoundStarted (its hand, from its view); a seat on the
lean stream (``EVENT_STREAM_LEAN``) gets only the rounds' results, and
finds the rest in its next request's view. GameOver is not sent here: the
table sends GameEnd, with the faults, once the record is complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from wizard_arena.protocol.messages import RoundStart, TableEvent
from wizard_arena.rules import Game, GameOver, RoundScored, RoundStarted, SeatView

__all__ = ["Recipient", "round_start", "send_new_events"]


class Recipient(Protocol):
    """A seat as the broadcast sees it (the table's seat state)."""

    seat: int

    @property
    def all_events(self) -> bool: ...

    def send(self, msg: Any) -> None: ...


def round_start(game_id: str, view: SeatView, pending: bool) -> RoundStart:
    """The RoundStarted of ``view``'s seat, from its view just after the deal
    (``pending``: the dealer still has to choose trump)."""
    v = view
    return RoundStart(
        game_id, v.round, v.dealer, v.cards_per_player, v.hand, v.turned_card,
        v.trump, pending, v.others_hands,
    )  # fmt: skip


def send_new_events(game: Game, game_id: str, seats: Sequence[Recipient]) -> None:
    """Send ``seats`` what they may see of the events ``game`` has had since
    the last call (they are drained from the game)."""
    # the seats on every event (the lean stream gets the results only)
    everything = [st for st in seats if st.all_events]
    # sent once, then let go: a live game keeps no event objects for the
    # cyclic GC to scan (docs/performance.md, the think scenario's tail)
    for ev in game.drain_events():
        if isinstance(ev, RoundStarted):
            pending = ev.turned_card is not None and ev.turned_card.is_wizard
            # (the lean stream: the deal is in the next request's view)
            for st in everything:
                # what the seat may see of the deal comes from its view:
                # its own hand, or in a blind first round the others' cards
                st.send(round_start(game_id, game.view(st.seat), pending))
        elif isinstance(ev, GameOver):
            continue  # sent with the faults once the record is complete
        elif isinstance(ev, RoundScored):
            msg = TableEvent(game_id, ev)
            for st in seats:
                st.send(msg)
        elif everything:
            msg = TableEvent(game_id, ev)
            for st in everything:
                st.send(msg)
