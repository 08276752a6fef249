"""The simplest entry: a uniformly random legal action, seeded for replays.

Each game draws from the seed the referee gives the bot for it
(``GameInfo.rng``: derived from the tournament's secret, the game id and the
seat, never from the deal), so the same game is played the same way every
time; a ``seed`` given to the constructor is used instead, for every game in
turn.

>>> from wizard_arena.local import play_local
>>> first = play_local([RandomBot() for _ in range(3)], seed=7)
>>> again = play_local([RandomBot() for _ in range(3)], seed=7)
>>> first.totals == again.totals
True
"""

from __future__ import annotations

import random

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot, GameInfo


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def on_game_start(self, info: GameInfo) -> None:
        if self.seed is None:
            self.rng = info.rng  # the referee's seed for this game and seat

    def bid(self, view: SeatView) -> int:
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return self.rng.choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return self.rng.choice(list(Suit))
