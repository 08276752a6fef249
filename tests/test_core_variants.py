"""Rule variants in the rules core: semantics, views, refusals, random games."""

from __future__ import annotations

import random

import pytest

from wizard_arena.rules import (
    Bid,
    BidMade,
    BidRestriction,
    Card,
    ChooseTrump,
    Game,
    NotYourTurnError,
    Phase,
    Play,
    Rules,
    Suit,
    TrumpChoiceError,
    TrumpChosen,
    WrongPhaseError,
    parse_cards,
)

H1 = [parse_cards("2H"), parse_cards("13S"), parse_cards("5H")]


def _round1(rules: Rules) -> Game:
    g = Game(rules)
    g.deal(H1, Card("7D"))
    return g


# -- combinations --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hidden_bids": True, "bid_restriction": BidRestriction.DEALER_NOT_EQUAL}, "hidden_bids"),
        ({"blind_first_round": True, "maximus": True}, "blind_first_round"),
        ({"blind_first_round": True, "hand_sizes": (2, 3)}, "blind_first_round"),
        ({"maximus": True, "hand_sizes": (1,)}, "maximus"),
        ({"hand_sizes": (16,), "players": 4}, "1..15"),
        ({"hand_sizes": ()}, "at least one round"),
        ({"tricksy": "yes"}, "true or false"),
    ],
)
def test_impossible_combinations_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(
            3,
            hidden_bids=True,
            blind_first_round=True,
            tricksy=True,
            lowest_score_deals=True,
            hand_sizes=(1, 3),
        ),
        Rules(6, maximus=True, tricksy=True, bid_restriction=BidRestriction.CANADIAN),
        Rules(4),
    ],
)
def test_rules_dict_round_trip(rules: Rules) -> None:
    assert Rules.from_dict(rules.to_dict()) == rules
    assert eval(repr(rules)) == rules


def test_base_rules_dict_is_unchanged() -> None:
    assert Rules(4).to_dict() == {"players": 4, "bid_restriction": "none"}
    with pytest.raises(ValueError, match="unknown rule option"):
        Rules.from_dict({"players": 4, "blind": True})


# -- hidden bids -----------------------------------------------------------------------


def test_hidden_bids_any_order_revealed_together() -> None:
    g = _round1(Rules(3, hidden_bids=True))
    assert g.phase is Phase.BID and g.to_act is None and g.acting == (1, 2, 0)
    assert all(g.legal_actions(s) for s in range(3))
    g.bid(0, 1)
    assert g.acting == (1, 2)
    assert not any(isinstance(e, BidMade) for e in g.events)
    v1 = g.view(1)
    assert v1.bids == (None, None, None) and v1.to_act == 1
    v0 = g.view(0)
    assert v0.bids == (1, None, None) and v0.to_act is None and v0.legal_actions == ()
    before = g.state_key()
    with pytest.raises(NotYourTurnError, match="already bid"):
        g.bid(0, 0)
    with pytest.raises(WrongPhaseError):
        g.play(1, Card("13S"))
    assert g.state_key() == before
    g.bid(2, 0)
    g.bid(1, 1)
    made = [e for e in g.events if isinstance(e, BidMade)]
    assert made == [BidMade(1, 1), BidMade(2, 0), BidMade(0, 1)]
    assert g.phase is Phase.PLAY and g.to_act == 1
    assert g.view(2).bids == (1, 1, 0)


# -- blind first round -----------------------------------------------------------------


def test_blind_first_round_views_and_automatic_play() -> None:
    g = _round1(Rules(3, blind_first_round=True))
    for seat in range(3):
        v = g.view(seat)
        assert v.hand == ()
        assert v.others_hands[seat] == ()
        assert [h for s, h in enumerate(v.others_hands) if s != seat] == [
            tuple(H1[s]) for s in range(3) if s != seat
        ]
    g.bid(1, 1)
    g.bid(2, 0)
    g.bid(0, 0)
    # the referee played the forced cards: the round is scored, no play decision happened
    assert g.phase is Phase.DEAL
    assert [t.winner for t in g.tricks] == [1]
    assert g.results[-1].points == (20, 30, 20)
    g.deal()
    v = g.view(0)
    assert len(v.hand) == 2 and v.others_hands == ()


def test_blind_round_own_card_is_unseen() -> None:
    g = _round1(Rules(3, blind_first_round=True))
    v = g.view(0)
    unseen = v.unseen_cards()
    assert Card("2H") in unseen  # own card unknown to its owner
    assert Card("13S") not in unseen and Card("5H") not in unseen  # others' are seen


# -- Wizard Maximus ----------------------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_maximus_deals_everything_with_fixed_trumps(players: int) -> None:
    g = Game(Rules(players, maximus=True), seed=players)
    trumps = []
    while not g.is_over:
        g.deal()
        assert g.turned_card is None
        assert sum(len(h) for h in g.hands) == 60
        trumps.append(g.trump)
        while g.phase not in (Phase.DEAL, Phase.GAME_OVER):
            seat = g.acting[0]
            g.apply(seat, g.legal_actions(seat)[0])
    assert trumps == [Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES, None]
    assert len(g.results) == 5


# -- Tricksy ---------------------------------------------------------------------------------


def _tricksy_round2() -> Game:
    g = Game(Rules(3, tricksy=True))
    g.deal(H1, Card("7D"))
    for s, b in [(1, 1), (2, 0), (0, 0)]:
        g.bid(s, b)
    for s, c in [(1, "13S"), (2, "5H"), (0, "2H")]:
        g.play(s, Card(c))
    g.deal([parse_cards("2S 9S"), parse_cards("5H 6H"), parse_cards("W 3C")], Card("7H"))
    for s, b in [(2, 1), (0, 1), (1, 0)]:
        g.bid(s, b)
    return g


def test_tricksy_choice_applies_from_the_next_trick() -> None:
    g = _tricksy_round2()
    g.play(2, Card("W"))
    assert g.phase is Phase.CHOOSE_TRUMP and g.to_act == 2
    assert g.legal_actions(2) == [ChooseTrump(s) for s in Suit]
    before = g.state_key()
    with pytest.raises(TrumpChoiceError):
        g.choose_trump(0, Suit.SPADES)
    with pytest.raises(WrongPhaseError):
        g.play(0, Card("9S"))
    assert g.state_key() == before
    g.choose_trump(2, Suit.SPADES)
    assert g.trump is Suit.HEARTS and g.next_trump is Suit.SPADES
    assert g.view(1).next_trump is Suit.SPADES
    assert TrumpChosen(2, Suit.SPADES) in g.events
    g.play(0, Card("9S"))
    g.play(1, Card("6H"))
    assert g.trump is Suit.SPADES and g.next_trump is None
    for s, c in [(2, "3C"), (0, "2S"), (1, "5H")]:
        g.play(s, Card(c))
    assert [t.winner for t in g.tricks] == [2, 0]  # 2S trumps 5H once spades are trump
    assert g.trick_trumps == [Suit.HEARTS, Suit.SPADES]
    assert g.round_trump is Suit.HEARTS


def test_without_tricksy_a_wizard_names_nothing() -> None:
    g = Game(Rules(3))
    g.deal(H1, Card("7D"))
    for s, b in [(1, 1), (2, 0), (0, 0)]:
        g.bid(s, b)
    for s, c in [(1, "13S"), (2, "5H"), (0, "2H")]:
        g.play(s, Card(c))
    g.deal([parse_cards("2S 9S"), parse_cards("5H 6H"), parse_cards("W 3C")], Card("7H"))
    for s, b in [(2, 1), (0, 1), (1, 0)]:
        g.bid(s, b)
    g.play(2, Card("W"))
    assert g.phase is Phase.PLAY and g.to_act == 0


# -- lowest score deals ----------------------------------------------------------------------


def test_lowest_score_deals_with_ties_clockwise_from_dealers_left() -> None:
    g = Game(Rules(3, lowest_score_deals=True))
    g.deal(H1, Card("7D"))  # dealer 0
    for s, b in [(1, 1), (2, 1), (0, 1)]:
        g.bid(s, b)
    for s, c in [(1, "13S"), (2, "5H"), (0, "2H")]:
        g.play(s, Card(c))
    assert g.totals == [-10, 30, -10]
    assert g.next_dealer() == 2  # seats 0 and 2 tie; from seat 1 clockwise, 2 comes first
    assert Game(Rules(3)).next_dealer() == 0


# -- random whole games under every combination ------------------------------------------


COMBOS = [
    Rules(3, hidden_bids=True),
    Rules(4, blind_first_round=True, bid_restriction=BidRestriction.CANADIAN),
    Rules(5, maximus=True),
    Rules(6, tricksy=True),
    Rules(4, lowest_score_deals=True),
    Rules(3, hand_sizes=(2, 4, 20)),
    Rules(3, hidden_bids=True, blind_first_round=True, tricksy=True, lowest_score_deals=True),
    Rules(6, maximus=True, tricksy=True, hidden_bids=True),
]


@pytest.mark.parametrize("rules", COMBOS, ids=lambda r: r.describe())
@pytest.mark.parametrize("seed", range(3))
def test_random_games_keep_the_invariants(rules: Rules, seed: int) -> None:
    rng = random.Random(seed)
    g = Game(rules, seed=seed)
    n = rules.players
    while not g.is_over:
        g.deal()
        dealt = [list(h) for h in g.dealt_hands]
        while g.phase not in (Phase.DEAL, Phase.GAME_OVER):
            acting = g.acting
            assert acting
            for seat in range(n):
                view = g.view(seat)
                assert set(view.legal_actions) == set(view.compute_legal_actions())
                assert bool(view.legal_actions) == (seat in acting)
                # never another seat's cards, except what the blind round shows
                others = {c for s, h in enumerate(g.hands) if s != seat for c in h}
                own = set(g.hands[seat])
                if g.blind:
                    assert view.hand == ()
                else:
                    assert list(view.hand) == g.hands[seat]
                    shown = (
                        set(view.hand) | set(view.trick) | {c for t in view.tricks for c in t.cards}
                    )
                    assert not (
                        shown
                        & (
                            others
                            - own
                            - set(view.trick)
                            - {c for t in view.tricks for c in t.cards}
                        )
                    )
            seat = rng.choice(acting)
            action = rng.choice(g.legal_actions(seat))
            g.apply(seat, action)
        r = g.results[-1]
        assert sum(r.tricks) == len(dealt[0])
        assert len(g.trick_trumps) == len(g.tricks)
    assert [sum(r.points[s] for r in g.results) for s in range(n)] == g.totals
    # the whole game replays from its events' deals and actions
    assert len(g.results) == rules.rounds


def test_actions_of_different_kinds_are_not_confused() -> None:
    assert Bid(0) != ChooseTrump(Suit.SPADES)
    assert Play(Card("W")) != Bid(52)
