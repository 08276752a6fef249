"""The pure rule functions, one rule at a time."""

from __future__ import annotations

import pytest

from wizard_arena.rules import (
    JESTER,
    MAX_PLAYERS,
    MIN_PLAYERS,
    WIZARD,
    Action,
    Bid,
    BidRestriction,
    Card,
    ChooseTrump,
    Play,
    Rules,
    Suit,
    action_text,
    allowed_bids,
    default_action,
    forbidden_bid,
    format_cards,
    legal_cards,
    parse_cards,
    rank_totals,
    score,
    suit_to_follow,
    trick_winner,
)

from .games import CAN, DNE, NONE, C, D, H, S

# -- Rules ---------------------------------------------------------------------


@pytest.mark.parametrize(("players", "rounds"), [(3, 20), (4, 15), (5, 12), (6, 10)])
def test_rounds_are_60_over_players(players: int, rounds: int) -> None:
    r = Rules(players=players)
    assert r.rounds == rounds
    assert r.round_sizes == tuple(range(1, rounds + 1))
    assert players * r.round_sizes[-1] == 60


@pytest.mark.parametrize("players", [0, 1, 2, 7, 10, -3])
def test_rules_refuse_player_counts(players: int) -> None:
    with pytest.raises(ValueError, match=f"players must be 3..6, not {players}"):
        Rules(players=players)


def test_rules_player_bounds() -> None:
    assert (MIN_PLAYERS, MAX_PLAYERS) == (3, 6)


def test_rules_defaults_and_string_restriction() -> None:
    assert Rules() == Rules(4, NONE)
    r = Rules(3, "canadian")  # type: ignore[arg-type]
    assert r.bid_restriction is CAN
    with pytest.raises(ValueError):
        Rules(3, "sometimes")  # type: ignore[arg-type]


def test_rules_dict_round_trip() -> None:
    for players in range(3, 7):
        for br in BidRestriction:
            r = Rules(players, br)
            assert r.to_dict() == {"players": players, "bid_restriction": br.value}
            assert Rules.from_dict(r.to_dict()) == r
    assert Rules.from_dict({}) == Rules(4, NONE)
    assert Rules(5, DNE).describe() == "5 players, bid restriction dealer_not_equal"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"players": 4, "colour": "red"}, "unknown rule option"),
        ({"players": "4"}, "players must be an integer"),
        ({"players": 9}, "players must be 3..6"),
        ({"bid_restriction": "strict"}, "unknown bid_restriction 'strict'"),
    ],
)
def test_rules_from_dict_refuses(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules.from_dict(data)


# -- trick winner ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plays", "trump", "winner"),
    [
        ("5S W 13H W", H, 1),  # first Wizard wins
        ("W W W W", S, 0),
        ("13S 12S W 1S", S, 2),  # Wizard beats the highest trump
        ("13C 2D 9D 12C", D, 2),  # highest trump
        ("13C 1D 12C", D, 1),  # any trump beats the led suit
        ("4H 13C 9H 12D", S, 2),  # highest of the led suit; off-suit never wins
        ("4H 13C 9H 12D", None, 2),  # no trump
        ("2H 13S 13D 13C", None, 0),  # a low led card beats higher off-suit cards
        ("J J J", H, 0),  # only Jesters: the first Jester
        ("J J J J J J", None, 0),
        ("J 6H 13H 12S", C, 2),  # Jester lead: the first suited card sets the suit
        ("J 6H 13H 1C", C, 3),
        ("J J 6H 13S", None, 2),
        ("J J W 13C", C, 2),
        ("3S J J J", H, 0),  # a Jester never wins beside a suited card
        ("W 13H W J", H, 0),
        ("10D 11D J 1S 13D 2S", S, 5),
        ("7C 13C 1C", None, 1),
        ("5H 5H", H, 0),  # equal rank cannot happen in a real deck; the first keeps it
    ],
)
def test_trick_winner(plays: str, trump: Suit | None, winner: int) -> None:
    assert trick_winner(parse_cards(plays), trump) == winner


# -- following suit ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "follow"),
    [
        ("", None),  # leading: free
        ("7C", C),
        ("7C 13H", C),  # the first suited card, not the highest
        ("W", None),  # a Wizard lead frees the trick
        ("W 5S", None),
        ("J", None),  # a Jester lead sets nothing...
        ("J J", None),
        ("J 6S", S),  # ...the first suited card does
        ("J J 6S 2H", S),
        ("J W", None),  # a Wizard before any suited card frees the trick
        ("J W 6S", None),
        ("6S W", S),  # a later Wizard does not release the duty
        ("6S J W 2H", S),
    ],
)
def test_suit_to_follow(trick: str, follow: Suit | None) -> None:
    assert suit_to_follow(parse_cards(trick)) is follow


@pytest.mark.parametrize(
    ("hand", "trick", "legal"),
    [
        ("2C 9D 13H 11C", "7C", "2C 11C"),  # must follow
        ("2C 9D W J", "7C", "2C W J"),  # Wizard and Jester always allowed
        ("9D 13H W", "7C", "9D 13H W"),  # void: anything
        ("2C 9D 13H", "", "2C 9D 13H"),  # leading: anything
        ("2C 9D 13H", "W", "2C 9D 13H"),  # Wizard lead: free
        ("2C 9D 13H", "W 7C", "2C 9D 13H"),  # ...even after a suited card
        ("2C 9D 13H", "J", "2C 9D 13H"),  # Jester lead: free so far
        ("2C 9D 13H", "J 5D", "9D"),  # ...then the first suited card sets the suit
        ("2C 9D 13H", "J J W 5D", "2C 9D 13H"),  # Wizard first after Jesters: free
        ("2C 9D 13H J", "5D W", "9D J"),  # a later Wizard keeps the suit
        ("W W J", "5D", "W W J"),  # only specials: all
        ("W W 2D 3D", "5D", "W W 2D 3D"),  # multiset kept
    ],
)
def test_legal_cards(hand: str, trick: str, legal: str) -> None:
    got = legal_cards(parse_cards(hand), parse_cards(trick))
    assert format_cards(sorted(got)) == format_cards(sorted(parse_cards(legal)))


def test_trump_does_not_make_a_card_legal() -> None:
    # holding the led suit, a trump may not be played: trump is irrelevant to legality
    assert legal_cards(parse_cards("3H 13S"), parse_cards("2H")) == [Card("3H")]


# -- scoring ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bid", "tricks", "points"),
    [
        (0, 0, 20),
        (1, 1, 30),
        (3, 3, 50),
        (20, 20, 220),
        (2, 4, -20),
        (3, 1, -20),
        (0, 1, -10),
        (0, 20, -200),
        (5, 0, -50),
    ],
)
def test_score(bid: int, tricks: int, points: int) -> None:
    assert score(bid, tricks) == points


# -- bid restrictions -----------------------------------------------------------------


def test_no_restriction_allows_everything() -> None:
    assert forbidden_bid(NONE, 3, [1, 1], 100, [0, 0]) is None
    assert allowed_bids(Rules(3, NONE), 3, 0, 0, [None, 1, 1], [50, 0, 0]) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("cards", "others", "forbidden"),
    [
        (3, [1, 1], 1),
        (3, [0, 0], 3),
        (3, [2, 1], 0),  # the others already bid all tricks: 0 is forbidden
        (3, [3, 2], None),  # over-bid: no bid can make the sum equal
        (1, [0, 0, 0, 0, 0], 1),
    ],
)
def test_dealer_not_equal(cards: int, others: list[int], forbidden: int | None) -> None:
    players = len(others) + 1
    dealer = 0
    bids: list[int | None] = [None, *others]
    totals = [0] * players
    assert forbidden_bid(DNE, cards, others, 0, totals[1:]) == forbidden
    allowed = allowed_bids(Rules(players, DNE), cards, dealer, dealer, bids, totals)
    assert allowed == [b for b in range(cards + 1) if b != forbidden]


def test_only_the_dealer_is_restricted() -> None:
    rules = Rules(3, DNE)
    # seat 1 bids first (dealer 0); seat 2 second with seat 1's bid known
    assert allowed_bids(rules, 2, 1, 0, [None, None, None], [0, 0, 0]) == [0, 1, 2]
    assert allowed_bids(rules, 2, 2, 0, [None, 1, None], [0, 0, 0]) == [0, 1, 2]
    assert allowed_bids(rules, 2, 0, 0, [None, 1, 0], [0, 0, 0]) == [0, 2]


def test_canadian_when_dealer_strictly_leads() -> None:
    rules = Rules(3, CAN)
    # dealer 0 leads 30 to 20: like dealer_not_equal
    assert forbidden_bid(CAN, 3, [1, 1], 30, [20, -10]) == 1
    assert allowed_bids(rules, 3, 0, 0, [None, 1, 1], [30, 20, -10]) == [0, 2, 3]


@pytest.mark.parametrize("totals", [[30, 30, 0], [0, 30, 0], [-10, 0, -20], [0, 0, 0]])
def test_canadian_inactive_unless_dealer_strictly_leads(totals: list[int]) -> None:
    rules = Rules(3, CAN)
    assert forbidden_bid(CAN, 3, [1, 1], totals[0], totals[1:]) is None
    assert allowed_bids(rules, 3, 0, 0, [None, 1, 1], totals) == [0, 1, 2, 3]
    # the same position under dealer_not_equal is restricted
    assert allowed_bids(Rules(3, DNE), 3, 0, 0, [None, 1, 1], totals) == [0, 2, 3]


def test_canadian_zero_always_allowed() -> None:
    rules = Rules(3, CAN)
    # the others bid all 3 tricks: dealer_not_equal forbids 0, canadian never does
    assert forbidden_bid(DNE, 3, [2, 1], 50, [0, 0]) == 0
    assert forbidden_bid(CAN, 3, [2, 1], 50, [0, 0]) is None
    assert allowed_bids(rules, 3, 0, 0, [None, 2, 1], [50, 0, 0]) == [0, 1, 2, 3]
    assert allowed_bids(Rules(3, DNE), 3, 0, 0, [None, 2, 1], [50, 0, 0]) == [1, 2, 3]


def test_canadian_dealer_in_the_middle_seat() -> None:
    # dealer 2 of 4 leads strictly; its own total is not compared with itself
    rules = Rules(4, CAN)
    bids: list[int | None] = [0, 1, None, 0]
    assert allowed_bids(rules, 2, 2, 2, bids, [10, 0, 40, 39]) == [0, 2]
    assert allowed_bids(rules, 2, 2, 2, bids, [10, 0, 40, 40]) == [0, 1, 2]


# -- standings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "ranks"),
    [
        ([50, 120, 50, -10], [2, 1, 2, 4]),
        ([10, 20, 30], [3, 2, 1]),
        ([0, 0, 0], [1, 1, 1]),
        ([90, 90, 10, 10, -5, 90], [1, 1, 4, 4, 6, 1]),
        ([-30, -10, -20], [3, 1, 2]),
        ([5, 5, 7], [2, 2, 1]),
    ],
)
def test_rank_totals(totals: list[int], ranks: list[int]) -> None:
    assert rank_totals(totals) == ranks


# -- the referee default ------------------------------------------------------------------


def _plays(text: str) -> list[Action]:
    return [Play(c) for c in parse_cards(text)]


@pytest.mark.parametrize(
    ("legal", "default"),
    [
        (_plays("W 3C 2H"), Play(Card("2H"))),  # lowest in deck order
        (_plays("13C 1D 5H 4S"), Play(Card("4S"))),  # spades before hearts
        (_plays("W 13C"), Play(Card("13C"))),  # Wizard comes last
        (_plays("W 3C J"), Play(JESTER)),  # the Jester when it may be played
        (_plays("W"), Play(WIZARD)),
        ([Bid(3), Bid(1), Bid(2)], Bid(1)),  # lowest bid allowed
        ([Bid(0), Bid(2)], Bid(0)),
        ([Bid(1), Bid(2)], Bid(1)),
        ([ChooseTrump(s) for s in Suit], ChooseTrump(S)),
        ([ChooseTrump(D), ChooseTrump(H)], ChooseTrump(D)),  # the first offered
    ],
)
def test_default_action(legal: list[Action], default: Action) -> None:
    assert default_action(legal) == default
    assert default_action(tuple(legal)) == default


def test_default_action_needs_a_choice() -> None:
    with pytest.raises(ValueError, match="no legal action"):
        default_action([])


def test_action_text() -> None:
    assert action_text(Bid(2)) == "bid 2"
    assert action_text(Play(Card("13H"))) == "play 13H"
    assert action_text(Play(WIZARD)) == "play W"
    assert action_text(ChooseTrump(C)) == "trump C"
