"""What the resilience tests share (tests/test_resilience.py and
tests/test_resilience_limits.py): a short game and the Hello option that
accepts it, the ``serve`` verb's parsed arguments, and a bot that has its
connection cut mid-game."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from wizard_arena.bot import Bot
from wizard_arena.rules import Card, Rules, SeatView, Suit
from wizard_referee.referee import cmd_serve

#: A short game for the tests over gRPC (and the Hello option that accepts it).
SHORT = Rules(players=3, hand_sizes=(1, 2, 3))
SHORT_OK: dict[str, Any] = {"rule_options": ("round_sizes",)}


def serve_args(*argv: str) -> argparse.Namespace:
    """``wizard-arena serve ARGV``'s arguments, parsed."""
    parser = argparse.ArgumentParser()
    cmd_serve.add_arguments(parser)
    return parser.parse_args(list(argv))


class Dropper(Bot):
    """Plays the lowest legal card; at its 4th play decision it has the
    server cut its connection (UNAVAILABLE), then goes on."""

    name = "dropper"

    def __init__(self, cut: Callable[[], object]) -> None:
        self.cut = cut
        self.plays = 0
        self.dropped = False

    def bid(self, view: SeatView) -> int:
        return view.legal_bids[0]

    def play(self, view: SeatView) -> Card:
        self.plays += 1
        if self.plays == 4 and not self.dropped:
            self.dropped = True
            self.cut()
        return min(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return Suit.SPADES
