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

from .cards import (  # noqa: F401  (parse_cards: used by doctests)
    FULL_DECK,
    SUITED_WIZARD_DECK,
    Card,
    Suit,
    parse_cards,
)

__all__ = [
    "FLAG_OPTIONS",
    "MAXIMUS_TRUMPS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "VARIANT_OPTIONS",
    "BidRestriction",
    "Rules",
    "allowed_bids",
    "forbidden_bid",
    "legal_cards",
    "rank_totals",
    "score",
    "score_range",
    "suit_to_follow",
    "trick_winner",
    "trump_named_waits",
    "wizard_trump",
]

MIN_PLAYERS = 3
MAX_PLAYERS = 6


class BidRestriction(enum.StrEnum):
    """Which bids the dealer may not make. Values are the conformance-format names."""

    NONE = "none"
    """Any bid from 0 to the number of cards dealt."""
    DEALER_NOT_EQUAL = "dealer_not_equal"
    """The dealer may not bid so that all bids add up to the number of tricks
    (the "+/-" rule: "the sum may not equal the tricks")."""
    CANADIAN = "canadian"
    """As DEALER_NOT_EQUAL, only when the dealer leads strictly on points; 0 is
    always allowed (the Canadian rule of Wizard tournaments)."""

    def __repr__(self) -> str:
        return f"BidRestriction.{self.name}"


#: Trump of each round of Wizard Maximus: clubs, diamonds, hearts, spades, then none.
MAXIMUS_TRUMPS: tuple[Suit | None, ...] = (
    Suit.CLUBS,
    Suit.DIAMONDS,
    Suit.HEARTS,
    Suit.SPADES,
    None,
)

#: The on/off rule variants (fields of :class:`Rules`), in :data:`VARIANT_OPTIONS` order.
FLAG_OPTIONS: tuple[str, ...] = (
    "hidden_bids",
    "reveal_bids_after_tricks",
    "blind_first_round",
    "maximus",
    "tricksy",
    "tricksy_suited",
    "lowest_score_deals",
    "first_dealer_by_draw",
)

#: Names of the optional rule variants (the names used in ``Rules.to_dict``,
#: conformance vectors, tournament files and the protocol's ``rule_options``).
VARIANT_OPTIONS: tuple[str, ...] = (*FLAG_OPTIONS, "round_sizes")


@dataclass(frozen=True, slots=True)
class Rules:
    """The options of one game: table size, bid restriction and variants.

    >>> Rules(players=4).round_sizes
    (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    >>> Rules(players=5, maximus=True).round_sizes
    (12, 12, 12, 12, 12)
    >>> Rules(players=7)
    Traceback (most recent call last):
    ...
    ValueError: players must be 3..6, not 7
    >>> Rules(hidden_bids=True, bid_restriction=BidRestriction.CANADIAN)
    Traceback (most recent call last):
    ...
    ValueError: hidden_bids cannot be combined with bid_restriction canadian: ...
    >>> Rules(tricksy=True, tricksy_suited=True)
    Traceback (most recent call last):
    ...
    ValueError: tricksy and tricksy_suited are two forms of Tricksy Wizard: ...
    """

    players: int = 4
    bid_restriction: BidRestriction = BidRestriction.NONE
    hidden_bids: bool = False
    """Everyone bids without seeing the others' bids; all are revealed together."""
    blind_first_round: bool = False
    """Round 1 (one card each): each player sees every other card but not their own."""
    maximus: bool = False
    """Wizard Maximus: five rounds dealing every card; trump C, D, H, S, then none."""
    tricksy: bool = False
    """Whoever plays a Wizard names the trump in force from the next trick on."""
    lowest_score_deals: bool = False
    """From round 2 the player with the fewest points deals."""
    hand_sizes: tuple[int, ...] | None = None
    """Short game: cards dealt in each round, instead of 1 .. 60 / players."""
    tricksy_suited: bool = False
    """Tricksy Wizard with suited Wizards: the four Wizards carry the four
    suits (``WS WH WD WC``); a Wizard makes its suit trump at once when played
    (its player names one only for a Wizard without a printed suit)."""
    reveal_bids_after_tricks: bool = False
    """With ``hidden_bids``: the bids are revealed only when the round's tricks
    are played, not before the first card."""
    first_dealer_by_draw: bool = False
    """The first dealer is the player who draws the highest card (ties draw again)."""

    def __post_init__(self) -> None:
        if not isinstance(self.players, int) or not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, not {self.players}")
        if not isinstance(self.bid_restriction, BidRestriction):
            object.__setattr__(self, "bid_restriction", BidRestriction(self.bid_restriction))
        for name in FLAG_OPTIONS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, not {getattr(self, name)!r}")
        most = 60 // self.players
        if self.hand_sizes is not None:
            sizes = tuple(self.hand_sizes)
            object.__setattr__(self, "hand_sizes", sizes)
            if not sizes:
                raise ValueError("round_sizes must list at least one round")
            for size in sizes:
                if type(size) is not int or not 1 <= size <= most:
                    raise ValueError(
                        f"round_sizes: each round deals 1..{most} cards at "
                        f"{self.players} players, not {size!r}"
                    )
            if self.maximus:
                raise ValueError("round_sizes cannot be combined with maximus (it deals all cards)")
        if self.hidden_bids and self.bid_restriction is not BidRestriction.NONE:
            raise ValueError(
                f"hidden_bids cannot be combined with bid_restriction "
                f"{self.bid_restriction.value}: the dealer does not see the other bids"
            )
        if self.blind_first_round and self.round_sizes[0] != 1:
            raise ValueError(
                "blind_first_round needs a first round of one card each (a player cannot "
                "choose among cards they cannot see)"
            )
        if self.tricksy and self.tricksy_suited:
            raise ValueError(
                "tricksy and tricksy_suited are two forms of Tricksy Wizard: choose one "
                "(tricksy: the player names the suit, from the next trick on; tricksy_suited: "
                "the Wizard's printed suit, at once)"
            )
        if self.reveal_bids_after_tricks and not self.hidden_bids:
            raise ValueError(
                "reveal_bids_after_tricks is a reveal time of hidden bids: it needs hidden_bids"
            )

    @property
    def round_sizes(self) -> tuple[int, ...]:
        """Cards dealt to each player in each round: 1, 2, ... 60 / players by
        default; ``hand_sizes`` for a short game; five rounds of all cards for
        Wizard Maximus."""
        if self.maximus:
            return (60 // self.players,) * 5
        if self.hand_sizes is not None:
            return self.hand_sizes
        return tuple(range(1, 60 // self.players + 1))

    @property
    def rounds(self) -> int:
        """Number of rounds in the game."""
        return len(self.round_sizes)

    @property
    def deck(self) -> tuple[Card, ...]:
        """The 60 cards of the game: :data:`FULL_DECK`, or with
        ``tricksy_suited`` the deck of suited Wizards (``WS WH WD WC`` for the
        four ``W``)."""
        return SUITED_WIZARD_DECK if self.tricksy_suited else FULL_DECK

    @property
    def options(self) -> tuple[str, ...]:
        """Names of the variant options in force (see :data:`VARIANT_OPTIONS`)."""
        out = [name for name in FLAG_OPTIONS if getattr(self, name)]
        if self.hand_sizes is not None:
            out.append("round_sizes")
        return tuple(out)

    def fixed_trump(self, round_: int) -> tuple[bool, Suit | None]:
        """``(True, suit)`` when the variant fixes round ``round_``'s trump
        (Wizard Maximus), else ``(False, None)``: trump comes from the turned card."""
        if self.maximus:
            return True, MAXIMUS_TRUMPS[round_ - 1]
        return False, None

    def describe(self) -> str:
        """A one-line human description of the options in force.

        >>> Rules(3, tricksy=True, hand_sizes=(2, 4)).describe()
        '3 players, bid restriction none, tricksy, round_sizes 2,4'
        """
        text = f"{self.players} players, bid restriction {self.bid_restriction.value}"
        for name in self.options:
            if name == "round_sizes":
                text += ", round_sizes " + ",".join(map(str, self.round_sizes))
            else:
                text += f", {name}"
        return text

    def to_dict(self) -> dict[str, object]:
        """The options as a JSON-ready dict, in the conformance format's ``rules``
        shape; variant keys appear only when in force."""
        d: dict[str, object] = {
            "players": self.players,
            "bid_restriction": self.bid_restriction.value,
        }
        for name in self.options:
            d[name] = list(self.round_sizes) if name == "round_sizes" else True
        return d

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Rules:
        """Inverse of :meth:`to_dict`; unknown keys are refused."""
        known = {"players", "bid_restriction", *VARIANT_OPTIONS}
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
        flags: dict[str, bool] = {}
        for name in FLAG_OPTIONS:
            value = data.get(name, False)
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, not {value!r}")
            flags[name] = value
        sizes = data.get("round_sizes")
        hand_sizes: tuple[int, ...] | None = None
        if sizes is not None:
            if not isinstance(sizes, list | tuple) or not all(type(x) is int for x in sizes):
                raise ValueError(f"round_sizes must be a list of integers, not {sizes!r}")
            hand_sizes = tuple(sizes)
        return cls(players=players, bid_restriction=br, hand_sizes=hand_sizes, **flags)


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


def wizard_trump(
    rules: Rules, card: Card, tricks_done: int, cards: int
) -> tuple[Suit | None, bool]:
    """What playing the Wizard ``card`` does to trump (Tricksy Wizard), with
    ``tricks_done`` tricks of the round's ``cards`` complete: ``(suit, False)``
    when a suited Wizard makes its printed suit trump at once
    (``tricksy_suited``); ``(None, True)`` when its player must name the trump
    (``tricksy``, or a plain ``W`` under ``tricksy_suited``; not in a round's
    last trick); ``(None, False)`` when nothing changes.

    >>> wizard_trump(Rules(tricksy_suited=True), Card("WH"), 0, 5)
    (Suit.HEARTS, False)
    >>> tricksy = Rules(tricksy=True)
    >>> wizard_trump(tricksy, Card("W"), 3, 5), wizard_trump(tricksy, Card("W"), 4, 5)
    ((None, True), (None, False))
    """
    if not (rules.tricksy or rules.tricksy_suited):
        return None, False
    if card.wizard_suit is not None and rules.tricksy_suited:
        return card.wizard_suit, False
    return None, tricks_done + 1 < cards


def trump_named_waits(rules: Rules, mid_trick: bool) -> bool:
    """Whether a trump named by a Wizard's player takes effect only from the
    next trick (``tricksy``, named while its trick is in progress: shown as
    ``next_trump`` meanwhile) rather than at once (``tricksy_suited``, or
    named between tricks)."""
    return mid_trick and not rules.tricksy_suited


def score(bid: int, tricks: int) -> int:
    """Points for one player in one round: 20 + 10 per trick for an exact bid,
    else -10 per trick of difference."""
    if bid == tricks:
        return 20 + 10 * tricks
    return -10 * abs(bid - tricks)


def score_range(rules: Rules) -> tuple[int, int]:
    """The lowest and highest final total one player can reach in a game
    under ``rules``: the sums over its rounds of the worst and best
    :func:`score` for a bid and a trick count of 0 to the cards dealt.

    >>> score_range(Rules(players=4)), score_range(Rules(players=3))
    ((-1200, 1500), (-2100, 2500))
    >>> score_range(Rules(players=4, hand_sizes=(1, 2, 3)))
    (-60, 120)
    """
    low = high = 0
    for cards in rules.round_sizes:
        points = [score(b, t) for b in range(cards + 1) for t in range(cards + 1)]
        low += min(points)
        high += max(points)
    return low, high


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
