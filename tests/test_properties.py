"""Property tests over random games (hypothesis).

The rules are checked against small reference implementations written here
independently of the core, and every seat's view is checked against the
hidden state at every decision.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as HPhase
from hypothesis import strategies as st

from wizard_arena.rules import (
    FULL_DECK,
    Action,
    Bid,
    BidForbiddenError,
    BidOutOfRangeError,
    BidRestriction,
    Card,
    CardNotInHandError,
    ChooseTrump,
    Game,
    GameOver,
    MustFollowSuitError,
    NotYourTurnError,
    Phase,
    Play,
    RoundScored,
    RuleError,
    Rules,
    SeatView,
    Suit,
    TrumpChoiceError,
    WrongPhaseError,
    allowed_bids,
    compute_legal_actions,
    legal_cards,
    rank_totals,
    score,
    trick_winner,
)

CARDS = sorted(set(FULL_DECK))
DECK_COUNTS = Counter(FULL_DECK)
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
# whole games are slow to shrink and their inputs are seeds: report the first failure
GAME_SETTINGS = {**SETTINGS, "phases": (HPhase.explicit, HPhase.reuse, HPhase.generate)}


# -- reference rules, written independently of the core ------------------------------


def ref_winner(plays: Sequence[Card], trump: Suit | None) -> int:
    wizards = [i for i, c in enumerate(plays) if c.is_wizard]
    if wizards:
        return wizards[0]
    trumps = [i for i, c in enumerate(plays) if trump is not None and c.suit is trump]
    if trumps:
        return max(trumps, key=lambda i: plays[i].rank)
    suited = [i for i, c in enumerate(plays) if c.suit is not None]
    if not suited:
        return 0
    led = plays[suited[0]].suit
    return max((i for i in suited if plays[i].suit is led), key=lambda i: plays[i].rank)


def ref_legal(hand: Sequence[Card], trick: Sequence[Card]) -> Counter[Card]:
    first = next((c for c in trick if not c.is_jester), None)
    if first is None or first.is_wizard:
        return Counter(hand)
    led = first.suit
    if any(c.suit is led for c in hand):
        return Counter(c for c in hand if c.suit is led or c.suit is None)
    return Counter(hand)


def ref_bids(
    restriction: BidRestriction,
    cards: int,
    seat: int,
    dealer: int,
    bids: Sequence[int | None],
    totals: Sequence[int],
) -> list[int]:
    every = list(range(cards + 1))
    if seat != dealer or restriction is BidRestriction.NONE:
        return every
    others = sum(b for s, b in enumerate(bids) if s != seat and b is not None)
    canadian = restriction is BidRestriction.CANADIAN
    if canadian and totals[dealer] <= max(t for s, t in enumerate(totals) if s != dealer):
        return every
    return [b for b in every if b + others != cards or (canadian and b == 0)]


def ref_score(bid: int, tricks: int) -> int:
    return 20 + 10 * tricks if bid == tricks else -10 * abs(bid - tricks)


def ref_ranks(totals: Sequence[int]) -> list[int]:
    order = sorted(totals, reverse=True)
    return [order.index(t) + 1 for t in totals]


def expected_error(game: Game, seat: int, action: Action) -> type[RuleError] | None:
    """The error the referee must raise for ``action`` by ``seat``; None if legal."""
    kind = {Bid: Phase.BID, Play: Phase.PLAY, ChooseTrump: Phase.CHOOSE_TRUMP}[type(action)]
    if game.phase is not kind:
        return TrumpChoiceError if isinstance(action, ChooseTrump) else WrongPhaseError
    if seat != game.to_act:
        return TrumpChoiceError if isinstance(action, ChooseTrump) else NotYourTurnError
    if isinstance(action, Bid):
        if not 0 <= action.bid <= game.cards:
            return BidOutOfRangeError
        ok = ref_bids(
            game.rules.bid_restriction, game.cards, seat, game.dealer, game.bids, game.totals
        )
        return None if action.bid in ok else BidForbiddenError
    if isinstance(action, Play):
        if action.card not in game.hands[seat]:
            return CardNotInHandError
        return (
            None
            if action.card in ref_legal(game.hands[seat], game.trick)
            else (MustFollowSuitError)
        )
    return None


# -- checks ---------------------------------------------------------------------------


_ATOMS = (int, str, float, type(None), Suit, Phase, BidRestriction)


def cards_in(value: object) -> Iterator[Card]:
    """Every Card anywhere inside ``value`` (tuples, named tuples, dicts, dataclasses)."""
    if isinstance(value, Card):
        yield value
    elif isinstance(value, _ATOMS):
        return
    elif isinstance(value, tuple):
        try:
            found = _cards_in_tuple(value)
        except TypeError:  # unhashable inside
            found = tuple(c for v in value for c in cards_in(v))
        yield from found
    elif isinstance(value, (list, set, frozenset)):
        for v in value:
            yield from cards_in(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from cards_in(k)
            yield from cards_in(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from cards_in(getattr(value, f.name))
    else:
        raise AssertionError(f"cannot look inside {value!r}")


@functools.lru_cache(maxsize=1 << 16)
def _cards_in_tuple(value: tuple[object, ...]) -> tuple[Card, ...]:
    # views share their tuples (results, tricks) from one decision to the next:
    # equal tuples hold the same cards, so the walk is cached
    return tuple(c for v in value for c in cards_in(v))


def same(a: Counter[Card], b: Counter[Card]) -> bool:
    """``a == b`` for counters of positive counts only (as ``Counter(iterable)``,
    ``+`` and unary ``+`` make them), at dict speed: a Counter's own ``==``
    looks every element up in both."""
    return dict.__eq__(a, b)


def check_state(game: Game) -> None:
    n = game.players
    # cards are conserved: hands + played = dealt, and the deal fits in one deck
    dealt = Counter(c for h in game.dealt_hands for c in h)
    turned = [game.turned_card] if game.turned_card is not None else []
    # (Counters of chained cards: the sums of their Counters, without Counter.__add__)
    held_and_played = chain(*game.hands, *(t.cards for t in game.tricks), game.trick)
    assert same(Counter(held_and_played), dealt)
    used = Counter(chain(*game.dealt_hands, turned))
    assert all(used[c] <= DECK_COUNTS[c] for c in used)
    assert sum(used.values()) == min(60, n * game.cards + 1)
    assert all(len(h) == game.cards for h in game.dealt_hands)
    # hand sizes follow the play
    in_trick = {(game.leader + i) % n for i in range(len(game.trick))}
    for s in range(n):
        assert len(game.hands[s]) == game.cards - len(game.tricks) - (s in in_trick)
        assert game.hands[s] == sorted(game.hands[s])
    # one winner per trick, by the reference rule; the winner leads next
    assert len(game.trick) < n
    leader = (game.dealer + 1) % n
    for t in game.tricks:
        assert t.leader == leader and len(t.cards) == n
        assert t.winner == (t.leader + ref_winner(t.cards, game.trump)) % n
        leader = t.winner
    assert game.leader == leader
    assert game.tricks_won == [sum(t.winner == s for t in game.tricks) for s in range(n)]
    assert sum(game.tricks_won) == len(game.tricks) <= game.cards
    # trump follows the turned card
    turned = game.turned_card
    if turned is None or turned.is_jester:
        assert game.trump is None
    elif turned.is_wizard:
        assert (game.trump is None) == (game.phase is Phase.CHOOSE_TRUMP)
    else:
        assert game.trump is turned.suit
    # totals are the sum of the round points
    for s in range(n):
        assert game.totals[s] == sum(r.points[s] for r in game.results)


def check_legal(game: Game) -> None:
    seat = game.to_act
    assert seat is not None
    legal = game.legal_actions()
    assert legal, "the seat to act always has a legal action"
    assert len(set(legal)) == len(legal)
    if game.phase is Phase.PLAY:
        hand = game.hands[seat]
        cards = game.legal_cards(seat)
        assert Counter(cards) == ref_legal(hand, game.trick)
        assert all(c in hand for c in cards)
        assert set(legal) == {Play(c) for c in cards}
    elif game.phase is Phase.BID:
        bids = ref_bids(
            game.rules.bid_restriction, game.cards, seat, game.dealer, game.bids, game.totals
        )
        assert legal == [Bid(b) for b in bids]
        assert allowed_bids(game.rules, game.cards, seat, game.dealer, game.bids, game.totals) == (
            bids
        )
    else:
        assert game.phase is Phase.CHOOSE_TRUMP and seat == game.dealer
        assert legal == [ChooseTrump(s) for s in Suit]


CARD_FIELDS = {"hand", "legal_actions", "turned_card", "trick", "tricks"}
VIEW_FIELDS = tuple(f.name for f in dataclasses.fields(SeatView))


def check_view(game: Game, seat: int) -> None:
    v = game.view(seat)
    n = game.players
    own = Counter(game.hands[seat])
    turned = [game.turned_card] if game.turned_card is not None else []
    public = Counter(chain(*(t.cards for t in game.tricks), game.trick, turned))
    hand = Counter(cards_in(v.hand))
    legal = set(cards_in(v.legal_actions))
    shown = Counter(chain(cards_in(v.turned_card), cards_in(v.trick), cards_in(v.tricks)))
    # the hand is exactly this seat's hand; legal plays come from it
    assert same(hand, own)
    assert legal <= set(own)
    # every other card in the view is public: the turned card and cards played
    assert same(shown, public)
    for name in VIEW_FIELDS:
        if name not in CARD_FIELDS:
            found = next(cards_in(getattr(v, name)), None)
            assert found is None, f"view field {name} holds cards"
    everything = set(hand) | legal | set(shown)
    for other in range(n):
        if other == seat:
            continue
        for card in game.hands[other]:
            if not card.is_special:  # a unique card held by another seat
                assert card not in everything, f"seat {seat} sees {card} of seat {other}"
    # the public facts are right
    assert (v.seat, v.phase, v.round, v.cards_per_player) == (
        seat,
        game.phase,
        game.round,
        game.cards,
    )
    assert (v.dealer, v.to_act, v.leader, v.trump) == (
        game.dealer,
        game.to_act,
        game.leader,
        game.trump,
    )
    assert v.bids == tuple(game.bids) and v.tricks_won == tuple(game.tricks_won)
    assert v.totals == tuple(game.totals) and v.results == tuple(game.results)
    assert v.rules == game.rules
    # legal actions: the game's for the seat to act, recomputable from the view alone
    want = tuple(game.legal_actions()) if game.to_act == seat else ()
    assert v.legal_actions == want
    assert set(compute_legal_actions(v)) == set(want)
    # helpers: known voids are true; unseen cards are the other hands and the undealt deck
    for s, suits in v.known_voids().items():
        for suit in suits:
            assert all(c.suit is not suit for c in game.hands[s])
    undealt = DECK_COUNTS.copy()
    undealt.subtract(c for h in game.dealt_hands for c in h)
    if game.turned_card is not None:
        undealt[game.turned_card] -= 1
    for s in range(n):
        if s != seat:
            undealt.update(game.hands[s])
    assert same(Counter(v.unseen_cards()), +undealt)


def random_action(game: Game, rng: random.Random) -> tuple[int, Action]:
    """A random, usually plausible, action by a random seat (often a rule breaker)."""
    n = game.players
    seat = game.to_act if game.to_act is not None and rng.random() < 0.6 else rng.randrange(n)
    kind = rng.random()
    if (game.phase is Phase.BID and kind < 0.6) or kind < 0.2:
        return seat, Bid(rng.randint(-1, game.cards + 1))
    if (game.phase is Phase.PLAY and kind < 0.6) or kind < 0.8:
        if rng.random() < 0.7 and game.hands[seat]:
            return seat, Play(rng.choice(game.hands[seat]))
        return seat, Play(rng.choice(CARDS))
    return seat, ChooseTrump(rng.choice(list(Suit)))


def check_refusal(game: Game, rng: random.Random) -> None:
    for _ in range(3):
        seat, action = random_action(game, rng)
        want = expected_error(game, seat, action)
        legal = seat == game.to_act and action in game.legal_actions()
        assert (want is None) == legal
        if want is None:
            continue
        before = game.state_key()
        views = [game.view(s) for s in range(game.players)]
        try:
            game.apply(seat, action)
        except RuleError as err:
            assert type(err) is want, f"{action}: {type(err).__name__}, wanted {want.__name__}"
            assert err.seat == seat and f"seat {seat}:" in str(err)
            assert err.action in str(err) and err.reason in str(err)
        else:
            raise AssertionError(f"seat {seat}: {action} was accepted")
        assert game.state_key() == before
        assert [game.view(s) for s in range(game.players)] == views
        return


# -- the random game property ----------------------------------------------------------


restrictions = st.sampled_from(list(BidRestriction))


@pytest.mark.slow(seconds=10)
@settings(max_examples=16, **GAME_SETTINGS)  # type: ignore[arg-type]
@given(
    players=st.integers(3, 6),
    restriction=restrictions,
    seed=st.integers(0, 2**32),
    first_dealer=st.integers(0, 5),
    choices=st.integers(0, 2**32),
)
def test_random_games(
    players: int, restriction: BidRestriction, seed: int, first_dealer: int, choices: int
) -> None:
    rng = random.Random(choices)
    game = Game(Rules(players, restriction), seed=seed, first_dealer=first_dealer % players)
    scored = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            assert game.legal_actions() == [] and game.to_act is None
            game.deal()
            check_state(game)
            continue
        check_state(game)
        check_legal(game)
        for s in range(players):
            check_view(game, s)
        check_refusal(game, rng)
        seat = game.to_act
        assert seat is not None
        legal = game.legal_actions()
        if rng.random() < 0.05:  # every legal action is accepted
            for action in legal:
                game.clone().apply(seat, action)
        tricks_before = len(game.tricks)
        game.apply(seat, rng.choice(legal))
        phase: Phase = game.phase
        if phase in (Phase.DEAL, Phase.GAME_OVER):
            # the round was scored: tricks sum to the round size, points by the rules
            scored += 1
            result = game.results[-1]
            assert tricks_before + 1 == game.cards == sum(result.tricks)
            assert result.round == game.round == scored and result.dealer == game.dealer
            assert result.points == tuple(
                ref_score(b, t) for b, t in zip(result.bids, result.tricks, strict=True)
            )
            assert result.bids == tuple(game.bids)
            assert game.events[-1 if phase is Phase.DEAL else -2] == RoundScored(result)
            check_state(game)
            for s in range(players):
                check_view(game, s)
    # the end: every round scored, totals and ranks
    assert scored == game.rules.rounds == len(game.results)
    assert game.round == game.rules.rounds and game.trump is None and game.turned_card is None
    totals = [sum(r.points[s] for r in game.results) for s in range(players)]
    assert game.totals == totals == list(game.results[-1].totals)
    assert game.ranks == ref_ranks(totals)
    assert game.events[-1] == GameOver(tuple(totals), tuple(ref_ranks(totals)))
    assert [type(e) for e in game.events].count(GameOver) == 1


# -- deals ---------------------------------------------------------------------------------


def play_out(game: Game, rng: random.Random | None) -> list[tuple[object, Card | None]]:
    """Play a whole seeded game (first legal action, or random ones); return the deals."""
    deals: list[tuple[object, Card | None]] = []
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            deals.append((game.dealt_hands, game.turned_card))
            continue
        legal = game.legal_actions()
        assert game.to_act is not None
        game.apply(game.to_act, rng.choice(legal) if rng else legal[0])
    return deals


@settings(max_examples=15, **GAME_SETTINGS)  # type: ignore[arg-type]
@given(
    players=st.integers(3, 6),
    seed=st.integers(0, 2**32),
    choices=st.integers(0, 2**32),
)
def test_same_seed_same_deals_and_explicit_replay(players: int, seed: int, choices: int) -> None:
    rng = random.Random(choices)
    first = Game(Rules(players), seed=seed)
    deals = play_out(first, None)
    again = Game(Rules(players), rng=random.Random(seed))
    assert play_out(again, rng) == deals
    # dealing the same hands explicitly and playing the same actions gives the same game
    replay = Game(Rules(players), seed=seed + 1)
    dealt = iter(deals)
    for event in first.events:
        if replay.phase is Phase.DEAL:
            hands, turned = next(dealt)
            assert isinstance(hands, tuple)
            replay.deal([list(h) for h in hands], turned)
        if hasattr(event, "card"):
            replay.apply(event.seat, Play(event.card))  # type: ignore[union-attr]
        elif hasattr(event, "bid"):
            replay.apply(event.seat, Bid(event.bid))  # type: ignore[union-attr]
        elif hasattr(event, "suit"):
            replay.apply(event.seat, ChooseTrump(event.suit))  # type: ignore[union-attr]
    assert replay.state_key() == first.state_key()


# -- clones ----------------------------------------------------------------------------------


@settings(max_examples=30, **GAME_SETTINGS)  # type: ignore[arg-type]
@given(
    players=st.integers(3, 6),
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 300),
    choices=st.integers(0, 2**32),
)
def test_clone_is_independent(players: int, seed: int, steps: int, choices: int) -> None:
    rng = random.Random(choices)
    game = Game(Rules(players, BidRestriction.DEALER_NOT_EQUAL), seed=seed)
    for _ in range(steps):
        if game.phase is Phase.DEAL:
            game.deal()
        else:
            assert game.to_act is not None
            game.apply(game.to_act, rng.choice(game.legal_actions()))
    key = game.state_key()
    views = [game.view(s) for s in range(players)]
    copy = game.clone()
    assert copy.state_key() == key
    play_out(copy, rng)
    assert copy.is_over
    assert game.state_key() == key
    assert [game.view(s) for s in range(players)] == views
    # and the original plays on exactly as a fresh copy taken now would
    twin = game.clone()
    seq_rng = random.Random(seed)
    a, b = game, twin
    while not a.is_over:
        if a.phase is Phase.DEAL:
            a.deal()
            b.deal()
            continue
        action = seq_rng.choice(a.legal_actions())
        seat = a.to_act
        assert seat is not None
        a.apply(seat, action)
        b.apply(seat, action)
    assert a.state_key() == b.state_key()


# -- pure functions against the references -----------------------------------------------------


def _draw_cards(draw: st.DrawFn, low: int, high: int) -> list[Card]:
    """Distinct physical cards from one deck."""
    k = draw(st.integers(low, high))
    return draw(st.permutations(list(FULL_DECK)))[:k]


@st.composite
def tricks(draw: st.DrawFn) -> tuple[list[Card], Suit | None]:
    plays = _draw_cards(draw, 3, 6)
    return plays, draw(st.none() | st.sampled_from(list(Suit)))


@settings(max_examples=400, **SETTINGS)  # type: ignore[arg-type]
@given(tricks())
def test_trick_winner_matches_reference(case: tuple[list[Card], Suit | None]) -> None:
    plays, trump = case
    assert trick_winner(plays, trump) == ref_winner(plays, trump)


@st.composite
def hand_and_trick(draw: st.DrawFn) -> tuple[list[Card], list[Card]]:
    cards = _draw_cards(draw, 1, 25)
    cut = draw(st.integers(1, len(cards)))
    hand = cards[:cut]
    trick = cards[cut:][: draw(st.integers(0, 5))]
    return hand, trick


@settings(max_examples=400, **SETTINGS)  # type: ignore[arg-type]
@given(hand_and_trick())
def test_legal_cards_matches_reference(case: tuple[list[Card], list[Card]]) -> None:
    hand, trick = case
    got = legal_cards(hand, trick)
    assert Counter(got) == ref_legal(hand, trick)
    assert got, "never empty"
    assert all(got.count(c) <= hand.count(c) for c in got)


@settings(max_examples=300, **SETTINGS)  # type: ignore[arg-type]
@given(
    players=st.integers(3, 6),
    restriction=restrictions,
    cards=st.integers(1, 20),
    dealer=st.integers(0, 5),
    data=st.data(),
)
def test_allowed_bids_matches_reference(
    players: int, restriction: BidRestriction, cards: int, dealer: int, data: st.DataObject
) -> None:
    dealer %= players
    bids: list[int | None] = [data.draw(st.integers(0, cards)) for _ in range(players)]
    bids[dealer] = None
    totals = data.draw(st.lists(st.integers(-60, 60), min_size=players, max_size=players))
    rules = Rules(players, restriction)
    for seat in range(players):
        got = allowed_bids(rules, cards, seat, dealer, bids, totals)
        assert got == ref_bids(restriction, cards, seat, dealer, bids, totals)
        assert got, "some bid is always allowed"
        assert len(got) >= cards  # at most one bid is forbidden


@settings(max_examples=300, **SETTINGS)  # type: ignore[arg-type]
@given(st.lists(st.integers(-5, 5).map(lambda x: x * 10), min_size=3, max_size=6))
def test_rank_totals(totals: list[int]) -> None:
    ranks = rank_totals(totals)
    assert ranks == ref_ranks(totals)
    assert min(ranks) == 1
    for a, ta in zip(ranks, totals, strict=True):
        for b, tb in zip(ranks, totals, strict=True):
            assert (a == b) == (ta == tb) and (a < b) == (ta > tb)


@given(st.integers(0, 20), st.integers(0, 20))
def test_score_matches_reference(bid: int, tricks_won: int) -> None:
    assert score(bid, tricks_won) == ref_score(bid, tricks_won)


def test_view_walker_finds_nested_cards() -> None:
    # the leak check is only as good as its walk over the view
    game = Game(Rules(3), seed=0)
    game.deal()
    while game.phase is not Phase.PLAY:
        assert game.to_act is not None
        game.apply(game.to_act, game.legal_actions()[0])
    v: SeatView = game.view(game.to_act or 0)
    assert Counter(cards_in(v)) >= Counter(v.hand)
    assert list(cards_in({"x": (1, [Card("5S")])})) == [Card("5S")]
