"""Misbehaving SDK bots: :class:`SlowBot` (answers late) and :class:`IllegalBot`
(chooses illegal actions, which :class:`~wizard_bots.misbehaving.behaviours.IllegalClient`
sends unchecked). Both play random legal moves otherwise.

>>> bot = IllegalBot(rate=1.0, seed=1)
>>> from wizard_arena.rules import Game, Rules
>>> game = Game(Rules(players=3), seed=1)
>>> game.deal()
>>> view = game.view(game.to_act)
>>> bot.bid(view) in view.legal_bids
False
"""

from __future__ import annotations

import random
import time

from wizard_arena.bot import Bot, GameInfo
from wizard_arena.rules import FULL_DECK, Card, SeatView, Suit

from .kinds import DEFAULT_RATES

__all__ = ["IllegalBot", "SlowBot"]


class _RatedBot(Bot):
    """A random legal player that misbehaves at ``rate``, ``limit`` times a game."""

    def __init__(self, rate: float, limit: int | None, seed: int | None) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be 0..1, not {rate}")
        self.rate = rate
        self.limit = limit
        self.rng = random.Random(seed)
        self.misbehaved = 0
        """Misbehaviours committed, over all games."""
        self.this_game = 0
        self.move_time: float | None = None

    def on_game_start(self, info: GameInfo) -> None:
        self.this_game = 0
        self.move_time = info.move_time

    def _misbehave(self) -> bool:
        if self.limit is not None and self.this_game >= self.limit:
            return False
        if self.rng.random() >= self.rate:
            return False
        self.this_game += 1
        self.misbehaved += 1
        return True

    def choose_trump(self, view: SeatView) -> Suit:
        return self.rng.choice(list(Suit))


class SlowBot(_RatedBot):
    """Answers after the deadline at ``rate``: sleeps ``delay`` seconds (by
    default one and a half times the time left, plus 50 ms) before a random
    legal answer. Under the SDK the late answer is not sent: the referee
    plays its default and records ``timeout``."""

    name = "slow"

    def __init__(
        self,
        rate: float = DEFAULT_RATES["slow"],
        delay: float | None = None,
        limit: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(rate, limit, seed)
        self.delay = delay

    def _maybe_sleep(self, view: SeatView) -> None:
        if self._misbehave():
            left = view.time_left or self.move_time or 1.0
            time.sleep(self.delay if self.delay is not None else 1.5 * left + 0.05)

    def bid(self, view: SeatView) -> int:
        self._maybe_sleep(view)
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        self._maybe_sleep(view)
        return self.rng.choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        self._maybe_sleep(view)
        return super().choose_trump(view)


class IllegalBot(_RatedBot):
    """Chooses an illegal action at ``rate``: a bid above the cards dealt, a
    card of its hand it may not play (not following suit), or a card it does
    not hold. The SDK does not send such an action (it logs a bot error and
    sends the referee's default); the :class:`IllegalClient` sends it as is."""

    name = "illegal"

    def __init__(
        self,
        rate: float = DEFAULT_RATES["illegal"],
        limit: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(rate, limit, seed)

    def bid(self, view: SeatView) -> int:
        if self._misbehave():
            return view.cards_per_player + 1 + self.rng.randrange(3)
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        if self._misbehave():
            legal = set(view.legal_cards)
            held_illegal = [c for c in dict.fromkeys(view.hand) if c not in legal]
            if held_illegal:
                return self.rng.choice(held_illegal)
            not_held = [c for c in dict.fromkeys(FULL_DECK) if c not in view.hand]
            return self.rng.choice(not_held)
        return self.rng.choice(view.legal_cards)
