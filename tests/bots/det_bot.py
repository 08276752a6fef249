"""A deterministic test bot: its choice depends only on what it sees, never on
which games the process played before (so tournament results are reproducible)."""

from __future__ import annotations

import random
import sys
import time

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot, GameInfo


class DeterministicBot(Bot):
    name = "det"

    def __init__(self, salt: str = "", delay: float = 0.0) -> None:
        self.salt = salt
        self.delay = delay
        """Seconds each decision takes (a game that lasts, to kill it mid-way)."""

    def _rng(self, view: SeatView) -> random.Random:
        key = (
            self.salt,
            view.round,
            view.seat,
            tuple(c.text for c in view.hand),
            tuple(c.text for _, c in view.plays),
            view.bids,
        )
        return random.Random(repr(key))

    def bid(self, view: SeatView) -> int:
        time.sleep(self.delay)
        return self._rng(view).choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        time.sleep(self.delay)
        return self._rng(view).choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return self._rng(view).choice(list(Suit))


class IdTellingBot(DeterministicBot):
    """A :class:`DeterministicBot` that writes each game id it is told to its
    standard error (a tournament's bot log)."""

    def on_game_start(self, info: GameInfo) -> None:
        print(f"game id told: {info.game_id}", file=sys.stderr, flush=True)
