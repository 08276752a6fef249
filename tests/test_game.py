"""The Game state machine: dealing, turns, refusals, scoring, cloning."""

from __future__ import annotations

import random

import pytest

from wizard_arena.rules import (
    FULL_DECK,
    WIZARD,
    Bid,
    BidMade,
    Card,
    CardPlayed,
    ChooseTrump,
    DealError,
    Game,
    Phase,
    Play,
    RoundResult,
    RoundScored,
    RoundStarted,
    RuleError,
    Rules,
    Trick,
    TrickWon,
    default_action,
    parse_cards,
)

from .games import (
    C,
    D,
    S,
    apply_all,
    before_round,
    deal,
    deals_played,
    play_round,
    round2,
)

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


def test_same_seed_same_deals_whatever_is_played() -> None:
    first = deals_played(Game(Rules(4), seed=42), lambda legal: legal[0])
    last = deals_played(Game(Rules(4), seed=42), lambda legal: legal[-1])
    rng = random.Random(0)
    rand = deals_played(Game(Rules(4), rng=random.Random(42)), rng.choice)
    assert first == last == rand
    assert len(first) == 15
    assert deals_played(Game(Rules(4), seed=43), lambda legal: legal[0]) != first


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
