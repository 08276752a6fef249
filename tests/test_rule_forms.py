"""The rule forms of issue 17 in the rules core: suited Wizards (Tricksy Wizard
with the Wizard's printed suit, at once), hidden bids revealed after the
tricks, and the first dealer by draw."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    SUITED_WIZARD_DECK,
    SUITED_WIZARDS,
    WIZARD,
    BidMade,
    BidRestriction,
    Card,
    ChooseTrump,
    DealError,
    Game,
    Phase,
    RoundScored,
    Rules,
    Suit,
    TrickWon,
    TrumpChosen,
    dealer_of_draw,
    draw_first_dealer,
    draw_value,
    parse_cards,
)
from wizard_arena.rules.laws import FLAG_OPTIONS, VARIANT_OPTIONS

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS

# -- cards and rules -----------------------------------------------------------------


def test_suited_wizards_are_wizards_with_a_printed_suit() -> None:
    assert [c.text for c in SUITED_WIZARDS] == ["WS", "WH", "WD", "WC"]
    for suit, card in zip(Suit, SUITED_WIZARDS, strict=True):
        assert Card(card.text.lower()) is card is Card.wizard(suit)
        assert card.is_wizard and card.is_special and not card.is_jester
        assert (card.suit, card.rank, card.wizard_suit) == (None, 0, suit)
        assert Card.from_index(card.index) is card
    assert WIZARD.wizard_suit is None and Card("W") is WIZARD is Card.wizard(None)
    # deck order: suited cards, the Wizards (plain first), the Jester
    assert [c.text for c in sorted(parse_cards("J WC 1S W WH 13C"))] == [
        "1S", "13C", "W", "WH", "WC", "J",
    ]  # fmt: skip
    assert Counter(SUITED_WIZARD_DECK) == Counter(FULL_DECK) - Counter({WIZARD: 4}) + Counter(
        SUITED_WIZARDS
    )
    with pytest.raises(ValueError, match="not a card"):
        Card("WJ")


def test_new_options_are_named_options() -> None:
    for name in ("tricksy_suited", "reveal_bids_after_tricks", "first_dealer_by_draw"):
        assert name in FLAG_OPTIONS and name in VARIANT_OPTIONS
    rules = Rules(
        3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
    )
    assert rules.options == (
        "hidden_bids",
        "reveal_bids_after_tricks",
        "tricksy_suited",
        "first_dealer_by_draw",
    )
    assert Rules.from_dict(rules.to_dict()) == rules
    assert eval(repr(rules), {"Rules": Rules, "BidRestriction": BidRestriction}) == rules
    assert rules.deck == SUITED_WIZARD_DECK and Rules(3).deck == FULL_DECK
    assert "tricksy_suited" not in Rules(3).to_dict()  # off by default


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tricksy": True, "tricksy_suited": True}, "two forms of Tricksy Wizard"),
        ({"reveal_bids_after_tricks": True}, "it needs hidden_bids"),
        ({"first_dealer_by_draw": 1}, "true or false"),
    ],
)
def test_new_options_refuse_what_cannot_work(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


# -- Tricksy Wizard with suited Wizards --------------------------------------------------------


def _suited_round2(hands: list[str], turned: str = "7H") -> Game:
    """A tricksy_suited game at round 2 (3 players, dealer 1, seat 2 leads)."""
    g = Game(Rules(3, tricksy_suited=True))
    g.deal([parse_cards("2H"), parse_cards("13S"), parse_cards("5H")], Card("7D"))
    for s, b in [(1, 0), (2, 0), (0, 0)]:
        g.bid(s, b)
    for s, c in [(1, "13S"), (2, "5H"), (0, "2H")]:
        g.play(s, Card(c))
    g.deal([parse_cards(h) for h in hands], Card(turned))
    for s, b in [(2, 1), (0, 1), (1, 0)]:
        g.bid(s, b)
    return g


def test_a_suited_wizard_makes_its_suit_trump_at_once() -> None:
    g = _suited_round2(["2S 9S", "5H 6H", "WS 3C"])
    assert g.trump is H and g.to_act == 2
    g.play(2, Card("WS"))
    # no decision: spades are trump at once, in this trick already
    assert g.phase is Phase.PLAY and g.to_act == 0
    assert g.trump is S and g.next_trump is None
    assert g.view(0).trump is S and g.view(0).next_trump is None
    assert not any(isinstance(e, TrumpChosen) for e in g.events)
    g.play(0, Card("9S"))
    g.play(1, Card("6H"))
    for s, c in [(2, "3C"), (0, "2S"), (1, "5H")]:
        g.play(s, Card(c))
    assert [t.winner for t in g.tricks] == [2, 0]  # 2S trumps 5H: spades stay trump
    assert g.trick_trumps == [S, S] and g.round_trump is H


def test_several_suited_wizards_and_the_last_trick() -> None:
    g = _suited_round2(["2S WD", "WC 6H", "WH 3C"], turned="7S")
    g.play(2, Card("WH"))
    assert g.trump is H
    g.play(0, Card("WD"))
    assert g.trump is D  # each Wizard changes trump at once; the first still wins
    g.play(1, Card("6H"))
    assert g.tricks[-1].winner == 2 and g.trick_trumps == [D]
    g.play(2, Card("3C"))
    g.play(0, Card("2S"))
    g.play(1, Card("WC"))  # in the last trick too: nothing to choose
    assert g.phase is Phase.DEAL and g.trick_trumps == [D, C]
    assert [t.winner for t in g.tricks] == [2, 1]


def test_a_wizard_without_a_printed_suit_lets_its_player_choose_at_once() -> None:
    # an explicit deal may hold a plain W (a Wizard whose card shows no suit)
    g = _suited_round2(["2S 9S", "5H 6H", "W 3C"])
    g.play(2, Card("W"))
    assert g.phase is Phase.CHOOSE_TRUMP and g.to_act == 2
    assert g.legal_actions(2) == [ChooseTrump(s) for s in Suit]
    g.choose_trump(2, C)
    assert g.trump is C and g.next_trump is None  # at once
    assert TrumpChosen(2, C) in g.events
    g.play(0, Card("9S"))
    g.play(1, Card("6H"))
    g.play(2, Card("3C"))
    g.play(0, Card("2S"))
    g.play(1, Card("5H"))
    assert [t.winner for t in g.tricks] == [2, 2] and g.trick_trumps == [C, C]


def test_suited_wizard_deals_are_checked_against_the_deck() -> None:
    g = Game(Rules(3, tricksy_suited=True))
    with pytest.raises(DealError, match="holds 1 of WH"):
        g.deal([parse_cards("WH"), parse_cards("WH"), parse_cards("2C")], Card("3C"))
    two = Game.at_round(Rules(3, tricksy_suited=True), 2, dealer=0, totals=[0, 0, 0])
    with pytest.raises(DealError, match="holds 4 Wizards, the deal uses 5"):
        two.deal([parse_cards("WH W"), parse_cards("W W"), parse_cards("WS 2C")], Card("3C"))
    with pytest.raises(DealError, match="suited Wizard: only the tricksy_suited deck"):
        Game(Rules(3)).deal([parse_cards("WH"), parse_cards("2H"), parse_cards("2C")], None)
    g.deal([parse_cards("WH"), parse_cards("W"), parse_cards("2C")], Card("WS"))
    assert g.phase is Phase.CHOOSE_TRUMP  # a turned Wizard: the dealer chooses, printed or not


def test_seeded_suited_deals_use_the_suited_wizards() -> None:
    g = Game(Rules(3, tricksy_suited=True), seed=3)
    g.deal()
    g2 = Game(Rules(3), seed=3)
    g2.deal()
    # the same shuffle; a suited Wizard where the plain deck has a W
    assert [len(h) for h in g.hands] == [1, 1, 1]
    seen = Counter(c for h in g.dealt_hands for c in h)
    assert not seen[WIZARD]
    while g.round < 20:
        if g.phase is Phase.DEAL:
            g.deal()
        else:
            g.apply(g.acting[0], g.legal_actions(g.acting[0])[0])
    dealt = [c for h in g.dealt_hands for c in h]
    assert Counter(c for c in dealt if c.is_wizard) == Counter(SUITED_WIZARDS)


def test_unseen_cards_with_a_plain_wizard_in_a_suited_deal() -> None:
    g = Game(Rules(3, tricksy_suited=True))
    g.deal([parse_cards("W"), parse_cards("WH"), parse_cards("2C")], Card("3C"))
    unseen = g.view(0).unseen_cards()
    assert len(unseen) == 60 - 2
    assert [c.text for c in unseen if c.is_wizard] == ["WS", "WH", "WD"]  # one stood for W
    assert [c.text for c in g.view(1).unseen_cards() if c.is_wizard] == ["WS", "WD", "WC"]


# -- hidden bids revealed after the tricks -------------------------------------------------------


def test_bids_are_revealed_after_the_tricks() -> None:
    g = Game.at_round(
        Rules(3, hidden_bids=True, reveal_bids_after_tricks=True), 2, dealer=0, totals=[0, 0, 0]
    )
    g.deal([parse_cards("2H 3S"), parse_cards("13S 4D"), parse_cards("5H 9C")], Card("7D"))
    g.bid(0, 1)
    g.bid(2, 0)
    g.bid(1, 2)
    assert g.phase is Phase.PLAY and g.to_act == 1
    assert not any(isinstance(e, BidMade) for e in g.events)
    for seat in range(3):  # each seat still sees only its own bid while the tricks are played
        mine = g.bids[seat]
        assert g.view(seat).bids == tuple(mine if s == seat else None for s in range(3))
    for s, c in [(1, "13S"), (2, "5H"), (0, "3S"), (1, "4D"), (2, "9C")]:
        g.play(s, Card(c))
        assert all(g.view(0).bids[s] is None for s in (1, 2))
    g.play(0, Card("2H"))
    kinds = [type(e).__name__ for e in g.events[-5:]]
    assert kinds == ["TrickWon", "BidMade", "BidMade", "BidMade", "RoundScored"]
    made = [e for e in g.events if isinstance(e, BidMade)]
    assert made == [BidMade(1, 2), BidMade(2, 0), BidMade(0, 1)]  # bidding order
    assert g.view(0).bids == (1, 2, 0)
    assert g.results[-1].bids == (1, 2, 0)


def test_reveal_after_tricks_with_a_blind_first_round() -> None:
    g = Game(Rules(3, hidden_bids=True, reveal_bids_after_tricks=True, blind_first_round=True))
    g.deal([parse_cards("2H"), parse_cards("13S"), parse_cards("5H")], Card("7D"))
    g.bid(2, 0)
    g.bid(0, 0)
    g.bid(1, 1)  # the rules play the cards, then reveal the bids
    events = g.events
    last_trick = max(i for i, e in enumerate(events) if isinstance(e, TrickWon))
    first_bid = min(i for i, e in enumerate(events) if isinstance(e, BidMade))
    scored = max(i for i, e in enumerate(events) if isinstance(e, RoundScored))
    assert last_trick < first_bid < scored
    assert g.phase is Phase.DEAL and g.results[-1].points == (20, 30, 20)


# -- the first dealer by draw ---------------------------------------------------------------------


def test_draw_values() -> None:
    assert [draw_value(c) for c in parse_cards("J 1S 13H W WC")] == [0, 1, 13, 14, 14]


def test_the_draw_is_reproducible_and_follows_its_rules() -> None:
    rules = Rules(4, first_dealer_by_draw=True)
    dealers = Counter()
    ties = 0
    for seed in range(300):
        g = Game(rules, seed=seed)
        again = Game(rules, seed=seed)
        assert (g.draw, g.first_dealer) == (again.draw, again.first_dealer)
        assert g.next_dealer() == g.first_dealer
        assert dealer_of_draw(4, g.draw) == g.first_dealer
        assert all(c is not None for c in g.draw[0])
        last = [c for c in g.draw[-1] if c is not None]
        best = max(map(draw_value, last))
        assert [draw_value(c) for c in last].count(best) == 1
        assert draw_value(g.draw[-1][g.first_dealer]) == best  # type: ignore[arg-type]
        ties += len(g.draw) > 1
        dealers[g.first_dealer] += 1
    assert ties > 0 and set(dealers) == {0, 1, 2, 3}
    # the draw comes first from the seed: the same seed deals the same afterwards
    g, again = Game(rules, seed=5), Game(rules, seed=5)
    g.deal()
    again.deal()
    assert g.dealt_hands == again.dealt_hands


def test_draw_with_a_random_generator_passed_in() -> None:
    rules = Rules(3, first_dealer_by_draw=True)
    a = Game(rules, rng=random.Random(9))
    rows = draw_first_dealer(3, random.Random(9))
    assert a.draw == rows and a.first_dealer == dealer_of_draw(3, rows)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "no row"),
        ([["13S", "W", "W"], [None, "5H", None]], "seat 2 draws in this row"),
        ([["13S", "W", "W"]], "unfinished: seats \\[1, 2\\] tie"),
        ([["13S", "W", "W"], ["2C", "5H", "3D"]], "seat 0 does not draw"),
        ([["13S", "W", "2C"], [None, "5H", None]], "had already drawn the highest"),
        ([["13S", "W"]], "need 3 entries"),
        ([["13S", "13S", "2C"]], "holds 1 of 13S"),
        ([["13S", None, "2C"]], "seat 1 draws"),
    ],
)
def test_bad_draws_are_refused(rows: list[list[str | None]], message: str) -> None:
    draw = [[Card(c) if c is not None else None for c in row] for row in rows]
    with pytest.raises(ValueError, match=message):
        dealer_of_draw(3, draw)
    with pytest.raises(ValueError, match=message):
        Game(Rules(3, first_dealer_by_draw=True), draw=draw)


def test_a_given_draw_and_first_dealer() -> None:
    rules = Rules(3, first_dealer_by_draw=True)
    draw = [parse_cards("13S W W"), [None, Card("2C"), Card("J")]]
    g = Game(rules, draw=draw, first_dealer=1)
    assert g.first_dealer == 1 and g.draw == (tuple(draw[0]), tuple(draw[1]))
    with pytest.raises(ValueError, match="first_dealer is 2, but the draw gives 1"):
        Game(rules, draw=draw, first_dealer=2)
    with pytest.raises(ValueError, match="the first dealer is drawn"):
        Game(rules, first_dealer=0)
    with pytest.raises(ValueError, match="needs the rule first_dealer_by_draw"):
        Game(Rules(3), draw=draw)
    # a game taken up mid-way draws nothing
    mid = Game.at_round(rules, 4, dealer=2, totals=[0, 10, 20], seed=1)
    assert mid.draw == () and mid.next_dealer() == 2
