"""Cards, suits and the 60-card Wizard deck.

Cards are interned values: there is exactly one :class:`Card` object per
distinct card, so ``Card("13H") is Card("13H")`` and all four Wizards are
the same value :data:`WIZARD`. Hands are therefore multisets (lists) of
cards.

Where a variant needs the four Wizards told apart (``tricksy_suited``: each
Wizard carries a suit), they are the *suited Wizards* ``WS WH WD WC``
(:data:`SUITED_WIZARDS`): Wizards in every respect, with the printed suit in
:attr:`Card.wizard_suit`. ``W`` keeps meaning "a Wizard" (with no printed
suit) everywhere else.

>>> Card("13H")
Card('13H')
>>> Card("13H").rank, Card("13H").suit
(13, Suit.HEARTS)
>>> WIZARD.is_wizard, JESTER.suit is None
(True, True)
>>> len(FULL_DECK)
60
>>> Card("WH").is_wizard, Card("WH").wizard_suit, Card("WH").suit is None
(True, Suit.HEARTS, True)
>>> sorted(parse_cards("J WC W 13C WS"))
[Card('13C'), Card('W'), Card('WS'), Card('WC'), Card('J')]
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Final

__all__ = [
    "ALL_CARDS",
    "FULL_DECK",
    "JESTER",
    "RANKS",
    "SUITED_CARDS",
    "SUITED_WIZARDS",
    "SUITED_WIZARD_DECK",
    "WIZARD",
    "Card",
    "Suit",
    "format_cards",
    "parse_cards",
]


class Suit(enum.IntEnum):
    """The four suits. Their letters are ``S H D C``.

    >>> Suit.from_letter("h")
    Suit.HEARTS
    >>> Suit.CLUBS.letter
    'C'
    """

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return "SHDC"[self.value]

    @classmethod
    def from_letter(cls, letter: str) -> Suit:
        """Parse ``S``, ``H``, ``D`` or ``C`` (case-insensitive)."""
        try:
            return _SUIT_BY_LETTER[letter.upper()]
        except (KeyError, AttributeError):
            raise ValueError(f"not a suit: {letter!r} (expected one of S H D C)") from None

    def __repr__(self) -> str:
        return f"Suit.{self.name}"

    __str__ = __repr__

    def __bool__(self) -> bool:
        # every suit is a value: ``if trump:`` must not treat spades (0) as "no trump"
        return True


_SUIT_BY_LETTER: Final = {s.letter: s for s in Suit}

#: Ranks of suited cards, 1 lowest to 13 highest.
RANKS: Final = range(1, 14)


class Card:
    """One Wizard card: a suited card (rank 1..13 of a suit), a Wizard or a Jester.

    Construct from text: ``Card("7C")``, ``Card("W")``, ``Card("J")``, and for
    the suited Wizards of ``tricksy_suited`` ``Card("WH")``. The result is the
    interned card; cards compare by identity and sort in deck order (spades,
    hearts, diamonds, clubs by rank, then the Wizards ``W WS WH WD WC``, then
    the Jester).
    """

    __slots__ = ("index", "is_jester", "is_wizard", "order", "rank", "suit", "text", "wizard_suit")

    index: int
    """0..51 for suited cards (``suit * 13 + rank - 1``), 52 Wizard, 53 Jester,
    54..57 the suited Wizards ``WS WH WD WC``."""
    order: int
    """Position in deck order (what cards sort by): 0..51 the suited cards,
    52 ``W``, 53..56 ``WS WH WD WC``, 57 the Jester."""
    suit: Suit | None
    """The suit, or ``None`` for a Wizard or Jester (a suited Wizard too: its
    printed suit is :attr:`wizard_suit`, it sets no suit to follow)."""
    rank: int
    """1..13 for suited cards, 0 for a Wizard or Jester."""
    is_wizard: bool
    """True for every Wizard, suited or not."""
    is_jester: bool
    wizard_suit: Suit | None
    """The suit printed on a suited Wizard (``tricksy_suited``); ``None`` for
    every other card, the plain Wizard ``W`` included."""
    text: str
    """The card's text form, as in the conformance vectors: ``13H``, ``W``,
    ``WH``, ``J``."""

    def __new__(cls, text: str) -> Card:
        try:
            return _BY_TEXT[text.upper()]
        except (KeyError, AttributeError):
            raise ValueError(
                f"not a card: {text!r} (expected rank 1-13 and suit S/H/D/C like '13H', "
                "or 'W' or 'J', or a suited Wizard 'WS' 'WH' 'WD' 'WC')"
            ) from None

    @classmethod
    def _make(
        cls,
        index: int,
        suit: Suit | None,
        rank: int,
        text: str,
        *,
        order: int | None = None,
        wizard_suit: Suit | None = None,
    ) -> Card:
        card = object.__new__(cls)
        set_ = object.__setattr__
        set_(card, "index", index)
        set_(card, "order", index if order is None else order)
        set_(card, "suit", suit)
        set_(card, "rank", rank)
        set_(card, "is_wizard", index == 52 or index >= 54)
        set_(card, "is_jester", index == 53)
        set_(card, "wizard_suit", wizard_suit)
        set_(card, "text", text)
        return card

    @staticmethod
    def suited(suit: Suit, rank: int) -> Card:
        """The card of ``rank`` (1..13) in ``suit``.

        >>> Card.suited(Suit.SPADES, 1)
        Card('1S')
        """
        if not 1 <= rank <= 13:
            raise ValueError(f"rank must be 1..13, not {rank}")
        return _BY_INDEX[int(suit) * 13 + rank - 1]

    @staticmethod
    def wizard(suit: Suit | None) -> Card:
        """The Wizard printed with ``suit`` (``None``: the plain Wizard ``W``).

        >>> Card.wizard(Suit.DIAMONDS), Card.wizard(None)
        (Card('WD'), Card('W'))
        """
        return WIZARD if suit is None else _BY_INDEX[54 + int(suit)]

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with :attr:`index` ``index`` (0..57)."""
        return _BY_INDEX[index]

    @property
    def is_special(self) -> bool:
        """True for a Wizard or a Jester (cards that may always be played)."""
        return self.suit is None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __repr__(self) -> str:
        return f"Card({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def __lt__(self, other: Card) -> bool:
        return self.order < other.order

    def __hash__(self) -> int:
        return self.index

    def __reduce__(self) -> tuple[type[Card], tuple[str]]:
        return (Card, (self.text,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


_BY_INDEX: Final[list[Card]] = [
    Card._make(s * 13 + r - 1, Suit(s), r, f"{r}{Suit(s).letter}") for s in range(4) for r in RANKS
]
_BY_INDEX.append(Card._make(52, None, 0, "W"))
_BY_INDEX.append(Card._make(53, None, 0, "J", order=57))
for _s in Suit:
    _BY_INDEX.append(
        Card._make(54 + int(_s), None, 0, f"W{_s.letter}", order=53 + int(_s), wizard_suit=_s)
    )
_BY_TEXT: Final[dict[str, Card]] = {c.text: c for c in _BY_INDEX}

#: The Wizard (all four Wizards are this one value).
WIZARD: Final = _BY_INDEX[52]
#: The Jester (all four Jesters are this one value).
JESTER: Final = _BY_INDEX[53]
#: The 52 suited cards in deck order.
SUITED_CARDS: Final[tuple[Card, ...]] = tuple(_BY_INDEX[:52])
#: The full 60-card deck: 52 suited cards, 4 Wizards, 4 Jesters.
FULL_DECK: Final[tuple[Card, ...]] = SUITED_CARDS + (WIZARD,) * 4 + (JESTER,) * 4
#: The four suited Wizards ``WS WH WD WC`` (deck order), for ``tricksy_suited``.
SUITED_WIZARDS: Final[tuple[Card, ...]] = tuple(_BY_INDEX[54:58])
#: The deck of ``tricksy_suited``: 52 suited cards, the four suited Wizards, 4 Jesters.
SUITED_WIZARD_DECK: Final[tuple[Card, ...]] = SUITED_CARDS + SUITED_WIZARDS + (JESTER,) * 4
#: Every distinct card, by :attr:`Card.index` (0..57).
ALL_CARDS: Final[tuple[Card, ...]] = tuple(_BY_INDEX)


def parse_cards(texts: Iterable[str] | str) -> list[Card]:
    """Parse cards from an iterable of texts or one space/comma separated string.

    >>> parse_cards("13H W 2c")
    [Card('13H'), Card('W'), Card('2C')]
    """
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return [Card(t) for t in texts]


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as space-separated text, e.g. ``'13H W 2C'``."""
    return " ".join(c.text for c in cards)
