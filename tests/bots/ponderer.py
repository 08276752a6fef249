"""An AsyncBot that now and then never decides: the SDK's trio runner must
cancel it before the deadline and send the default (tests/test_client.py,
tests/test_client_deadlines.py, and ``wizard-arena play`` in
tests/test_cmd_play.py)."""

from __future__ import annotations

import trio

from wizard_arena.bot import GameInfo, GameSummary
from wizard_arena.client import AsyncBot
from wizard_arena.rules import Card, RoundResult, SeatView


class Ponderer(AsyncBot):
    """An async bot that thinks forever on every 70th card."""

    def __init__(self) -> None:
        self.cards = 0
        self.hooks: list[str] = []

    async def bid(self, view: SeatView) -> int:
        await trio.sleep(0)
        return view.legal_bids[-1]

    async def play(self, view: SeatView) -> Card:
        self.cards += 1
        if self.cards % 70 == 0:
            await trio.sleep_forever()
        return view.legal_cards[0]

    async def on_game_start(self, info: GameInfo) -> None:
        self.hooks.append("start")

    async def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        self.hooks.append("round")

    async def on_game_end(self, summary: GameSummary) -> None:
        self.hooks.append("end")
