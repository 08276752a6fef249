"""Cards, suits and hands on the wire, and :class:`WireError`.

The leaves of every message: the other modules of :mod:`wizard_arena.protocol.wire`
build on these tables. A card's fields are computed once per card
(:data:`CARD_FIELDS`) so encoding a card is a dict lookup.

>>> from wizard_arena.rules import Card
>>> card_from_pb(card_to_pb(Card("13H")))
Card('13H')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena.rules import ALL_CARDS, JESTER, Card, Suit


class WireError(ValueError):
    """A protobuf message that does not decode to a valid domain value."""


# Known to users (tracebacks, logs) as wizard_arena.protocol.wire.WireError.
WireError.__module__ = "wizard_arena.protocol.wire"

SUIT_TO_PB = {
    None: pb.SUIT_UNSPECIFIED,
    Suit.SPADES: pb.SUIT_SPADES,
    Suit.HEARTS: pb.SUIT_HEARTS,
    Suit.DIAMONDS: pb.SUIT_DIAMONDS,
    Suit.CLUBS: pb.SUIT_CLUBS,
}
SUIT_FROM_PB = {v: k for k, v in SUIT_TO_PB.items()}


def _card_fields(card: Card) -> dict[str, int]:
    if card.is_wizard:
        out: dict[str, int] = {"kind": pb.CARD_KIND_WIZARD}
        if card.wizard_suit is not None:  # a suited Wizard (tricksy_suited)
            out["wizard_suit"] = SUIT_TO_PB[card.wizard_suit]
        return out
    if card.is_jester:
        return {"kind": pb.CARD_KIND_JESTER}
    return {"kind": pb.CARD_KIND_SUITED, "suit": SUIT_TO_PB[card.suit], "rank": card.rank}


#: Each card's fields (only those set: a Wizard's or Jester's suit and rank stay 0).
CARD_FIELDS = {c: _card_fields(c) for c in ALL_CARDS}
_SUITED_FROM_FIELDS = {
    (f["suit"], f["rank"]): c for c, f in CARD_FIELDS.items() if c.suit is not None
}
# A Wizard or Jester decodes whatever its (meaningless) suit and rank say; a
# Wizard's identity is its wizard_suit (unset: the plain Wizard W).
_WIZARDS = {SUIT_TO_PB[c.wizard_suit]: c for c in ALL_CARDS if c.is_wizard}


def card_to_pb(card: Card) -> pb.Card:
    return pb.Card(**CARD_FIELDS[card])  # type: ignore[arg-type]


def set_card(out: pb.Card, card: Card) -> None:
    """Fill the card sub-message ``out`` (in place: no temporary message)."""
    for name, value in CARD_FIELDS[card].items():
        setattr(out, name, value)


def fill_cards(field: object, cards: Iterable[Card]) -> None:
    """Append ``cards`` to the repeated Card field ``field``."""
    add = field.add  # type: ignore[attr-defined]
    fields = CARD_FIELDS
    for c in cards:
        add(**fields[c])


def card_from_pb(msg: pb.Card) -> Card:
    kind = msg.kind
    if kind == pb.CARD_KIND_WIZARD:
        wizard = _WIZARDS.get(msg.wizard_suit)
        if wizard is None:
            raise WireError(f"not a card: a Wizard with wizard_suit={msg.wizard_suit}")
        return wizard
    if kind == pb.CARD_KIND_JESTER:
        return JESTER
    card = _SUITED_FROM_FIELDS.get((msg.suit, msg.rank)) if kind == pb.CARD_KIND_SUITED else None
    if card is None:
        raise WireError(f"not a card: kind={msg.kind} suit={msg.suit} rank={msg.rank}")
    return card


def cards_from_pb(msgs: Iterable[pb.Card]) -> tuple[Card, ...]:
    return tuple(card_from_pb(m) for m in msgs)


def suit_from_pb(value: int, *, allow_none: bool = True) -> Suit | None:
    try:
        suit = SUIT_FROM_PB[value]  # type: ignore[index]
    except KeyError:
        raise WireError(f"not a suit: {value}") from None
    if suit is None and not allow_none:
        raise WireError("a suit is required")
    return suit


def fill_hands(field: object, hands: Iterable[Iterable[Card]]) -> None:
    """Append one Hand per entry of ``hands`` to the repeated Hand field ``field``."""
    add = field.add  # type: ignore[attr-defined]
    for cards in hands:
        fill_cards(add().cards, cards)


def hands_from_pb(msgs: Sequence[pb.Hand], players: int | None) -> tuple[tuple[Card, ...], ...]:
    """Decode ``others_hands``: empty, or one entry per seat."""
    if not msgs:
        return ()
    if players is not None and len(msgs) != players:
        raise WireError(f"others_hands must have one entry per seat ({players}), not {len(msgs)}")
    return tuple(cards_from_pb(h.cards) for h in msgs)


def ms(seconds: float | None) -> int:
    """Seconds as the protocol's uint32 milliseconds (``None``: 0), whole
    milliseconds down (a time left is never told longer than it is), a
    value on a millisecond exactly as that millisecond (4.076 s is 4076 ms,
    though ``4.076 * 1000`` is 4075.9999...).

    >>> ms(4.076), ms(0.0019), ms(None), ms(-1.0)
    (4076, 1, 0, 0)
    """
    if seconds is None:
        return 0
    return max(0, min(int(seconds * 1000 + 1e-6), 2**32 - 1))
