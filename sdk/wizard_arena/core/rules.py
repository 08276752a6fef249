"""The rules of Wizard as pure functions, and the :class:`Rules` of one game.

>>> trick_winner(parse_cards("5S W 13H W"), Suit.HEARTS)
1
>>> [c.text for c in legal_cards(parse_cards("2C 9D 13H 11C"), parse_cards("7C"))]
['2C', '11C']
>>> score(3, 3), score(2, 4)
(50, -20)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card, Suit, parse_cards  # noqa: F401  (parse_cards: used by doctests)

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "BidRestriction",
    "Rules",
    "allowed_bids",
    "forbidden_bid",
    "legal_cards",
    "rank_totals",
    "score",
    "suit_to_follow",
    "trick_winner",
]

MIN_PLAYERS = 3
MAX_PLAYERS = 6


class BidRestriction(enum.StrEnum):
    """Which bids the dealer may not make. Values are the conformance-format names."""

    NONE = "none"
    """Any bid from 0 to the number of cards dealt."""
    DEALER_NOT_EQUAL = "dealer_not_equal"
    """The dealer may not bid so that all bids add up to the number of tricks."""
    CANADIAN = "canadian"
    """As DEALER_NOT_EQUAL, only when the dealer leads strictly on points; 0 is always allowed."""

    def __repr__(self) -> str:
        return f"BidRestriction.{self.name}"


@dataclass(frozen=True, slots=True)
class Rules:
    """The options of one game.

    >>> Rules(players=4).round_sizes
    (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    >>> Rules(players=7)
    Traceback (most recent call last):
    ...
    ValueError: players must be 3..6, not 7
    """

    players: int = 4
    bid_restriction: BidRestriction = BidRestriction.NONE

    def __post_init__(self) -> None:
        if not isinstance(self.players, int) or not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, not {self.players}")
        if not isinstance(self.bid_restriction, BidRestriction):
            object.__setattr__(self, "bid_restriction", BidRestriction(self.bid_restriction))

    @property
    def round_sizes(self) -> tuple[int, ...]:
        """Cards dealt to each player in each round: 1, 2, ... 60 / players."""
        return tuple(range(1, 60 // self.players + 1))

    @property
    def rounds(self) -> int:
        """Number of rounds in the game."""
        return len(self.round_sizes)

    def describe(self) -> str:
        """A one-line human description of the options in force."""
        return f"{self.players} players, bid restriction {self.bid_restriction.value}"

    def to_dict(self) -> dict[str, object]:
        """The options as a JSON-ready dict, in the conformance format's ``rules`` shape."""
        return {"players": self.players, "bid_restriction": self.bid_restriction.value}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Rules:
        """Inverse of :meth:`to_dict`; unknown keys are refused."""
        known = {"players", "bid_restriction"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown rule option(s): {', '.join(sorted(unknown))}")
        players = data.get("players", 4)
        if not isinstance(players, int):
            raise ValueError(f"players must be an integer, not {players!r}")
        restriction = data.get("bid_restriction", "none")
        try:
            br = BidRestriction(str(restriction))
        except ValueError:
            names = ", ".join(b.value for b in BidRestriction)
            raise ValueError(f"unknown bid_restriction {restriction!r} (one of {names})") from None
        return cls(players=players, bid_restriction=br)


def suit_to_follow(trick: Sequence[Card]) -> Suit | None:
    """The suit the next card must follow, or ``None`` if play is free.

    A Wizard lead frees the trick. After a Jester lead the first suited card
    sets the suit, unless a Wizard comes first (then the trick is free).

    >>> suit_to_follow(parse_cards("J J 6S"))
    Suit.SPADES
    >>> suit_to_follow(parse_cards("J W 6S")) is None
    True
    """
    for card in trick:
        if card.is_wizard:
            return None
        if card.suit is not None:
            return card.suit
    return None


def legal_cards(hand: Sequence[Card], trick: Sequence[Card]) -> list[Card]:
    """The cards of ``hand`` (a multiset) that may be played to ``trick``.

    Wizards and Jesters may always be played. Otherwise a player holding the
    suit to follow must play it; a player without it plays anything.
    """
    follow = suit_to_follow(trick)
    if follow is None:
        return list(hand)
    for card in hand:
        if card.suit is follow:
            return [c for c in hand if c.suit is follow or c.suit is None]
    return list(hand)


def trick_winner(plays: Sequence[Card], trump: Suit | None) -> int:
    """Index in ``plays`` of the card that wins a complete trick.

    The first Wizard wins; else the highest trump; else the highest card of
    the led suit (the first suited card's suit); a trick of only Jesters
    goes to the first Jester.
    """
    win = 0
    best: Card | None = None
    for i, card in enumerate(plays):
        if card.is_wizard:
            return i
        suit = card.suit
        if suit is None:
            continue
        if best is None:
            win, best = i, card
        elif suit is best.suit:
            if card.rank > best.rank:
                win, best = i, card
        elif suit is trump:
            win, best = i, card
    return win


def score(bid: int, tricks: int) -> int:
    """Points for one player in one round: 20 + 10 per trick for an exact bid,
    else -10 per trick of difference."""
    if bid == tricks:
        return 20 + 10 * tricks
    return -10 * abs(bid - tricks)


def forbidden_bid(
    restriction: BidRestriction,
    cards: int,
    other_bids: Sequence[int],
    dealer_total: int,
    other_totals: Sequence[int],
) -> int | None:
    """The one bid the dealer may not make under ``restriction``, or ``None``.

    ``other_bids`` are the other players' bids this round, ``dealer_total``
    and ``other_totals`` the running totals before the round.

    >>> forbidden_bid(BidRestriction.DEALER_NOT_EQUAL, 3, [1, 1], 0, [0, 0])
    1
    >>> forbidden_bid(BidRestriction.CANADIAN, 3, [1, 1], 0, [0, 0]) is None
    True
    """
    if restriction is BidRestriction.NONE:
        return None
    if restriction is BidRestriction.CANADIAN and not all(dealer_total > t for t in other_totals):
        return None
    bid = cards - sum(other_bids)
    if not 0 <= bid <= cards:
        return None
    if restriction is BidRestriction.CANADIAN and bid == 0:
        return None
    return bid


def rank_totals(totals: Sequence[int]) -> list[int]:
    """Standard competition ranks (1 is best; ties share a rank, the next rank is skipped).

    >>> rank_totals([50, 120, 50, -10])
    [2, 1, 2, 4]
    """
    return [1 + sum(1 for u in totals if u > t) for t in totals]


def allowed_bids(
    rules: Rules,
    cards: int,
    seat: int,
    dealer: int,
    bids: Sequence[int | None],
    totals: Sequence[int],
) -> list[int]:
    """The bids ``seat`` may make this round, given the bids made so far.

    Only the dealer (who bids last) can be restricted.

    >>> allowed_bids(Rules(3, BidRestriction.DEALER_NOT_EQUAL), 2, 0, 0, [None, 1, 0], [0, 0, 0])
    [0, 2]
    """
    if seat != dealer or rules.bid_restriction is BidRestriction.NONE:
        return list(range(cards + 1))
    others = [b for s, b in enumerate(bids) if s != seat and b is not None]
    other_totals = [t for s, t in enumerate(totals) if s != seat]
    bad = forbidden_bid(rules.bid_restriction, cards, others, totals[seat], other_totals)
    return [b for b in range(cards + 1) if b != bad]
