"""The Game state machine: dealing, turns, refusals, scoring, cloning."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    JESTER,
    WIZARD,
    Action,
    Bid,
    BidForbiddenError,
    BidMade,
    BidOutOfRangeError,
    BidRestriction,
    Card,
    CardNotInHandError,
    CardPlayed,
    ChooseTrump,
    DealError,
    Game,
    GameOver,
    MustFollowSuitError,
    NotYourTurnError,
    Phase,
    Play,
    RoundResult,
    RoundScored,
    RoundStarted,
    RuleError,
    Rules,
    Suit,
    Trick,
    TrickWon,
    TrumpChoiceError,
    TrumpChosen,
    WrongPhaseError,
    default_action,
    parse_cards,
    rank_totals,
)

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS
NONE = BidRestriction.NONE
DNE = BidRestriction.DEALER_NOT_EQUAL
CAN = BidRestriction.CANADIAN


# -- helpers --------------------------------------------------------------------------


def deal(game: Game, hands: Sequence[str], turned: str | None) -> Game:
    game.deal([parse_cards(h) for h in hands], None if turned is None else Card(turned))
    return game


def play_round(game: Game, choose: Callable[[list[Action]], Action] = default_action) -> None:
    """Finish the current round with ``choose`` picking among the legal actions."""
    while game.phase not in (Phase.DEAL, Phase.GAME_OVER):
        assert game.to_act is not None
        game.apply(game.to_act, choose(game.legal_actions()))


def before_round(players: int, rnd: int, restriction: BidRestriction = NONE) -> Game:
    """A seeded game (first dealer 0) played by defaults until round ``rnd`` is next."""
    game = Game(Rules(players, restriction), seed=3)
    while game.round < rnd - 1:
        game.deal()
        play_round(game)
    assert game.phase is Phase.DEAL
    return game


def apply_all(game: Game, actions: Sequence[tuple[int, Action]]) -> None:
    for seat, action in actions:
        game.apply(seat, action)


def refuse(game: Game, seat: int, action: Action, error: type[RuleError]) -> RuleError:
    """Apply an action that must be refused with exactly ``error``; check nothing changed."""
    before = game.state_key()
    views = [game.view(s) for s in range(game.players)]
    with pytest.raises(RuleError) as info:
        game.apply(seat, action)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert game.state_key() == before
    assert [game.view(s) for s in range(game.players)] == views
    return info.value


def round2() -> Game:
    """3 players, round 2 (2 cards), dealer 1: seat 2 bids first and leads. Trump diamonds."""
    game = before_round(3, 2)
    return deal(game, ["3H 9S", "W 12H", "5H 13C"], "7D")


# -- construction ---------------------------------------------------------------------


def test_new_game_waits_for_the_deal() -> None:
    game = Game(Rules(4))
    assert (game.phase, game.round, game.to_act, game.cards) == (Phase.DEAL, 0, None, 0)
    assert game.legal_actions() == []
    assert game.next_dealer() == 0
    assert game.totals == [0, 0, 0, 0]
    assert not game.is_over
    assert "round 0/15" in repr(game) and "phase deal" in repr(game)


def test_game_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match=r"first_dealer must be a seat 0\.\.2, not 3"):
        Game(Rules(3), first_dealer=3)
    with pytest.raises(ValueError, match="first_dealer"):
        Game(Rules(3), first_dealer=-1)
    with pytest.raises(ValueError, match="give seed or rng, not both"):
        Game(Rules(3), seed=1, rng=random.Random(1))


# -- dealing: explicit ----------------------------------------------------------------


def test_explicit_deal_sets_up_the_round() -> None:
    game = deal(Game(Rules(3), first_dealer=1), ["2H", "13S", "W"], "7C")
    assert (game.round, game.dealer, game.cards) == (1, 1, 1)
    assert game.hands == [[Card("2H")], [Card("13S")], [WIZARD]]
    assert game.dealt_hands == ((Card("2H"),), (Card("13S"),), (WIZARD,))
    assert (game.turned_card, game.trump) == (Card("7C"), C)
    assert (game.phase, game.to_act, game.leader) == (Phase.BID, 2, 2)
    assert game.events == [RoundStarted(1, 1, 1, Card("7C"), C)]


def test_explicit_hands_are_sorted_in_deck_order() -> None:
    game = before_round(3, 3)
    deal(game, ["J 13C 1S", "W 2H 1H", "5D 5S W"], "4D")
    assert game.hands == [
        parse_cards("1S 13C J"),
        parse_cards("1H 2H W"),
        parse_cards("5S 5D W"),
    ]


def test_turned_jester_means_no_trump() -> None:
    game = deal(Game(Rules(3)), ["2H", "13S", "5H"], "J")
    assert (game.turned_card, game.trump, game.phase) == (Card("J"), None, Phase.BID)
    assert game.events[-1] == RoundStarted(1, 0, 1, Card("J"), None)


def test_last_round_deals_the_whole_deck_without_trump() -> None:
    game = before_round(6, 10)
    game.deal()
    assert game.round == game.rules.rounds == 10
    assert (game.turned_card, game.trump, game.phase) == (None, None, Phase.BID)
    assert sorted(c for h in game.hands for c in h) == sorted(FULL_DECK)
    assert game.events[-1] == RoundStarted(10, 3, 10, None, None)


def test_last_round_explicit_deal() -> None:
    game = before_round(6, 10)
    deck = sorted(FULL_DECK)
    hands = [deck[i * 10 : (i + 1) * 10] for i in range(6)]
    before = game.state_key()
    # every card is dealt, so any turned card is one copy too many
    with pytest.raises(DealError, match="the deck holds 4 of W, the deal uses 5"):
        game.deal(hands, WIZARD)
    assert game.state_key() == before
    game.deal(hands, None)
    assert game.trump is None and game.phase is Phase.BID


def _six_wizards() -> list[list[Card]]:
    return [parse_cards(h) for h in ["W", "W", "W", "W", "W", "2H"]]


@pytest.mark.parametrize(
    ("players", "hands", "turned", "message"),
    [
        (3, [["2H"], ["3H"]], Card("4H"), "need 3 hands, got 2"),
        (3, [["2H"], ["3H"], ["4H"], ["5H"]], Card("6H"), "need 3 hands, got 4"),
        (3, [["2H", "3H"], ["4H"], ["5H"]], Card("6H"), "round 1 deals 1 cards; seat 0 got 2"),
        (3, [["2H"], [], ["5H"]], Card("6H"), "round 1 deals 1 cards; seat 1 got 0"),
        (3, [["2H"], ["2H"], ["5H"]], Card("6H"), "the deck holds 1 of 2H, the deal uses 2"),
        (3, [["2H"], ["3H"], ["5H"]], Card("3H"), "the deck holds 1 of 3H, the deal uses 2"),
        (6, "six wizards", Card("3S"), "the deck holds 4 of W, the deal uses 5"),
        (4, [["W"], ["W"], ["W"], ["W"]], WIZARD, "the deck holds 4 of W, the deal uses 5"),
        (4, [["J"], ["J"], ["J"], ["J"]], Card("J"), "the deck holds 4 of J, the deal uses 5"),
        (3, [["2H"], ["3H"], ["5H"]], None, "57 cards are left undealt: the turned card is needed"),
        (3, [["2H"], ["3H"], ["x"]], Card("6H"), "seat 2: not a card: 'x'"),
        (3, [["2H"], ["3H"], ["5H"]], "6H", "turned card is not a card: '6H'"),
    ],
)
def test_impossible_explicit_deals_are_refused(
    players: int, hands: object, turned: object, message: str
) -> None:
    game = Game(Rules(players))
    if hands == "six wizards":
        cards: object = _six_wizards()
    else:
        assert isinstance(hands, list)
        cards = [[Card(t) if t != "x" else t for t in h] for h in hands]
    before = game.state_key()
    with pytest.raises(DealError) as info:
        game.deal(cards, turned)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert not isinstance(info.value, RuleError)
    assert game.state_key() == before
    assert game.round == 0 and game.phase is Phase.DEAL
    game.deal()  # the game is still usable
    assert game.round == 1


def test_a_non_card_among_cards_is_a_deal_error() -> None:
    game = before_round(3, 2)
    before = game.state_key()
    hands = [[Card("2H"), "5S"], parse_cards("3H 4H"), parse_cards("6H 7H")]
    with pytest.raises(DealError, match="seat 0: not a card: '5S'"):
        game.deal(hands, Card("8H"))  # type: ignore[arg-type]
    assert game.state_key() == before


def test_deal_argument_combinations() -> None:
    game = Game(Rules(3), seed=1)
    before = game.state_key()
    with pytest.raises(DealError, match="a turned card needs explicit hands"):
        game.deal(turned_card=WIZARD)
    with pytest.raises(DealError, match="explicit hands need turned_card"):
        game.deal([parse_cards("2H"), parse_cards("3H"), parse_cards("4H")])
    assert game.state_key() == before


def test_deal_only_between_rounds() -> None:
    game = deal(Game(Rules(3)), ["2H", "13S", "5H"], "J")
    before = game.state_key()
    with pytest.raises(DealError, match="cannot deal now: the game is in phase bid"):
        game.deal()
    with pytest.raises(DealError, match="phase bid"):
        deal(game, ["2S", "13D", "5C"], "J")
    assert game.state_key() == before


# -- dealing: seeded ------------------------------------------------------------------


def _deals(game: Game, choose: Callable[[list[Action]], Action]) -> list[object]:
    out: list[object] = []
    while not game.is_over:
        game.deal()
        out.append((game.dealt_hands, game.turned_card))
        play_round(game, choose)
    return out


def test_same_seed_same_deals_whatever_is_played() -> None:
    first = _deals(Game(Rules(4), seed=42), lambda legal: legal[0])
    last = _deals(Game(Rules(4), seed=42), lambda legal: legal[-1])
    rng = random.Random(0)
    rand = _deals(Game(Rules(4), rng=random.Random(42)), rng.choice)
    assert first == last == rand
    assert len(first) == 15
    assert _deals(Game(Rules(4), seed=43), lambda legal: legal[0]) != first


def test_string_seeds_are_deterministic() -> None:
    a = Game(Rules(5), seed="table-7")
    b = Game(Rules(5), seed="table-7")
    a.deal()
    b.deal()
    assert a.dealt_hands == b.dealt_hands and a.turned_card == b.turned_card


@pytest.mark.parametrize(("players", "first_dealer"), [(3, 0), (4, 2), (6, 5)])
def test_seeded_deal_layout(players: int, first_dealer: int) -> None:
    """Each round shuffles a fresh deck; the seat left of the dealer gets the
    first ``size`` cards, the next seat the next ``size``..., and the card
    after the last hand is turned."""
    game = Game(Rules(players), seed=11, first_dealer=first_dealer)
    ref = random.Random(11)
    for rnd in range(1, game.rules.rounds + 1):
        game.deal()
        deck = list(FULL_DECK)
        ref.shuffle(deck)
        size = rnd
        for k in range(players):
            seat = (game.dealer + 1 + k) % players
            assert game.hands[seat] == sorted(deck[k * size : (k + 1) * size])
        want = deck[players * size] if players * size < 60 else None
        assert game.turned_card is want
        play_round(game)


# -- turn order ------------------------------------------------------------------------


def test_dealer_rotates_and_left_of_dealer_starts() -> None:
    game = Game(Rules(4), seed=5, first_dealer=2)
    dealers = []
    while not game.is_over:
        game.deal()
        dealers.append(game.dealer)
        assert game.leader == (game.dealer + 1) % 4
        if game.phase is Phase.CHOOSE_TRUMP:
            assert game.to_act == game.dealer
            game.apply(game.dealer, ChooseTrump(S))
        order = []
        while game.phase is Phase.BID:
            assert game.to_act is not None
            order.append(game.to_act)
            game.apply(game.to_act, default_action(game.legal_actions()))
        assert order == [(game.dealer + k) % 4 for k in range(1, 5)]
        assert game.to_act == game.leader
        play_round(game)
    assert dealers == [(2 + r) % 4 for r in range(15)]


def test_a_scripted_round() -> None:
    game = round2()
    assert (game.dealer, game.to_act, game.trump) == (1, 2, D)
    apply_all(game, [(2, Bid(1)), (0, Bid(0)), (1, Bid(2))])
    assert (game.phase, game.to_act, game.bids) == (Phase.PLAY, 2, [0, 2, 1])
    assert game.legal_cards(2) == parse_cards("5H 13C")
    game.apply(2, Play(Card("5H")))
    assert game.legal_cards(0) == [Card("3H")]  # must follow hearts
    game.apply(0, Play(Card("3H")))
    assert game.legal_cards(1) == parse_cards("12H W")
    game.apply(1, Play(WIZARD))
    assert game.tricks == [Trick(2, tuple(parse_cards("5H 3H W")), 1)]
    # the winner leads the next trick
    assert (game.leader, game.to_act, game.trick) == (1, 1, [])
    apply_all(game, [(1, Play(Card("12H"))), (2, Play(Card("13C"))), (0, Play(Card("9S")))])
    assert [t.winner for t in game.tricks] == [1, 1]
    assert game.tricks_won == [0, 2, 0]
    assert game.phase is Phase.DEAL and game.to_act is None
    base = game.results[0].totals
    points = (20, 40, -10)
    totals = tuple(b + p for b, p in zip(base, points, strict=True))
    want = RoundResult(2, 1, (0, 2, 1), (0, 2, 0), points, totals)
    assert game.results[-1] == want
    assert tuple(game.totals) == want.totals
    tail = game.events[game.events.index(RoundStarted(2, 1, 2, Card("7D"), D)) :]
    assert tail == [
        RoundStarted(2, 1, 2, Card("7D"), D),
        BidMade(2, 1),
        BidMade(0, 0),
        BidMade(1, 2),
        CardPlayed(2, Card("5H")),
        CardPlayed(0, Card("3H")),
        CardPlayed(1, WIZARD),
        TrickWon(1, 1, game.tricks[0]),
        CardPlayed(1, Card("12H")),
        CardPlayed(2, Card("13C")),
        CardPlayed(0, Card("9S")),
        TrickWon(2, 1, game.tricks[1]),
        RoundScored(want),
    ]


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


def canadian_round2(round1: Sequence[str], bids1: Sequence[int]) -> Game:
    """3 players, canadian: play round 1 (dealer 0) from ``round1`` hands with
    ``bids1`` (seat 1, 2, 0 order), then deal round 2 (dealer 1)."""
    game = deal(Game(Rules(3, CAN)), round1, "J")
    b1, b2, b0 = bids1
    apply_all(game, [(1, Bid(b1)), (2, Bid(b2)), (0, Bid(b0))])
    play_round(game)
    return deal(game, ["2S 3S", "4S 5S", "6S 7S"], "8S")


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
    _deals(game, default_action)
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
