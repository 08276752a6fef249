"""Tiny bots with one flaw each, for ``wizard-arena check`` (tests/test_check.py)."""

from __future__ import annotations

import os
import sys
import time

from wizard_arena import Card, SeatView
from wizard_arena.bot import Bot


class _Lowest(Bot):
    """Bids the lowest legal bid, plays the first legal card."""

    def bid(self, view: SeatView) -> int:
        return view.legal_bids[0]

    def play(self, view: SeatView) -> Card:
        return view.legal_cards[0]


class SlowAndIllegalBot(_Lowest):
    """Too slow once a game (``delay`` seconds on its first play with
    ``slow_at`` cards in hand) and once a game plays a card it does not hold
    (its first play in round ``illegal_round``)."""

    name = "flawed"

    def __init__(self, delay: float = 0.6, slow_at: int = 6, illegal_round: int = 3) -> None:
        self.delay = delay
        self.slow_at = slow_at
        self.illegal_round = illegal_round
        self.done: set[tuple[int, str]] = set()

    def on_game_start(self, info: object) -> None:
        self.done.clear()

    def play(self, view: SeatView) -> Card:
        if len(view.hand) == self.slow_at and (0, "slow") not in self.done:
            self.done.add((0, "slow"))
            time.sleep(self.delay)
        if view.round == self.illegal_round and (0, "illegal") not in self.done:
            self.done.add((0, "illegal"))
            return next(c for c in view.unseen_cards() if c not in view.hand)
        return super().play(view)


class CrashingBot(_Lowest):
    """Writes a last word to stderr and exits with status 3 in round ``round``."""

    name = "crasher"

    def __init__(self, round: int = 2) -> None:
        self.round = round

    def play(self, view: SeatView) -> Card:
        if view.round >= self.round:
            print("crasher: out of memory (simulated)", file=sys.stderr, flush=True)
            os._exit(3)
        return super().play(view)
