"""The deck in play: seeded deals, explicit deals checked against the deck,
and the draw for the first dealer.

Everything random takes the game's :class:`random.Random`; nothing here keeps
state.

>>> import random
>>> draw = draw_first_dealer(3, random.Random(21))
>>> [[c.text if c is not None else None for c in row] for row in draw]
[['4C', '9H', '9S'], [None, '3H', '10H']]
>>> dealer_of_draw(3, draw)
2
>>> dealer_of_draw(3, [parse_cards("13S W W"), [None, Card("2C"), Card("5H")]])
2
"""

from __future__ import annotations

import operator
import random
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .cards import FULL_DECK, Card, parse_cards  # noqa: F401  (parse_cards: doctests)
from .errors import DealError

if TYPE_CHECKING:
    from .laws import Rules

__all__ = [
    "DrawRow",
    "check_deal",
    "choose_first_dealer",
    "deal_problem",
    "dealer_of_draw",
    "draw_first_dealer",
    "draw_value",
    "shuffled_deal",
]

#: One round of the draw: the card each seat drew, ``None`` for a seat that
#: did not draw in that round (it was not among the tied).
DrawRow = Sequence[Card | None]

_WIZARDS_IN_A_DECK = 4
_ORDER = operator.attrgetter("order")  # sorting key: deck order, as Card.__lt__


def deal_problem(cards: Sequence[Card], deck: Sequence[Card]) -> str | None:
    """Why ``cards`` (a multiset) cannot all come from one ``deck``, or ``None``.

    With the deck of suited Wizards (``tricksy_suited``) a plain ``W`` stands
    for a Wizard whose card shows no suit: the four Wizards may be any mix of
    ``W`` and distinct suited Wizards.

    >>> deal_problem(parse_cards("W W W W W"), FULL_DECK)
    'the deck holds 4 of W, the deal uses 5'
    >>> deal_problem(parse_cards("WH"), FULL_DECK)
    'WH is a suited Wizard: only the tricksy_suited deck has them'
    """
    have = Counter(deck)
    used = Counter(cards)
    suited_deck = any(c.wizard_suit is not None for c in have)
    for card, count in sorted(used.items()):
        if suited_deck and card.is_wizard:
            limit = _WIZARDS_IN_A_DECK if card.wizard_suit is None else 1
        else:
            limit = have[card]
        if card.wizard_suit is not None and not suited_deck:
            return f"{card.text} is a suited Wizard: only the tricksy_suited deck has them"
        if count > limit:
            return f"the deck holds {limit} of {card.text}, the deal uses {count}"
    wizards = sum(n for c, n in used.items() if c.is_wizard)
    if suited_deck and wizards > _WIZARDS_IN_A_DECK:
        return f"the deck holds {_WIZARDS_IN_A_DECK} Wizards, the deal uses {wizards}"
    return None


def shuffled_deal(
    rng: random.Random, deck: Sequence[Card], players: int, size: int, dealer: int
) -> tuple[list[list[Card]], Card | None]:
    """Deal ``size`` cards to each seat from ``deck`` shuffled once with ``rng``.

    The seat left of the dealer gets the first ``size`` cards, the next seat
    to the left the next ``size``, ..., the dealer the last; the card after
    them is turned (``None`` when no card is left). Hands are in deck order.
    """
    cards = list(deck)
    rng.shuffle(cards)
    first = (dealer + 1) % players
    hands: list[list[Card]] = [[] for _ in range(players)]
    for k in range(players):
        hands[(first + k) % players] = sorted(cards[k * size : (k + 1) * size], key=_ORDER)
    rest = players * size
    return hands, (cards[rest] if rest < len(cards) else None)


def check_deal(
    hands: Sequence[Sequence[object]],
    turned: Card | None,
    size: int,
    players: int,
    deck: Sequence[Card],
    round_: int,
) -> None:
    """Raise :class:`DealError` unless ``hands`` and ``turned`` could be round
    ``round_``'s deal (``size`` cards each) from one ``deck``."""
    if len(hands) != players:
        raise DealError(f"need {players} hands, got {len(hands)}")
    cards: list[Card] = []
    for seat, hand in enumerate(hands):
        if len(hand) != size:
            raise DealError(f"round {round_} deals {size} cards; seat {seat} got {len(hand)}")
        for c in hand:
            if not isinstance(c, Card):
                raise DealError(f"seat {seat}: not a card: {c!r}")
            cards.append(c)
    if turned is not None:
        cards.append(turned)
    problem = deal_problem(cards, deck)
    if problem is not None:
        raise DealError(problem)
    left = len(deck) - players * size
    if (turned is None) != (left == 0):
        if turned is None:
            raise DealError(f"{left} cards are left undealt: the turned card is needed")
        raise DealError("no card is left undealt: turned_card must be None")


# -- the draw for the first dealer ------------------------------------------------------


def draw_value(card: Card) -> int:
    """A card's value in the draw for the first dealer: every Wizard 14, a
    suited card its rank (1..13, the suits equal), every Jester 0.

    >>> [draw_value(c) for c in parse_cards("W WH 13S 13C 1D J")]
    [14, 14, 13, 13, 1, 0]
    """
    if card.is_wizard:
        return 14
    return card.rank  # a Jester's rank is 0


def _tied_highest(row: DrawRow, seats: Sequence[int]) -> list[int]:
    best = max(draw_value(row[s]) for s in seats)  # type: ignore[arg-type]
    return [s for s in seats if draw_value(row[s]) == best]  # type: ignore[arg-type]


def draw_first_dealer(
    players: int, rng: random.Random, deck: Sequence[Card] = FULL_DECK
) -> tuple[tuple[Card | None, ...], ...]:
    """Draw for the first dealer with ``rng``: each round shuffles a fresh
    ``deck`` once (``rng.shuffle``) and the seats still drawing, in seat
    order, take its first cards; the seats tied for the highest card
    (:func:`draw_value`) draw again, until one is highest. Returns the rows
    of the draw (see :data:`DrawRow`); :func:`dealer_of_draw` reads the dealer."""
    drawing = list(range(players))
    rows: list[tuple[Card | None, ...]] = []
    while True:
        cards = list(deck)
        rng.shuffle(cards)
        row: list[Card | None] = [None] * players
        for k, seat in enumerate(drawing):
            row[seat] = cards[k]
        rows.append(tuple(row))
        drawing = _tied_highest(row, drawing)
        if len(drawing) == 1:
            return tuple(rows)


def dealer_of_draw(players: int, draw: Sequence[DrawRow], deck: Sequence[Card] = FULL_DECK) -> int:
    """The seat that deals first after ``draw``; ValueError with the reason
    when the rows are not a complete draw by the rules: every seat draws in
    the first row, exactly the seats tied for the highest card draw in the
    next, each row's cards come from one ``deck``, and the last row has one
    highest card."""
    if not draw:
        raise ValueError("the draw has no row")
    drawing = list(range(players))
    for i, row in enumerate(draw):
        where = f"draw row {i + 1}"
        if len(row) != players:
            raise ValueError(f"{where}: need {players} entries (null for a seat not drawing)")
        if i > 0 and len(drawing) == 1:
            raise ValueError(f"{where}: seat {drawing[0]} had already drawn the highest card")
        for seat, card in enumerate(row):
            if (card is not None) != (seat in drawing):
                want = "draws" if seat in drawing else "does not draw"
                raise ValueError(f"{where}: seat {seat} {want} in this row")
            if card is not None and not isinstance(card, Card):
                raise ValueError(f"{where}: not a card: {card!r}")
        problem = deal_problem([c for c in row if c is not None], deck)
        if problem is not None:
            raise ValueError(f"{where}: {problem}")
        drawing = _tied_highest(row, drawing)
    if len(drawing) != 1:
        raise ValueError(f"the draw is unfinished: seats {drawing} tie for the highest card")
    return drawing[0]


def choose_first_dealer(
    rules: Rules,
    rng: random.Random,
    first_dealer: int | None = None,
    draw: Sequence[DrawRow] | None = None,
) -> tuple[int, tuple[tuple[Card | None, ...], ...]]:
    """The seat that deals round 1, and the rows of its draw (empty: not drawn).

    Without ``first_dealer_by_draw``: ``first_dealer`` (default seat 0), and
    no ``draw``. With it: the seat ``draw`` gives (a draw already made, e.g. a
    record's; :func:`dealer_of_draw` refuses one that breaks the rules), or
    else a draw made now with ``rng`` (:func:`draw_first_dealer`, from the
    rules' deck), so the same seed gives the same draw. A ``first_dealer``
    given with a draw must be the seat it gives (a check for replays); given
    alone it is refused. ValueError says why.

    >>> from .laws import Rules
    >>> choose_first_dealer(Rules(3), random.Random(1), 2)
    (2, ())
    >>> dealer, rows = choose_first_dealer(Rules(3, first_dealer_by_draw=True), random.Random(21))
    >>> dealer, len(rows)
    (2, 2)
    """
    n = rules.players
    rows: tuple[tuple[Card | None, ...], ...] = ()
    if rules.first_dealer_by_draw:
        if draw is None:
            if first_dealer is not None:
                raise ValueError(
                    "first_dealer_by_draw: the first dealer is drawn; give the draw "
                    "(draw=...) with first_dealer, or neither"
                )
            draw = draw_first_dealer(n, rng, rules.deck)
        rows = tuple(tuple(row) for row in draw)
        drawn = dealer_of_draw(n, rows, rules.deck)
        if first_dealer is not None and first_dealer != drawn:
            raise ValueError(f"first_dealer is {first_dealer}, but the draw gives {drawn}")
        first_dealer = drawn
    elif draw is not None:
        raise ValueError("a draw for the first dealer needs the rule first_dealer_by_draw")
    if first_dealer is None:
        first_dealer = 0
    if not 0 <= first_dealer < n:
        raise ValueError(f"first_dealer must be a seat 0..{n - 1}, not {first_dealer}")
    return first_dealer, rows
