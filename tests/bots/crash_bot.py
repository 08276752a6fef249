"""A test bot whose process exits in the middle of its first game (round 2),
once: it leaves a marker file, so the restarted process plays normally."""

from __future__ import annotations

import os
from pathlib import Path

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot


class CrashOnceBot(Bot):
    name = "crash-once"

    def __init__(self, marker: str) -> None:
        self.marker = Path(marker)

    def bid(self, view: SeatView) -> int:
        if view.round >= 2 and not self.marker.exists():
            self.marker.write_text("crashed\n")
            os._exit(3)
        return view.legal_bids[0]

    def play(self, view: SeatView) -> Card:
        return min(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return Suit.SPADES
