"""Cards, suits and the 60-card Wizard deck.

Cards are interned values: there is exactly one :class:`Card` object per
distinct card, so ``Card("13H") is Card("13H")`` and all four Wizards are
the same value :data:`WIZARD`. Hands are therefore multisets (lists) of
cards.

>>> Card("13H")
Card('13H')
>>> Card("13H").rank, Card("13H").suit
(13, Suit.HEARTS)
>>> WIZARD.is_wizard, JESTER.suit is None
(True, True)
>>> len(FULL_DECK)
60
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Final

__all__ = [
    "FULL_DECK",
    "JESTER",
    "RANKS",
    "SUITED_CARDS",
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

    Construct from text: ``Card("7C")``, ``Card("W")``, ``Card("J")``. The
    result is the interned card; cards compare by identity and sort in deck
    order (spades, hearts, diamonds, clubs by rank, then Wizard, then Jester).
    """

    __slots__ = ("index", "is_jester", "is_wizard", "rank", "suit", "text")

    index: int
    """0..51 for suited cards (``suit * 13 + rank - 1``), 52 Wizard, 53 Jester."""
    suit: Suit | None
    """The suit, or ``None`` for a Wizard or Jester."""
    rank: int
    """1..13 for suited cards, 0 for a Wizard or Jester."""
    is_wizard: bool
    is_jester: bool
    text: str
    """The card's text form, as in the conformance vectors: ``13H``, ``W``, ``J``."""

    def __new__(cls, text: str) -> Card:
        try:
            return _BY_TEXT[text.upper()]
        except (KeyError, AttributeError):
            raise ValueError(
                f"not a card: {text!r} (expected rank 1-13 and suit S/H/D/C like '13H', "
                "or 'W' or 'J')"
            ) from None

    @classmethod
    def _make(cls, index: int, suit: Suit | None, rank: int, text: str) -> Card:
        card = object.__new__(cls)
        set_ = object.__setattr__
        set_(card, "index", index)
        set_(card, "suit", suit)
        set_(card, "rank", rank)
        set_(card, "is_wizard", index == 52)
        set_(card, "is_jester", index == 53)
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
    def from_index(index: int) -> Card:
        """The card with :attr:`index` ``index`` (0..53)."""
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
        return self.index < other.index

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
_BY_INDEX.append(Card._make(53, None, 0, "J"))
_BY_TEXT: Final[dict[str, Card]] = {c.text: c for c in _BY_INDEX}

#: The Wizard (all four Wizards are this one value).
WIZARD: Final = _BY_INDEX[52]
#: The Jester (all four Jesters are this one value).
JESTER: Final = _BY_INDEX[53]
#: The 52 suited cards in deck order.
SUITED_CARDS: Final[tuple[Card, ...]] = tuple(_BY_INDEX[:52])
#: The full 60-card deck: 52 suited cards, 4 Wizards, 4 Jesters.
FULL_DECK: Final[tuple[Card, ...]] = SUITED_CARDS + (WIZARD,) * 4 + (JESTER,) * 4


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
