"""A crude deterministic bot for the calibration test: it bids as many tricks
as it may and always plays its highest card (a Wizard first, a Jester last,
then by rank), so the players around it feel where it sits.

>>> from wizard_arena.local import play_local
>>> play_local([GreedyBot() for _ in range(3)], seed=1).faults
[]
"""

from __future__ import annotations

from collections import Counter

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot


def _height(card: Card) -> tuple[bool, bool, int]:
    return (card.is_wizard, not card.is_jester, card.rank or 0)


class GreedyBot(Bot):
    """Bids the most it may, plays its highest legal card."""

    name = "greedy"

    def bid(self, view: SeatView) -> int:
        return max(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return max(view.legal_cards, key=_height)

    def choose_trump(self, view: SeatView) -> Suit:
        suits = Counter(c.suit for c in view.hand if c.suit is not None)
        return max(list(Suit), key=lambda s: (suits[s], -list(Suit).index(s)))
