"""The simplest entry: a uniformly random legal action, seeded for replays."""

from __future__ import annotations

import random

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def bid(self, view: SeatView) -> int:
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return self.rng.choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return self.rng.choice(list(Suit))
