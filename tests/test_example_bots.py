"""The example bots: fault-free games, heuristic decisions, the Monte Carlo
sampler and search, and a duplicate match (heuristic against random)."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wizard_arena.bot import Bot
from wizard_arena.local import play_local
from wizard_arena.rules import (
    Bid,
    Card,
    Game,
    Phase,
    Rules,
    SeatView,
    Suit,
    parse_cards,
)
from wizard_bots.heuristic import HeuristicBot, estimate_tricks
from wizard_bots.montecarlo import MonteCarloBot, bid_likelihood, play_out_round
from wizard_bots.random_bot import RandomBot
from wizard_bots.sampling import SampledDeal, game_from_view, hidden_hand_sizes, sample_deal

from .positions import position

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS


# -- full games -------------------------------------------------------------------


def _bots(kind: str, players: int) -> list[Bot]:
    if kind == "random":
        return [RandomBot(seed=s) for s in range(players)]
    if kind == "heuristic":
        return [HeuristicBot() for _ in range(players)]
    # one Monte Carlo seat among heuristics keeps the test fast
    return [MonteCarloBot(samples=1, seed=3), *(HeuristicBot() for _ in range(players - 1))]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("kind", ["random", "heuristic", "montecarlo"])
def test_full_games_without_faults(kind: str, players: int) -> None:
    result = play_local(_bots(kind, players), Rules(players=players), seed=100 + players)
    assert result.faults == []
    assert len(result.results) == Rules(players=players).rounds


# -- heuristic decisions ----------------------------------------------------------


def _bid_view(hand: str, turned: str, players: int = 4) -> SeatView:
    """The first bidder's view in a round dealt ``hand`` (others get the lowest cards left)."""
    mine = parse_cards(hand)
    rest = Counter(
        c for c in parse_cards(" ".join(f"{r}{s}" for s in "SHDC" for r in range(1, 14)))
    )
    rest.subtract(mine)
    rest[Card(turned)] -= 1
    pool = [c for c in sorted(rest.elements()) if c not in mine]
    size = len(mine)
    hands = [mine] + [pool[k * size : (k + 1) * size] for k in range(players - 1)]
    game = Game(Rules(players=players), first_dealer=players - 1)
    game.round = size - 1
    game.deal(hands, Card(turned))
    assert game.to_act == 0
    return game.view(0)


def test_heuristic_bids_high_with_wizards_and_top_trumps() -> None:
    view = _bid_view("W W W W 13H 12H", "2H")
    assert HeuristicBot().bid(view) >= 5
    assert estimate_tricks(view.hand, H, 4, view.turned_card) >= 5


def test_heuristic_bids_zero_without_honors() -> None:
    view = _bid_view("2S 3S 2D 4C 3C J", "13H")
    assert HeuristicBot().bid(view) == 0


def test_heuristic_bid_grows_with_strength() -> None:
    weak = estimate_tricks(parse_cards("2S 3D 4C 5S"), H, 4, Card("9H"))
    mid = estimate_tricks(parse_cards("13S 3D 4C 12H"), H, 4, Card("9H"))
    strong = estimate_tricks(parse_cards("W 13S 13H 12H"), H, 4, Card("9H"))
    assert weak < mid < strong


def test_heuristic_lowers_its_bid_when_the_others_bid_high() -> None:
    hand = parse_cards("13S 12D 11H 7C 8C")
    free = estimate_tricks(hand, H, 4, Card("2H"), [], 2)
    crowded = estimate_tricks(hand, H, 4, Card("2H"), [4, 3], 2)
    assert crowded < free


def test_heuristic_ducks_once_its_bid_is_made() -> None:
    # round 4, trump clubs, seat 0 leads; seat 0 bids 1 and takes trick 1 with the Wizard
    hands = ["W 3S 13H 2H", "5S 9S 5D 6D", "6S 7S 3D 4D", "8S 11S 10H 7D"]
    game = position(4, hands, "2C", bids=[1, 0, 0, 1], dealer=3)
    for text in ["W", "5S", "6S", "8S", "3S", "9S", "7S", "11S", "10H"]:
        game.play(game.to_act, Card(text))  # type: ignore[arg-type]
    assert game.tricks_won[0] == 1 and game.to_act == 0
    # seat 0 has made its bid: it ducks under the 10H rather than win with the King
    assert HeuristicBot().play(game.view(0)) == Card("2H")
    # the same position, but seat 0 still needs a trick: it takes this one
    game = position(4, hands, "2C", bids=[2, 0, 0, 1], dealer=3)
    for text in ["W", "5S", "6S", "8S", "3S", "9S", "7S", "11S", "10H"]:
        game.play(game.to_act, Card(text))  # type: ignore[arg-type]
    assert HeuristicBot().play(game.view(0)) == Card("13H")


def test_heuristic_leads_low_once_its_bid_is_made() -> None:
    # round 3, trump clubs, seat 1 leads, bids 1 and takes trick 1 with the Wizard
    game = position(4, ["2D 3D 4D", "W 13H 2H", "5D 6D 10H", "7D 8D 9H"], "2C", bids=[1, 1, 0, 1])
    for text in ["W", "5D", "7D", "2D"]:
        game.play(game.to_act, Card(text))  # type: ignore[arg-type]
    assert game.tricks_won[1] == 1 and game.to_act == 1
    assert HeuristicBot().play(game.view(1)) == Card("2H")


def test_heuristic_plays_highest_loser_and_cheapest_winner() -> None:
    # 4 players, round 3, trump clubs; seat 1 leads 13H
    hands = ["2S 12H 11H", "13H 3S 4S", "5H 5S 6S", "6H 7S 8S"]
    # seat 0 is the dealer; order of bids and play: 1, 2, 3, 0
    game = position(4, hands, "2C", bids=[1, 0, 1, 0])
    for text in ["13H", "5H", "6H"]:
        game.play(game.to_act, Card(text))  # type: ignore[arg-type]
    # seat 0 bid 0: both hearts lose to 13H; it sheds the higher one
    assert HeuristicBot().play(game.view(0)) == Card("12H")

    game = position(4, ["2S 12H 11H", "10H 3S 4S", "5H 5S 6S", "6H 7S 8S"], "2C", bids=[0, 0, 0, 1])
    for text in ["10H", "5H", "6H"]:
        game.play(game.to_act, Card(text))  # type: ignore[arg-type]
    # seat 0 wants a trick and plays last: the lowest winning card
    assert HeuristicBot().play(game.view(0)) == Card("11H")


def test_heuristic_takes_a_trick_it_needs_with_a_sure_card() -> None:
    hands = ["2S 3S 4S", "5H W 13D", "5S 6S 7S", "8S 9S 10S"]
    game = position(4, hands, "2C", bids=[0, 1, 0, 0], dealer=3)  # seat 0 leads
    game.play(0, Card("2S"))
    # seat 1 is void in spades and needs one trick; three seats follow it
    assert HeuristicBot().play(game.view(1)) == Card("W")


def test_heuristic_is_deterministic() -> None:
    a = play_local([HeuristicBot() for _ in range(4)], seed=9, hooks=False)
    b = play_local([HeuristicBot() for _ in range(4)], seed=9, hooks=False)
    assert a.events == b.events


# -- sampling ---------------------------------------------------------------------


def _random_position(seed: int, players: int, steps: int) -> Game:
    rng = random.Random(seed)
    game = Game(Rules(players=players), seed=seed)
    game.deal()
    for _ in range(steps):
        if game.is_over:
            break
        if game.phase is Phase.DEAL:
            game.deal()
        game.apply(game.to_act, rng.choice(game.legal_actions()))  # type: ignore[arg-type]
    if game.phase is Phase.DEAL:
        game.deal()
    return game


def _check_deal(view: SeatView, deal: SampledDeal) -> None:
    n = view.players
    sizes = hidden_hand_sizes(view)
    assert [len(h) for h in deal.hands] == sizes
    assert deal.hands[view.seat] == view.hand
    hidden = Counter(c for s, h in enumerate(deal.hands) if s != view.seat for c in h)
    hidden.update(deal.stock)
    assert hidden == Counter(view.unseen_cards())  # only (and all) unseen cards
    voids = view.known_voids()
    for seat in range(n):
        if seat != view.seat:
            assert not {c.suit for c in deal.hands[seat]} & voids[seat]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    players=st.integers(3, 6),
    steps=st.integers(0, 260),
)
def test_sampler_respects_hand_sizes_voids_and_seen_cards(
    seed: int, players: int, steps: int
) -> None:
    game = _random_position(seed, players, steps)
    if game.is_over:
        return
    assert game.to_act is not None
    view = game.view(game.to_act)
    rng = random.Random(seed)
    for _ in range(10):
        deal = sample_deal(view, rng)
        _check_deal(view, deal)
        rebuilt = game_from_view(view, deal.hands)
        again = rebuilt.view(view.seat)
        for field in ("phase", "round", "dealer", "to_act", "hand", "trump", "bids", "leader"):
            assert getattr(again, field) == getattr(view, field), field
        assert again.trick == view.trick and again.tricks == view.tricks
        assert again.totals == view.totals and again.legal_actions == view.legal_actions
        # the rebuilt game plays on to the end of the round
        play_out_round(rebuilt, deal.stock)
        assert rebuilt.phase in (Phase.DEAL, Phase.GAME_OVER)


def test_sampler_with_many_voids_late_in_a_round() -> None:
    # the real hands always fit; the sampler finds deals among few possibilities
    found = 0
    for seed in range(200):
        game = _random_position(seed, 3, 20 * 21 // 2 * 3 - 8)  # deep into the last rounds
        if game.is_over or game.phase is not Phase.PLAY:
            continue
        assert game.to_act is not None
        view = game.view(game.to_act)
        if sum(len(v) for v in view.known_voids().values()) < 3:
            continue
        found += 1
        for k in range(5):
            _check_deal(view, sample_deal(view, random.Random(k)))
    assert found >= 5


def test_sampler_is_uniform_over_a_single_constraint() -> None:
    # round 2, 3 players: seat 0 leads 2S, seat 1 shows a void in spades; seat 2 samples
    game = position(3, ["2S 3H", "4D 5H", "6S 7H"], "8D", bids=[0, 0, 0], dealer=2)
    game.play(0, Card("2S"))
    game.play(1, Card("5H"))
    view = game.view(2)
    assert view.known_voids()[1] == {S}
    unseen = view.unseen_cards()
    spades = sum(1 for c in unseen if c.suit is S)
    sizes = hidden_hand_sizes(view)
    # uniform over the valid deals: seat 0 and the stock share the spades by their
    # sizes, so seat 0's one card is a spade with chance spades / (unseen - seat 1's)
    p = sizes[0] * spades / (len(unseen) - sizes[1])
    rng = random.Random(1)
    trials = 4000
    hits = 0
    for _ in range(trials):
        deal = sample_deal(view, rng)
        assert all(c.suit is not S for c in deal.hands[1])
        hits += sum(1 for c in deal.hands[0] if c.suit is S)
    sd = (trials * p * (1 - p)) ** 0.5
    assert abs(hits - trials * p) < 4 * sd


def test_bid_likelihood_prefers_deals_that_fit_the_bids() -> None:
    game = position(3, ["W W 13H", "2S 3S 4S", "5S 6S 7S"], "8D", bids=[3], dealer=2)
    view = game.view(1)  # seat 1 saw seat 0 bid 3
    strong = SampledDeal(
        (tuple(parse_cards("W W 13H")), view.hand, tuple(parse_cards("5S 6S 7S"))), ()
    )
    weak = SampledDeal(
        (tuple(parse_cards("2H 3H 5C")), view.hand, tuple(parse_cards("5S 6S 7S"))), ()
    )
    assert bid_likelihood(view, strong) > 5 * bid_likelihood(view, weak)


# -- Monte Carlo search -------------------------------------------------------------


def test_montecarlo_with_fixed_samples_is_deterministic() -> None:
    def run() -> list[object]:
        bots = [MonteCarloBot(samples=2, seed=11), *(HeuristicBot() for _ in range(5))]
        return play_local(bots, Rules(players=6), seed=5, hooks=False).events

    assert run() == run()


def test_montecarlo_decision_is_reproducible_and_legal() -> None:
    game = _random_position(7, 4, 40)
    while game.phase is not Phase.PLAY:
        game.apply(game.to_act, game.legal_actions()[0])  # type: ignore[arg-type]
    assert game.to_act is not None
    view = game.view(game.to_act)
    a = MonteCarloBot(samples=4, seed=2).play(view)
    b = MonteCarloBot(samples=4, seed=2).play(view)
    assert a == b and a in view.legal_cards


def test_montecarlo_bids_what_it_can_make() -> None:
    view = _bid_view("W W W 13H 12H", "2H")
    bid = MonteCarloBot(samples=6, seed=1).bid(view)
    assert Bid(bid) in view.legal_actions and bid >= 4


def test_montecarlo_think_time_bounds_a_decision() -> None:
    # on an injected clock that moves 1 ms each time it is read (never real time)
    now = [0.0]

    def clock() -> float:
        now[0] += 0.001
        return now[0]

    view = _bid_view("W 13S 12H 4D 9C 8C 2S", "2H")
    bot = MonteCarloBot(think_time=0.05, seed=1, clock=clock)
    bot.bid(view)
    assert 0.05 <= now[0] <= 0.05 + 0.0025
    assert bot.stats["deals"] >= 1


def test_montecarlo_needs_an_effort() -> None:
    with pytest.raises(ValueError):
        MonteCarloBot(think_time=None, samples=None)


# -- duplicate match ----------------------------------------------------------------


def test_heuristic_beats_random_in_duplicate_games() -> None:
    """6 deals x 4 rotations of heuristic, random, heuristic, random = 24 games."""
    diffs = []
    for deal in range(6):
        by_kind: dict[str, list[int]] = {"heuristic": [], "random": []}
        for rot in range(4):
            kinds = ["heuristic" if (seat + rot) % 2 == 0 else "random" for seat in range(4)]
            bots: list[Bot] = [
                HeuristicBot() if k == "heuristic" else RandomBot(seed=deal * 10 + seat)
                for seat, k in enumerate(kinds)
            ]
            result = play_local(bots, Rules(players=4), seed=1000 + deal, hooks=False)
            assert result.faults == []
            for k, total in zip(kinds, result.totals, strict=True):
                by_kind[k].append(total)
        diffs.append(statistics.fmean(by_kind["heuristic"]) - statistics.fmean(by_kind["random"]))
    # the measured margin is about 500 points a game; every deal must show a clear one
    assert min(diffs) > 150
    assert statistics.fmean(diffs) > 300


# -- the rule forms: suited Wizards, bids hidden until the tricks are played -------------


def test_heuristic_counts_suited_wizards_as_wizards() -> None:
    from wizard_arena.rules import WIZARD
    from wizard_bots.heuristic import card_counts, count_slot

    assert count_slot(Card("WH")) == count_slot(Card("W")) == WIZARD.index
    assert card_counts(parse_cards("WS WH W 2C"))[WIZARD.index] == 3
    plain = estimate_tricks(parse_cards("W 2C 9D"), H, 4, Card("5S"))
    assert estimate_tricks(parse_cards("WH 2C 9D"), H, 4, Card("5S")) == plain
    assert estimate_tricks(parse_cards("W 2C 9D"), H, 4, Card("WS")) == estimate_tricks(
        parse_cards("W 2C 9D"), H, 4, Card("W")
    )


def test_heuristic_assumes_a_hidden_bidder_still_wants_a_trick() -> None:
    from wizard_bots.heuristic import still_to_play

    rules = Rules(players=3, hidden_bids=True, reveal_bids_after_tricks=True)
    game = Game.at_round(rules, 2, dealer=2, totals=[0, 0, 0])
    game.deal([parse_cards("2S 3S"), parse_cards("4S 5S"), parse_cards("6S 7S")], Card("8D"))
    for seat, bid in [(0, 1), (1, 0), (2, 0)]:
        game.bid(seat, bid)
    game.play(0, Card("2S"))
    view = game.view(1)
    assert view.bids == (None, 0, None)  # its own bid only, while the tricks are played
    (seat2,) = still_to_play(view)
    assert seat2.need == 1  # seat 2 bid 0, but seat 1 cannot know it
    assert HeuristicBot().play(view) in view.legal_cards
