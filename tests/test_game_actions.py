"""The rules core's Game, continued: refused actions (state unchanged), trump,
the end of the game, legal actions, clone and state key."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    JESTER,
    WIZARD,
    Bid,
    BidForbiddenError,
    BidOutOfRangeError,
    Card,
    CardNotInHandError,
    ChooseTrump,
    DealError,
    Game,
    GameOver,
    MustFollowSuitError,
    NotYourTurnError,
    Phase,
    Play,
    RoundStarted,
    RuleError,
    Rules,
    Suit,
    Trick,
    TrumpChoiceError,
    TrumpChosen,
    WrongPhaseError,
    default_action,
    parse_cards,
    rank_totals,
)

from .games import (
    CAN,
    DNE,
    H,
    S,
    apply_all,
    before_round,
    canadian_round2,
    deal,
    deals_played,
    play_round,
    refuse,
    round2,
)

# -- refused actions -------------------------------------------------------------------


def check_message(err: RuleError, seat: int, action: str, summary: str, reason: str) -> None:
    assert (err.seat, err.action) == (seat, action)
    assert reason in err.reason
    assert str(err) == f"seat {seat}: {action} refused: {summary}: {err.reason}"


ERROR_CODES = {
    WrongPhaseError: ("wrong_phase", "wrong phase"),
    NotYourTurnError: ("not_your_turn", "not your turn"),
    CardNotInHandError: ("card_not_in_hand", "card not in hand"),
    MustFollowSuitError: ("must_follow_suit", "must follow suit"),
    BidOutOfRangeError: ("bid_out_of_range", "bid out of range"),
    BidForbiddenError: ("bid_forbidden", "bid forbidden by the bid restriction"),
    TrumpChoiceError: ("trump_choice_not_allowed", "trump choice not allowed"),
}


@pytest.mark.parametrize("error", list(ERROR_CODES), ids=lambda e: e.__name__)
def test_error_classes(error: type[RuleError]) -> None:
    code, summary = ERROR_CODES[error]
    assert (error.code, error.summary) == (code, summary)
    assert issubclass(error, RuleError) and issubclass(error, ValueError)
    err = error(4, "bid 9", "because")
    assert str(err) == f"seat 4: bid 9 refused: {summary}: because"
    assert (err.seat, err.action, err.reason) == (4, "bid 9", "because")
    assert len({e.code for e in ERROR_CODES}) == len(ERROR_CODES)


def test_wrong_phase() -> None:
    game = round2()
    err = refuse(game, 2, Play(Card("5H")), WrongPhaseError)
    check_message(err, 2, "play 5H", "wrong phase", "the game is in phase bid")
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(0))])
    err = refuse(game, 2, Bid(1), WrongPhaseError)
    check_message(err, 2, "bid 1", "wrong phase", "the game is in phase play")
    play_round(game)
    err = refuse(game, 0, Bid(0), WrongPhaseError)
    check_message(err, 0, "bid 0", "wrong phase", "the game is in phase deal")
    refuse(Game(Rules(3)), 1, Play(Card("2C")), WrongPhaseError)


def test_wrong_phase_after_game_over() -> None:
    game = before_round(6, 10)
    game.deal()
    play_round(game)
    assert game.is_over
    err = refuse(game, 0, Play(Card("2C")), WrongPhaseError)
    check_message(err, 0, "play 2C", "wrong phase", "the game is in phase game_over")
    refuse(game, 0, Bid(0), WrongPhaseError)
    refuse(game, 0, ChooseTrump(S), TrumpChoiceError)


def test_not_your_turn() -> None:
    game = round2()
    err = refuse(game, 0, Bid(0), NotYourTurnError)
    check_message(err, 0, "bid 0", "not your turn", "seat 2 is to act")
    refuse(game, 1, Bid(1), NotYourTurnError)
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(0))])
    err = refuse(game, 1, Play(WIZARD), NotYourTurnError)
    check_message(err, 1, "play W", "not your turn", "seat 2 is to act")
    game.apply(2, Play(Card("5H")))
    refuse(game, 2, Play(Card("13C")), NotYourTurnError)
    refuse(game, 7, Play(Card("3H")), NotYourTurnError)


def test_card_not_in_hand() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(0))])
    err = refuse(game, 2, Play(Card("13H")), CardNotInHandError)
    check_message(err, 2, "play 13H", "card not in hand", "13H is not in the hand")
    # another seat's card, and a card the seat has already played
    refuse(game, 2, Play(WIZARD), CardNotInHandError)
    game.apply(2, Play(Card("5H")))
    game.apply(0, Play(Card("3H")))
    game.apply(1, Play(WIZARD))
    refuse(game, 1, Play(WIZARD), CardNotInHandError)
    err = refuse(game, 1, Play("12H"), CardNotInHandError)  # type: ignore[arg-type]
    assert "'12H'" in err.reason


def test_must_follow_suit() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(0)), (2, Play(Card("5H")))])
    err = refuse(game, 0, Play(Card("9S")), MustFollowSuitError)
    check_message(err, 0, "play 9S", "must follow suit", "hearts was led and the hand holds 3H")


def test_wizard_after_suit_keeps_the_duty_to_follow() -> None:
    game = before_round(4, 3)
    deal(game, ["3C 9S J", "W 12C 1D", "5C W 2S", "2C 6D 4D"], "7H")  # dealer 2, seat 3 leads
    apply_all(game, [(3, Bid(0)), (0, Bid(0)), (1, Bid(0)), (2, Bid(0))])
    game.apply(3, Play(Card("2C")))
    game.apply(0, Play(JESTER))  # allowed although seat 0 holds 3C
    game.apply(1, Play(WIZARD))
    assert game.legal_cards(2) == parse_cards("5C W")
    err = refuse(game, 2, Play(Card("2S")), MustFollowSuitError)
    assert "clubs was led and the hand holds 5C" in err.reason


def _lead(first: str) -> Game:
    """3 players, round 2 (dealer 1): seat 2 leads ``first``, then seats 0 and 1 play."""
    game = before_round(3, 2)
    deal(game, ["3H 9S", "2S 12C", f"{first} 5D"], "7D")
    apply_all(game, [(2, Bid(0)), (0, Bid(0)), (1, Bid(0))])
    game.apply(2, Play(Card(first)))
    return game


def test_jester_lead_then_the_first_suited_card_sets_the_suit() -> None:
    game = _lead("J")
    assert game.legal_cards(0) == parse_cards("9S 3H")  # nothing to follow yet
    game.apply(0, Play(Card("9S")))
    assert game.legal_cards(1) == [Card("2S")]
    refuse(game, 1, Play(Card("12C")), MustFollowSuitError)
    game.apply(1, Play(Card("2S")))
    assert game.tricks[-1] == Trick(2, tuple(parse_cards("J 9S 2S")), 0)


def test_jester_lead_then_a_wizard_frees_the_trick() -> None:
    game2 = before_round(3, 2)
    deal(game2, ["W 9S", "2S 12C", "J 5D"], "7D")
    apply_all(game2, [(2, Bid(0)), (0, Bid(0)), (1, Bid(0))])
    game2.apply(2, Play(JESTER))
    game2.apply(0, Play(WIZARD))
    assert game2.legal_cards(1) == parse_cards("2S 12C")
    game2.apply(1, Play(Card("12C")))
    assert game2.tricks[-1].winner == 0


def test_wizard_lead_frees_the_trick() -> None:
    game = _lead("W")
    assert game.legal_cards(0) == parse_cards("9S 3H")
    game.apply(0, Play(Card("9S")))
    assert game.legal_cards(1) == parse_cards("2S 12C")  # 9S set no suit
    game.apply(1, Play(Card("12C")))
    assert game.tricks[-1].winner == 2


def test_bid_out_of_range() -> None:
    game = round2()
    err = refuse(game, 2, Bid(3), BidOutOfRangeError)
    check_message(err, 2, "bid 3", "bid out of range", "bids are 0..2 this round")
    refuse(game, 2, Bid(-1), BidOutOfRangeError)
    refuse(game, 2, Bid(60), BidOutOfRangeError)
    refuse(game, 2, Bid(True), BidOutOfRangeError)
    err = refuse(game, 2, Bid("1"), BidOutOfRangeError)  # type: ignore[arg-type]
    assert err.action == "bid '1'"
    refuse(game, 2, Bid(1.0), BidOutOfRangeError)  # type: ignore[arg-type]
    game.apply(2, Bid(2))
    assert game.bids[2] == 2


def test_bid_forbidden_dealer_not_equal() -> None:
    game = deal(before_round(3, 2, DNE), ["3H 9S", "W 12H", "5H 13C"], "7D")
    apply_all(game, [(2, Bid(1)), (0, Bid(0))])
    assert game.legal_bids(1) == [0, 2]
    assert game.legal_actions() == [Bid(0), Bid(2)]
    err = refuse(game, 1, Bid(1), BidForbiddenError)
    check_message(
        err,
        1,
        "bid 1",
        "bid forbidden by the bid restriction",
        "under dealer_not_equal the dealer may not make the bids add up to 2 (others bid 1)",
    )
    # range is checked before the restriction
    refuse(game, 1, Bid(3), BidOutOfRangeError)
    game.apply(1, Bid(2))
    assert game.phase is Phase.PLAY


def test_non_dealers_are_never_restricted() -> None:
    game = deal(before_round(3, 2, DNE), ["3H 9S", "W 12H", "5H 13C"], "7D")
    assert game.legal_actions() == [Bid(0), Bid(1), Bid(2)]
    game.apply(2, Bid(2))
    assert game.legal_actions() == [Bid(0), Bid(1), Bid(2)]
    game.apply(0, Bid(0))
    assert game.legal_actions() == [Bid(1), Bid(2)]  # the dealer may not bid 0
    refuse(game, 1, Bid(0), BidForbiddenError)


def test_canadian_restricts_a_strictly_leading_dealer() -> None:
    game = canadian_round2(["2H", "13H", "5H"], [1, 1, 1])  # seat 1 alone scores
    assert game.totals == [-10, 30, -10] and game.dealer == 1
    apply_all(game, [(2, Bid(1)), (0, Bid(0))])
    assert game.legal_bids(1) == [0, 2]
    err = refuse(game, 1, Bid(1), BidForbiddenError)
    check_message(
        err, 1, "bid 1", "bid forbidden by the bid restriction", "under canadian the dealer"
    )


def test_canadian_zero_is_always_allowed() -> None:
    game = canadian_round2(["2H", "13H", "5H"], [1, 1, 1])
    apply_all(game, [(2, Bid(1)), (0, Bid(1))])
    # the others bid both tricks: 0 would make the sum equal, but 0 is always allowed
    assert game.legal_bids(1) == [0, 1, 2]
    game.apply(1, Bid(0))
    assert game.bids == [1, 0, 1]


@pytest.mark.parametrize(
    ("round1", "bids1", "totals"),
    [
        (["2H", "5H", "13H"], [0, 0, 0], [20, 20, -10]),  # dealer tied for the lead
        (["2H", "5H", "13H"], [0, 1, 0], [20, 20, 30]),  # dealer behind
    ],
)
def test_canadian_inactive_unless_dealer_strictly_leads(
    round1: list[str], bids1: list[int], totals: list[int]
) -> None:
    game = canadian_round2(round1, bids1)
    assert game.totals == totals and game.dealer == 1
    apply_all(game, [(2, Bid(1)), (0, Bid(0))])
    assert game.legal_bids(1) == [0, 1, 2]
    game.apply(1, Bid(1))
    assert game.bids == [0, 1, 1]


def test_canadian_inactive_in_round_one() -> None:
    game = deal(Game(Rules(3, CAN)), ["2H", "13H", "5H"], "J")
    apply_all(game, [(1, Bid(0)), (2, Bid(1))])
    assert game.legal_bids(0) == [0, 1]


# -- trump ------------------------------------------------------------------------------


def test_turned_wizard_dealer_chooses_before_bidding() -> None:
    game = deal(Game(Rules(3)), ["2H", "13S", "5H"], "W")
    assert (game.phase, game.to_act, game.trump) == (Phase.CHOOSE_TRUMP, 0, None)
    assert game.events[-1] == RoundStarted(1, 0, 1, WIZARD, None)
    assert game.legal_actions() == [ChooseTrump(s) for s in Suit]
    err = refuse(game, 1, ChooseTrump(S), TrumpChoiceError)
    check_message(
        err, 1, "trump S", "trump choice not allowed", "only the dealer (seat 0) chooses trump"
    )
    refuse(game, 1, Bid(0), WrongPhaseError)
    refuse(game, 0, Bid(0), WrongPhaseError)
    refuse(game, 0, Play(Card("2H")), WrongPhaseError)
    with pytest.raises(TrumpChoiceError, match="not a suit"):
        game.choose_trump(0, "H")  # type: ignore[arg-type]
    game.apply(0, ChooseTrump(H))
    assert (game.phase, game.to_act, game.trump) == (Phase.BID, 1, H)
    assert game.events[-1:] == [TrumpChosen(0, H)]
    err = refuse(game, 0, ChooseTrump(S), TrumpChoiceError)
    check_message(err, 0, "trump S", "trump choice not allowed", "no trump choice is pending")
    apply_all(game, [(1, Bid(1)), (2, Bid(1)), (0, Bid(0))])
    apply_all(game, [(1, Play(Card("13S"))), (2, Play(Card("5H"))), (0, Play(Card("2H")))])
    assert game.tricks[0].winner == 2  # hearts is trump
    assert game.results[0].points == (20, -10, 30)


def test_no_trump_choice_pending_after_a_suited_turn() -> None:
    game = round2()
    err = refuse(game, 1, ChooseTrump(S), TrumpChoiceError)
    assert "no trump choice is pending" in err.reason
    refuse(Game(Rules(3)), 0, ChooseTrump(S), TrumpChoiceError)


# -- the end of the game -------------------------------------------------------------------


def test_game_over() -> None:
    game = Game(Rules(6), seed=9)
    deals_played(game, default_action)
    assert game.is_over and game.phase is Phase.GAME_OVER
    assert game.to_act is None and game.legal_actions() == []
    assert [r.round for r in game.results] == list(range(1, 11))
    for s in range(6):
        assert game.totals[s] == sum(r.points[s] for r in game.results)
    assert game.results[-1].totals == tuple(game.totals)
    assert game.events[-1] == GameOver(tuple(game.totals), tuple(rank_totals(game.totals)))
    assert game.ranks == rank_totals(game.totals)
    with pytest.raises(DealError, match="phase game_over"):
        game.deal()


def test_ranks_share_ties() -> None:
    game = deal(Game(Rules(3)), ["2H", "13S", "5H"], "J")
    apply_all(game, [(1, Bid(1)), (2, Bid(0)), (0, Bid(0))])
    play_round(game)
    assert game.totals == [20, 30, 20]
    assert game.ranks == [2, 1, 2]


# -- legal actions ----------------------------------------------------------------------------


def test_legal_actions_are_distinct_but_legal_cards_a_multiset() -> None:
    game = deal(before_round(3, 3), ["W W 2H", "J J 3H", "4S 5S 6S"], "7C")
    apply_all(game, [(0, Bid(0)), (1, Bid(0)), (2, Bid(0))])  # dealer 2, seat 0 leads
    assert game.legal_cards(0) == parse_cards("2H W W")
    assert game.legal_actions() == [Play(Card("2H")), Play(WIZARD)]


def test_apply_refuses_non_actions() -> None:
    game = round2()
    before = game.state_key()
    with pytest.raises(TypeError, match="not an action"):
        game.apply(2, 1)  # type: ignore[arg-type]
    assert game.state_key() == before


# -- clone and state key --------------------------------------------------------------------------


def test_state_key_tracks_every_change() -> None:
    a, b = round2(), round2()
    assert a.state_key() == b.state_key()
    keys = {a.state_key()}
    while a.phase is not Phase.DEAL:
        assert a.to_act is not None
        a.apply(a.to_act, default_action(a.legal_actions()))
        keys.add(a.state_key())
    assert len(keys) == 10  # 3 bids + 6 cards: every action changes the key
    assert hash(a.state_key()) is not None


def test_clone_is_independent() -> None:
    game = round2()
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2)), (2, Play(Card("5H")))])
    before = game.state_key()
    copy = game.clone()
    assert copy.state_key() == before
    play_round(copy)
    assert copy.phase is Phase.DEAL
    assert game.state_key() == before
    assert game.hands == [parse_cards("9S 3H"), parse_cards("12H W"), parse_cards("13C")]
    # and the other way round
    copy2 = game.clone()
    key2 = copy2.state_key()
    play_round(game)
    assert copy2.state_key() == key2
    assert copy2.trick == [Card("5H")] and len(copy2.events) < len(game.events)


def test_clone_copies_the_rng() -> None:
    game = Game(Rules(4), seed=21)
    game.deal()
    play_round(game)
    copy = game.clone()
    game.deal()
    copy.deal()
    assert copy.dealt_hands == game.dealt_hands and copy.turned_card is game.turned_card
    other = game.clone(rng=random.Random(99))
    play_round(other)
    other.deal()
    deck = list(FULL_DECK)
    random.Random(99).shuffle(deck)
    seat = (other.dealer + 1) % 4
    assert other.hands[seat] == sorted(deck[:3])


@pytest.mark.parametrize("lowest", [False, True])
def test_at_round_starts_mid_game_like_the_real_game(lowest: bool) -> None:
    """A game started with at_round() at a round's start, dealt the same
    hands, plays that round exactly as the game it was taken from."""
    rules = Rules(players=4, lowest_score_deals=lowest)
    game = Game(rules, seed=11)
    rng = random.Random(11)
    while game.round < 6 or game.phase is not Phase.DEAL:
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.acting[0]
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    dealer = game.next_dealer()
    copy = Game.at_round(rules, game.round + 1, dealer, game.totals, seed=99)
    assert copy.phase is Phase.DEAL and copy.next_dealer() == dealer
    assert copy.view(0).dealer == (dealer - 1) % 4  # the deal passes on to ``dealer``
    game.deal()
    copy.deal([list(h) for h in game.dealt_hands], game.turned_card)
    while game.phase is not Phase.DEAL:
        # the same position (the copy's history starts at this round)
        assert copy.view(game.acting[0]) == replace(game.view(game.acting[0]), results=())
        seat = game.acting[0]
        action = rng.choice(game.legal_actions(seat))
        game.apply(seat, action)
        copy.apply(seat, action)
    assert copy.totals == game.totals and copy.results == game.results[-1:]
    assert copy.next_dealer() == game.next_dealer()


def test_at_round_refuses_impossible_positions() -> None:
    rules = Rules(players=3)
    for args, message in (
        ((0, 0, [0, 0, 0]), "round must be 1..20"),
        ((21, 0, [0, 0, 0]), "round must be 1..20"),
        ((2, 3, [0, 0, 0]), "dealer must be a seat 0..2"),
        ((2, 0, [0, 0]), "need 3 totals"),
    ):
        with pytest.raises(ValueError, match=message):
            Game.at_round(rules, *args)  # type: ignore[arg-type]
