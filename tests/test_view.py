"""The per-seat view: what a seat may know, and the helpers for bot authors."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    JESTER,
    WIZARD,
    Bid,
    BidRestriction,
    Card,
    ChooseTrump,
    Game,
    Phase,
    Play,
    Rules,
    SeatView,
    Suit,
    Trick,
    compute_legal_actions,
    parse_cards,
)

from .games import apply_all, before_round, canadian_round2, deal, play_round

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS
HANDS2 = ["3H 9S", "W 12H", "5H 13C"]


def round2(restriction: BidRestriction = BidRestriction.NONE) -> Game:
    """3 players, round 2, dealer 1, trump diamonds; seat 2 bids first and leads."""
    return deal(before_round(3, 2, restriction), HANDS2, "7D")


def test_view_fields_during_play() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2)), (2, Play(Card("5H")))])
    v = game.view(0)
    assert v.rules == Rules(3)
    assert (v.seat, v.phase, v.round, v.cards_per_player, v.dealer) == (0, Phase.PLAY, 2, 2, 1)
    assert (v.to_act, v.leader, v.players) == (0, 2, 3)
    assert v.hand == tuple(parse_cards("9S 3H"))
    assert (v.turned_card, v.trump) == (Card("7D"), D)
    assert v.bids == (0, 2, 1)
    assert v.trick == (Card("5H"),) and v.tricks == ()
    assert v.tricks_won == (0, 0, 0)
    assert v.totals == tuple(game.totals) and v.results == tuple(game.results)
    assert len(v.results) == 1
    assert v.is_my_turn
    assert v.legal_actions == (Play(Card("3H")),)
    assert v.legal_cards == (Card("3H"),) and v.legal_bids == ()
    assert v.trick_seats == (2,)
    assert v.suit_to_follow is H
    assert v.time_left is None


def test_view_holds_no_other_hand() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2))])
    hands = [parse_cards(h) for h in HANDS2]
    for seat in range(3):
        text = repr(game.view(seat))
        for other in range(3):
            for card in hands[other]:
                if card.is_special:
                    continue
                assert (repr(card) in text) == (other == seat), (seat, card)


def test_only_the_seat_to_act_gets_legal_actions() -> None:
    game = round2()
    views = [game.view(s) for s in range(3)]
    assert [v.is_my_turn for v in views] == [False, False, True]
    assert views[2].legal_actions == (Bid(0), Bid(1), Bid(2))
    assert views[2].legal_bids == (0, 1, 2)
    assert views[0].legal_actions == () == views[1].legal_actions
    assert views[0].compute_legal_actions() == ()


def test_view_refuses_a_seat_not_at_the_table() -> None:
    game = round2()
    for seat in (-1, 3, 10):
        with pytest.raises(ValueError, match=f"no seat {seat} at a 3-player table"):
            game.view(seat)


def test_views_are_frozen_values() -> None:
    game = round2()
    v = game.view(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.seat = 2  # type: ignore[misc]
    assert v == game.view(1)
    timed = v.with_time_left(1.5)
    assert timed.time_left == 1.5 and v.time_left is None
    assert timed == v  # time_left is not part of the value
    game.apply(2, Bid(0))
    assert v.bids == (None, None, None)  # a snapshot, not a live object
    assert game.view(1).bids == (None, None, 0)


def test_view_before_the_first_deal_and_between_rounds() -> None:
    game = Game(Rules(4), seed=2)
    v = game.view(3)
    assert (v.phase, v.round, v.hand, v.to_act, v.legal_actions) == (Phase.DEAL, 0, (), None, ())
    game.deal()
    play_round(game)
    v = game.view(3)
    assert v.phase is Phase.DEAL and v.hand == () and v.legal_actions == ()
    assert v.results == tuple(game.results) and len(v.results) == 1
    assert v.compute_legal_actions() == ()


def test_view_while_the_dealer_chooses_trump() -> None:
    game = deal(Game(Rules(3)), ["2H", "13S", "5H"], "W")
    dealer = game.view(0)
    assert (dealer.turned_card, dealer.trump, dealer.phase) == (WIZARD, None, Phase.CHOOSE_TRUMP)
    assert dealer.legal_actions == tuple(ChooseTrump(s) for s in Suit)
    assert game.view(1).legal_actions == ()
    assert compute_legal_actions(dealer) == dealer.legal_actions


def test_plays_and_cards_by_suit() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2))])
    apply_all(game, [(2, Play(Card("5H"))), (0, Play(Card("3H"))), (1, Play(WIZARD))])
    game.apply(1, Play(Card("12H")))
    v = game.view(2)
    assert v.plays == ((2, Card("5H")), (0, Card("3H")), (1, WIZARD), (1, Card("12H")))
    assert v.tricks == (Trick(2, (Card("5H"), Card("3H"), WIZARD), 1),)
    assert (v.leader, v.trick_seats) == (1, (1,))
    assert v.cards_by_suit() == {S: (), H: (), D: (), C: (Card("13C"),), None: ()}
    v0 = game.view(0)
    assert v0.cards_by_suit()[S] == (Card("9S"),)
    hand = deal(before_round(3, 3), ["W 1S 2S", "J 3H 4H", "5C 6C 7D"], "8D").view(0)
    assert hand.cards_by_suit() == {
        S: (Card("1S"), Card("2S")),
        H: (),
        D: (),
        C: (),
        None: (WIZARD,),
    }


# -- known voids ---------------------------------------------------------------------


def test_known_voids() -> None:
    game = before_round(4, 3)
    # dealer 2, seat 3 leads, trump hearts
    deal(game, ["3C 9S J", "W 12C 1D", "5C W 2S", "2C 6D 4D"], "7H")
    apply_all(game, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    no_voids: dict[int, frozenset[Suit]] = {s: frozenset() for s in range(4)}
    assert game.view(0).known_voids() == no_voids
    # trick 1: 2C, a Jester, a Wizard, 5C: Wizards and Jesters show no void
    for seat, card in [(3, "2C"), (0, "J"), (1, "W"), (2, "5C")]:
        game.apply(seat, Play(Card(card)))
    assert game.view(0).known_voids() == no_voids
    # trick 2 (seat 1 leads 1D): seat 2 and seat 0 show they hold no diamonds
    game.apply(1, Play(Card("1D")))
    game.apply(2, Play(Card("2S")))
    mid = game.view(3).known_voids()  # the current trick counts too
    assert mid == {**no_voids, 2: frozenset({D})}
    game.apply(3, Play(Card("4D")))
    game.apply(0, Play(Card("3C")))
    want = {0: frozenset({D}), 1: frozenset(), 2: frozenset({D}), 3: frozenset()}
    for seat in range(4):
        assert game.view(seat).known_voids() == want
    for seat, suits in want.items():
        for suit in suits:
            assert all(c.suit is not suit for c in game.hands[seat])


def test_known_voids_ignore_a_wizard_lead() -> None:
    game = before_round(4, 3)
    deal(game, ["3C 9S J", "1H 12C 1D", "5C W 2S", "W 6D 4D"], "7H")  # dealer 2, seat 3 leads
    apply_all(game, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    # a Wizard lead frees the trick: off-suit cards after it show nothing
    for seat, card in [(3, "W"), (0, "9S"), (1, "12C"), (2, "5C")]:
        game.apply(seat, Play(Card(card)))
    assert all(v == frozenset() for v in game.view(0).known_voids().values())
    # seat 3 won and leads 6D; seat 0 plays a club: void in diamonds
    game.apply(3, Play(Card("6D")))
    game.apply(0, Play(Card("3C")))
    assert game.view(1).known_voids()[0] == frozenset({D})


def test_known_voids_after_jester_lead() -> None:
    game = before_round(4, 3)
    deal(game, ["3C 9S J", "1H 12C 1D", "5C W 2S", "J 6D 4D"], "7H")  # seat 3 leads
    apply_all(game, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    game.apply(3, Play(JESTER))
    game.apply(0, Play(Card("9S")))  # sets spades
    game.apply(1, Play(Card("12C")))  # void in spades
    assert game.view(2).known_voids() == {
        0: frozenset(),
        1: frozenset({S}),
        2: frozenset(),
        3: frozenset(),
    }
    # a Jester lead then a Wizard frees the trick
    game2 = before_round(4, 3)
    deal(game2, ["3C 9S J", "1H 12C 1D", "5C W 2S", "J 6D 4D"], "7H")
    apply_all(game2, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    game2.apply(3, Play(JESTER))
    game2.apply(0, Play(JESTER))
    game2.apply(1, Play(Card("12C")))
    game2.apply(2, Play(WIZARD))
    assert all(v == frozenset() for v in game2.view(2).known_voids().values())
    game3 = before_round(4, 3)
    deal(game3, ["3C 9S W", "1H 12C 1D", "5C W 2S", "J 6D 4D"], "7H")
    apply_all(game3, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    game3.apply(3, Play(JESTER))
    game3.apply(0, Play(WIZARD))
    game3.apply(1, Play(Card("12C")))
    game3.apply(2, Play(Card("2S")))
    assert all(v == frozenset() for v in game3.view(2).known_voids().values())


# -- unseen cards ----------------------------------------------------------------------


def test_unseen_cards() -> None:
    game = round2()
    v = game.view(0)
    unseen = v.unseen_cards()
    assert len(unseen) == 60 - 2 - 1
    assert unseen == sorted(unseen)
    counts = Counter(unseen)
    assert counts[Card("9S")] == counts[Card("3H")] == counts[Card("7D")] == 0
    assert counts[Card("12H")] == counts[Card("13C")] == 1
    assert counts[WIZARD] == 4 and counts[JESTER] == 4
    # the view of seat 1 (which holds a Wizard) sees three unseen Wizards
    assert Counter(game.view(1).unseen_cards())[WIZARD] == 3
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2))])
    apply_all(game, [(2, Play(Card("5H"))), (0, Play(Card("3H"))), (1, Play(WIZARD))])
    after = Counter(game.view(0).unseen_cards())
    assert sum(after.values()) == 60 - 1 - 1 - 3
    assert after[WIZARD] == 3 and after[Card("5H")] == 0
    # the unseen cards are exactly the other hands and the undealt deck
    rest = Counter(FULL_DECK)
    rest.subtract(c for h in game.dealt_hands for c in h)
    rest[Card("7D")] -= 1
    rest.update(game.hands[1])
    rest.update(game.hands[2])
    assert after == +rest


def test_unseen_cards_in_the_last_round() -> None:
    game = before_round(3, 20)
    game.deal()
    for seat in range(3):
        others = Counter(c for s in range(3) if s != seat for c in game.hands[s])
        assert Counter(game.view(seat).unseen_cards()) == others


# -- legal actions from the view -------------------------------------------------------


def test_compute_legal_actions_matches_the_game() -> None:
    game = round2(BidRestriction.DEALER_NOT_EQUAL)
    checked = 0
    while game.phase is not Phase.DEAL:
        assert game.to_act is not None
        for seat in range(3):
            v = game.view(seat)
            want = tuple(game.legal_actions()) if seat == game.to_act else ()
            assert compute_legal_actions(v) == want == v.legal_actions
        checked += 1
        game.apply(game.to_act, game.legal_actions()[-1])
    assert checked == 9


def test_compute_legal_actions_uses_the_dealer_restriction() -> None:
    game = round2(BidRestriction.DEALER_NOT_EQUAL)
    apply_all(game, [(2, Bid(1)), (0, Bid(0))])
    assert compute_legal_actions(game.view(1)) == (Bid(0), Bid(2))
    # the same view with the restriction lifted allows every bid
    v = dataclasses.replace(game.view(1), rules=Rules(3))
    assert compute_legal_actions(v) == (Bid(0), Bid(1), Bid(2))


def test_compute_legal_actions_follows_suit_from_the_view() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2)), (2, Play(Card("5H")))])
    v = game.view(0)
    assert compute_legal_actions(v) == (Play(Card("3H")),)
    # the view alone decides: with a different trick the answer changes
    assert compute_legal_actions(dataclasses.replace(v, trick=(WIZARD,))) == (
        Play(Card("9S")),
        Play(Card("3H")),
    )


def test_seat_view_of_is_game_view() -> None:
    game = round2()
    assert SeatView.of(game, 2) == game.view(2)


def test_compute_legal_actions_uses_the_running_totals() -> None:
    # canadian: the dealer (seat 1) leads strictly, so the restriction applies
    game = canadian_round2(["2H", "13H", "5H"], [1, 1, 1])
    apply_all(game, [(2, Bid(1)), (0, Bid(0))])
    v = game.view(1)
    assert compute_legal_actions(v) == (Bid(0), Bid(2)) == v.legal_actions
    # the same view with the dealer tied for the lead: no restriction
    tied = dataclasses.replace(v, totals=(30, 30, -10))
    assert compute_legal_actions(tied) == (Bid(0), Bid(1), Bid(2))
