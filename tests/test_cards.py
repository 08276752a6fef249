"""Cards and suits: parsing, interning, ordering, reprs, pickling."""

from __future__ import annotations

import copy
import pickle
from collections import Counter

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    JESTER,
    RANKS,
    SUITED_CARDS,
    WIZARD,
    Bid,
    BidRestriction,
    Card,
    ChooseTrump,
    Phase,
    Play,
    Rules,
    Suit,
    Trick,
    format_cards,
    parse_cards,
)

ALL_CARDS = [*SUITED_CARDS, WIZARD, JESTER]
# names an eval'd repr may use
NS = {
    "Card": Card,
    "Suit": Suit,
    "Bid": Bid,
    "Play": Play,
    "ChooseTrump": ChooseTrump,
    "Phase": Phase,
    "Trick": Trick,
    "BidRestriction": BidRestriction,
    "Rules": Rules,
}


# -- suits -------------------------------------------------------------------


def test_suit_letters_and_order() -> None:
    assert [s.letter for s in Suit] == ["S", "H", "D", "C"]
    assert [int(s) for s in Suit] == [0, 1, 2, 3]


@pytest.mark.parametrize("letter", ["S", "H", "D", "C", "s", "h", "d", "c"])
def test_suit_from_letter(letter: str) -> None:
    suit = Suit.from_letter(letter)
    assert suit.letter == letter.upper()


@pytest.mark.parametrize("bad", ["", "X", "SH", "spades", "1", None, 3])
def test_suit_from_letter_refuses(bad: object) -> None:
    with pytest.raises(ValueError, match="not a suit"):
        Suit.from_letter(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("suit", list(Suit))
def test_suit_repr_evals_back(suit: Suit) -> None:
    assert repr(suit) == f"Suit.{suit.name}"
    assert str(suit) == repr(suit)
    assert eval(repr(suit), NS) is suit


# -- parsing and interning -------------------------------------------------------


@pytest.mark.parametrize("card", ALL_CARDS, ids=lambda c: c.text)
def test_text_round_trip_and_interning(card: Card) -> None:
    assert Card(card.text) is card
    assert Card(card.text.lower()) is card
    assert str(card) == card.text
    assert Card.from_index(card.index) is card


def test_suited_card_fields() -> None:
    c = Card("13H")
    assert (c.rank, c.suit, c.index, c.text) == (13, Suit.HEARTS, 1 * 13 + 12, "13H")
    assert not c.is_wizard and not c.is_jester and not c.is_special
    one = Card("1s")
    assert (one.rank, one.suit, one.index) == (1, Suit.SPADES, 0)
    assert Card("13C").index == 51


def test_special_card_fields() -> None:
    assert Card("W") is WIZARD and Card("w") is WIZARD
    assert Card("J") is JESTER and Card("j") is JESTER
    assert WIZARD.is_wizard and not WIZARD.is_jester and WIZARD.is_special
    assert JESTER.is_jester and not JESTER.is_wizard and JESTER.is_special
    assert (WIZARD.suit, WIZARD.rank, WIZARD.index) == (None, 0, 52)
    assert (JESTER.suit, JESTER.rank, JESTER.index) == (None, 0, 53)


@pytest.mark.parametrize("bad", ["", "14H", "0S", "X", "13X", "WW", "H13", "1 H", "W ", "10"])
def test_card_refuses_bad_text(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card") as info:
        Card(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [None, 13, 1.5])
def test_card_refuses_non_text(bad: object) -> None:
    with pytest.raises(ValueError, match="not a card"):
        Card(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("suit", list(Suit))
@pytest.mark.parametrize("rank", list(RANKS))
def test_suited_constructor(suit: Suit, rank: int) -> None:
    card = Card.suited(suit, rank)
    assert card is Card(f"{rank}{suit.letter}")
    assert (card.suit, card.rank) == (suit, rank)


@pytest.mark.parametrize("rank", [0, 14, -1])
def test_suited_refuses_bad_rank(rank: int) -> None:
    with pytest.raises(ValueError, match=r"rank must be 1\.\.13"):
        Card.suited(Suit.HEARTS, rank)


def test_cards_are_immutable() -> None:
    card = Card("5D")
    with pytest.raises(AttributeError):
        card.rank = 6
    with pytest.raises(AttributeError):
        card.other = 1
    assert card.rank == 5


def test_equality_is_identity_and_hash_is_index() -> None:
    assert Card("5D") == Card("5d")
    assert Card("5D") != Card("6D")
    assert Card("W") != Card("J")
    assert {Card("5D"), Card("5d"), WIZARD, Card("W")} == {Card("5D"), WIZARD}
    assert all(hash(c) == c.index for c in ALL_CARDS)


def test_sorting_is_deck_order() -> None:
    shuffled = parse_cards("J W 13C 1C 2D 13H 1H 5S 1S")
    assert format_cards(sorted(shuffled)) == "1S 5S 1H 13H 2D 1C 13C W J"
    assert sorted(ALL_CARDS) == ALL_CARDS
    assert [c.index for c in ALL_CARDS] == list(range(54))


def test_full_deck_composition() -> None:
    assert len(FULL_DECK) == 60
    counts = Counter(FULL_DECK)
    assert counts[WIZARD] == 4 and counts[JESTER] == 4
    assert len(counts) == 54
    assert all(counts[c] == 1 for c in SUITED_CARDS)
    assert len(SUITED_CARDS) == 52
    assert Counter(c.suit for c in SUITED_CARDS) == dict.fromkeys(Suit, 13)
    assert list(RANKS) == list(range(1, 14))


# -- parse / format ---------------------------------------------------------------


def test_parse_cards_string_forms() -> None:
    want = [Card("13H"), WIZARD, Card("2C"), JESTER, WIZARD]
    assert parse_cards("13H W 2c J W") == want
    assert parse_cards("13H,W, 2c ,J,W") == want
    assert parse_cards(["13H", "w", "2C", "J", "W"]) == want
    assert parse_cards("") == []
    assert parse_cards("  ") == []


def test_parse_cards_refuses_a_bad_card() -> None:
    with pytest.raises(ValueError, match="'14H'"):
        parse_cards("13H 14H")


def test_format_cards_round_trip() -> None:
    text = "1S 13H W J W 7C"
    assert format_cards(parse_cards(text)) == text
    assert format_cards([]) == ""


# -- repr, copy, pickle ---------------------------------------------------------------


@pytest.mark.parametrize("card", ALL_CARDS, ids=lambda c: c.text)
def test_card_repr_evals_back(card: Card) -> None:
    assert repr(card) == f"Card({card.text!r})"
    assert eval(repr(card), NS) is card


@pytest.mark.parametrize(
    "value",
    [
        Bid(0),
        Bid(12),
        Play(Card("13H")),
        Play(WIZARD),
        Play(JESTER),
        ChooseTrump(Suit.CLUBS),
        Phase.CHOOSE_TRUMP,
        Trick(2, (Card("5S"), WIZARD, JESTER), 0),
        BidRestriction.CANADIAN,
        Rules(5, BidRestriction.DEALER_NOT_EQUAL),
    ],
    ids=repr,
)
def test_value_reprs_eval_back(value: object) -> None:
    assert eval(repr(value), NS) == value


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_cards_pickle_to_the_interned_card(protocol: int) -> None:
    for card in ALL_CARDS:
        assert pickle.loads(pickle.dumps(card, protocol)) is card
    hand = parse_cards("W W 3H J")
    back = pickle.loads(pickle.dumps(hand, protocol))
    assert back == hand and all(a is b for a, b in zip(back, hand, strict=True))


def test_actions_and_tricks_pickle() -> None:
    values = [Bid(3), Play(Card("7C")), ChooseTrump(Suit.HEARTS), Trick(1, (WIZARD, JESTER), 1)]
    for v in values:
        back = pickle.loads(pickle.dumps(v))
        assert back == v and type(back) is type(v)
    assert pickle.loads(pickle.dumps(Play(Card("7C")))).card is Card("7C")


def test_copy_keeps_identity() -> None:
    card = Card("9S")
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    hand = parse_cards("9S W")
    assert all(a is b for a, b in zip(copy.deepcopy(hand), hand, strict=True))


def test_actions_of_different_kinds_are_never_equal() -> None:
    # a Suit is an int: without type-aware equality Bid(0) == ChooseTrump(Suit.SPADES)
    assert Bid(0) != ChooseTrump(Suit.SPADES)
    assert not Bid(1) == ChooseTrump(Suit.HEARTS)  # noqa: SIM201
    assert ChooseTrump(Suit.SPADES) not in [Bid(0), Bid(1)]
    assert Bid(0) not in {ChooseTrump(s) for s in Suit}
    assert len({Bid(1), ChooseTrump(Suit.HEARTS), Play(Card("1S"))}) == 3
    assert Bid(0) != (0,) and Play(WIZARD) != (WIZARD,)
    # same kind, same value: equal, with equal hashes
    assert Bid(2) == Bid(2) and not Bid(2) != Bid(2)  # noqa: SIM202
    assert hash(Bid(2)) == hash(Bid(2)) and hash(Play(WIZARD)) == hash(Play(Card("W")))
    assert ChooseTrump(Suit.CLUBS) == ChooseTrump(Suit.from_letter("c"))
    assert Bid(2) != Bid(3) and Play(WIZARD) != Play(JESTER)
