"""The heuristic bot with mistakes: a stochastic bot for the calibration test.

With probability ``noise`` a decision is a uniformly random legal one instead
of the heuristic's, drawn from the seed the referee gives the seat for the
game (``GameInfo.rng``), so two copies play differently and every game
replays exactly.

>>> from wizard_arena.local import play_local
>>> a = play_local([NoisyHeuristicBot() for _ in range(3)], seed=5)
>>> b = play_local([NoisyHeuristicBot() for _ in range(3)], seed=5)
>>> a.totals == b.totals
True
"""

from __future__ import annotations

import random

from wizard_arena import Card, SeatView
from wizard_arena.bot import GameInfo
from wizard_bots.heuristic import HeuristicBot


class NoisyHeuristicBot(HeuristicBot):
    """Plays like :class:`HeuristicBot`, except that with probability ``noise``
    it makes a random legal decision."""

    name = "noisy-heuristic"

    def __init__(self, noise: float = 0.3) -> None:
        super().__init__()
        self.noise = noise
        self.rng = random.Random(0)

    def on_game_start(self, info: GameInfo) -> None:
        super().on_game_start(info)
        self.rng = info.rng  # the referee's seed for this game and seat

    def bid(self, view: SeatView) -> int:
        if self.rng.random() < self.noise:
            return self.rng.choice(view.legal_bids)
        return int(super().bid(view))

    def play(self, view: SeatView) -> Card:
        if self.rng.random() < self.noise:
            return self.rng.choice(view.legal_cards)
        return super().play(view)
