"""Phases, actions, completed tricks and the public events of a game.

All are immutable values with eval-able reprs:

>>> Bid(2)
Bid(bid=2)
>>> Play(Card("13H"))
Play(card=Card('13H'))
>>> ChooseTrump(Suit.SPADES)
ChooseTrump(suit=Suit.SPADES)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

from .cards import Card, Suit

__all__ = [
    "Action",
    "Bid",
    "BidMade",
    "CardPlayed",
    "ChooseTrump",
    "Event",
    "GameOver",
    "Phase",
    "Play",
    "RoundResult",
    "RoundScored",
    "RoundStarted",
    "Trick",
    "TrickWon",
    "TrumpChosen",
    "action_text",
    "default_action",
]


class Phase(enum.Enum):
    """What the game is waiting for."""

    DEAL = "deal"
    """Between rounds (and before the first): waiting for the next deal."""
    CHOOSE_TRUMP = "choose_trump"
    """A Wizard was turned: the dealer chooses the trump suit."""
    BID = "bid"
    """Players bid in turn from the dealer's left."""
    PLAY = "play"
    """Tricks are played."""
    GAME_OVER = "game_over"
    """The last round has been scored."""

    def __repr__(self) -> str:
        return f"Phase.{self.name}"


def _same_action(a: tuple[object, ...], b: object) -> bool:
    # Actions of different kinds are never equal: without this, Bid(0) ==
    # ChooseTrump(Suit.SPADES) (a Suit is an int) and a trump choice would be
    # "in" a list of legal bids.
    return type(a) is type(b) and tuple.__eq__(a, b)


class Bid(NamedTuple):
    """Bid to win exactly ``bid`` tricks this round."""

    bid: int

    def __eq__(self, other: object) -> bool:
        return _same_action(self, other)

    def __ne__(self, other: object) -> bool:
        return not _same_action(self, other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)


class Play(NamedTuple):
    """Play ``card`` to the current trick."""

    card: Card

    def __eq__(self, other: object) -> bool:
        return _same_action(self, other)

    def __ne__(self, other: object) -> bool:
        return not _same_action(self, other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)


class ChooseTrump(NamedTuple):
    """The dealer's trump choice after a turned Wizard."""

    suit: Suit

    def __eq__(self, other: object) -> bool:
        return _same_action(self, other)

    def __ne__(self, other: object) -> bool:
        return not _same_action(self, other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)


Action = Bid | Play | ChooseTrump


def action_text(action: Action) -> str:
    """Short human text of an action: ``bid 2``, ``play 13H``, ``trump H``."""
    if isinstance(action, Bid):
        return f"bid {action.bid}"
    if isinstance(action, Play):
        return f"play {action.card.text}"
    return f"trump {action.suit.letter}"


def default_action(legal: Sequence[Action]) -> Action:
    """The referee's default for a seat that timed out, erred or left.

    The lowest bid allowed; else the Jester if it may be played, else the
    lowest legal card in deck order (spades, hearts, diamonds, clubs, low to
    high, then the Wizard); else the first trump suit offered (spades first).
    This is part of the rules so every referee plays the same default.

    >>> default_action([Play(Card("W")), Play(Card("3C")), Play(Card("2H"))])
    Play(card=Card('2H'))
    """
    if not legal:
        raise ValueError("no legal action to choose from")
    plays = [a for a in legal if isinstance(a, Play)]
    if plays:
        for a in plays:
            if a.card.is_jester:
                return a
        return min(plays, key=lambda a: a.card.index)
    bids = [a for a in legal if isinstance(a, Bid)]
    if bids:
        return min(bids, key=lambda a: a.bid)
    return legal[0]


class Trick(NamedTuple):
    """A completed trick: who led, the cards in play order, and the winning seat."""

    leader: int
    cards: tuple[Card, ...]
    winner: int

    def seats(self, players: int) -> list[int]:
        """The seat that played each card of :attr:`cards`."""
        return [(self.leader + i) % players for i in range(len(self.cards))]


class RoundResult(NamedTuple):
    """The outcome of one round, by seat."""

    round: int
    dealer: int
    bids: tuple[int, ...]
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]


# ---------------------------------------------------------------------------
# Public events: everything every seat sees happen at the table, in order.
# Hands are never in an event; each seat learns its own through its view.


class RoundStarted(NamedTuple):
    """Cards were dealt. ``trump`` is ``None`` for no trump or while the dealer must choose."""

    round: int
    dealer: int
    cards: int
    turned_card: Card | None
    trump: Suit | None


class TrumpChosen(NamedTuple):
    """The dealer chose trump after a turned Wizard."""

    seat: int
    suit: Suit


class BidMade(NamedTuple):
    seat: int
    bid: int


class CardPlayed(NamedTuple):
    seat: int
    card: Card


class TrickWon(NamedTuple):
    """A trick was completed; ``number`` counts tricks in the round from 1."""

    number: int
    winner: int
    trick: Trick


class RoundScored(NamedTuple):
    result: RoundResult


class GameOver(NamedTuple):
    """Final totals and competition ranks (1 best; ties share a rank)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


Event = RoundStarted | TrumpChosen | BidMade | CardPlayed | TrickWon | RoundScored | GameOver
