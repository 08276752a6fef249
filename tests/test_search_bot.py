"""The Monte Carlo bot's sampling of hidden cards (consistent with everything
each seat has shown, weighed by the bids) and its time budget, kept on an
injected clock (no test here waits or measures real time)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wizard_arena.rules import Bid, Card, Game, Phase, Rules, SeatView, Suit
from wizard_bots.budget import Budget
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.ismcts import ISMCTSBot
from wizard_bots.montecarlo import MonteCarloBot, bid_likelihood
from wizard_bots.sampling import SampledDeal, consistency_problem, sample_deal, sample_deals

from .positions import TickClock, heuristic_position, play_view, position

# -- sampling -----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(3, 6), steps=st.integers(0, 300))
def test_weighted_deals_fit_what_every_seat_has_shown(seed: int, players: int, steps: int) -> None:
    game = heuristic_position(seed, players, steps)
    if game.is_over or game.to_act is None:
        return
    view = game.view(game.to_act)
    deals = sample_deals(view, random.Random(seed), 6, bid_likelihood, pool_factor=2)
    assert sum(k for _, k in deals) == 6
    voids = view.known_voids()
    for deal, _ in deals:
        assert consistency_problem(view, deal) is None
        for seat in range(players):
            if seat != view.seat:
                # never a card the seat has shown it cannot hold: one seen
                # (played, turned, in the viewer's hand) or of a suit it is out of
                seen = {c for _, c in view.plays} | set(view.hand)
                assert not set(deal.hands[seat]) & (seen - set(view.unseen_cards()))
                assert not {c.suit for c in deal.hands[seat]} & voids[seat]


def _void_view() -> SeatView:
    # round 3, 4 players: seat 1 leads 2S; seat 2 discards a heart (out of
    # spades), seat 3 plays a Jester (shows nothing); seat 0 is to play
    game = position(
        4,
        ["3S 9S 4H", "2S 5D 6D", "7H 8H 9H", "J 10C 11C"],
        "13D",
        bids=[0, 1, 0, 1],
        dealer=0,
    )
    game.play(1, Card("2S"))
    game.play(2, Card("7H"))
    game.play(3, Card("J"))
    return game.view(0)


def test_a_seat_void_in_a_suit_never_gets_that_suit() -> None:
    view = _void_view()
    assert view.known_voids()[2] == {Suit.SPADES} and not view.known_voids()[3]
    rng = random.Random(4)
    spades_to_3 = 0
    for _ in range(500):
        deal = sample_deal(view, rng)
        assert consistency_problem(view, deal) is None
        assert all(c.suit is not Suit.SPADES for c in deal.hands[2])
        spades_to_3 += sum(1 for c in deal.hands[3] if c.suit is Suit.SPADES)
    assert spades_to_3 > 0  # a Jester on a spade lead is no void


def test_the_consistency_check_names_what_a_deal_gets_wrong() -> None:
    view = _void_view()
    good = sample_deal(view, random.Random(0))
    hands = [list(h) for h in good.hands]
    stock = list(good.stock)
    # give seat 2 (out of spades) a spade from the stock, in place of one of its cards
    spade = next(c for c in stock if c.suit is Suit.SPADES)
    stock[stock.index(spade)] = hands[2][0]
    hands[2][0] = spade
    bad = SampledDeal(tuple(tuple(h) for h in hands), tuple(stock))
    assert "seat 2 is out of ['SPADES']" in (consistency_problem(view, bad) or "")
    # a card already played (seat 1's 2S) in a hidden hand
    hands = [list(h) for h in good.hands]
    hands[3][0] = Card("2S")
    seen = SampledDeal(tuple(tuple(h) for h in hands), good.stock)
    assert "already seen" in (consistency_problem(view, seen) or "")


def test_bid_weighting_prefers_deals_that_explain_the_bids() -> None:
    # seat 0 bid 3 of 3 tricks: deals that give it strong cards are drawn more often
    game = position(3, ["W W 13H", "2S 3S 4S", "5S 6S 7S"], "8D", bids=[3], dealer=2)
    view = game.view(1)
    rng = random.Random(2)

    def strength(deals: list[tuple[SampledDeal, int]]) -> float:
        return sum(k * sum(c.is_wizard for c in d.hands[0]) for d, k in deals) / 400

    weighted = strength(sample_deals(view, rng, 400, bid_likelihood))
    plain = strength(sample_deals(view, rng, 400))
    assert weighted > 2 * plain


def test_a_degenerate_pool_is_doubled_once() -> None:
    view = _void_view()
    calls: list[SampledDeal] = []

    def one_deal_counts(v: SeatView, deal: SampledDeal) -> float:
        calls.append(deal)
        return 1.0 if len(calls) == 1 else 1e-12

    deals = sample_deals(view, random.Random(1), 5, one_deal_counts, pool_factor=3)
    assert len(calls) == 2 * 5 * 3 and sum(k for _, k in deals) == 5
    even = sample_deals(view, random.Random(1), 5, lambda v, d: 1.0, pool_factor=3)
    assert sum(k for _, k in even) == 5


# -- the time budget, on an injected clock -------------------------------------------


def test_budget_takes_the_sooner_of_think_time_and_the_referees_share() -> None:
    clock = TickClock(0.0)
    assert Budget.start(clock, think_time=2.0, samples=None, time_left=None).seconds == 2.0
    b = Budget.start(clock, think_time=2.0, samples=None, time_left=1.0, share=0.5, margin=0.1)
    assert b.seconds == pytest.approx(0.4)
    fixed = Budget.start(clock, think_time=None, samples=6, time_left=None, scale=2.5)
    assert fixed.deals == 15 and not fixed.timed and fixed.seconds == math.inf
    assert Budget.start(clock, think_time=None, samples=6, time_left=0.01).seconds == 0.0


@pytest.mark.parametrize("think_time, time_left", [(0.2, None), (10.0, 0.5)])
def test_a_timed_search_stops_at_its_deadline(think_time: float, time_left: float | None) -> None:
    clock = TickClock(0.01)
    bot = MonteCarloBot(think_time=think_time, seed=1, clock=clock)
    view = play_view().with_time_left(time_left)
    allowed = bot.budget(view).seconds
    clock.now = 0.0
    card = bot.play(view)
    assert card in view.legal_cards
    # the last read of the clock is the one that found the deadline passed
    assert allowed - 0.01 <= clock.now <= allowed + 0.02
    assert bot.stats["deals"] >= 1


def test_fixed_work_does_exactly_its_deals_without_a_referee_deadline() -> None:
    clock = TickClock(1.0)  # a very slow machine: it must not matter
    bot = MonteCarloBot(samples=5, seed=2, clock=clock, bid_inference=False)
    view = play_view()
    bot.play(view)
    actions = len(dict.fromkeys(view.legal_cards))
    assert bot.stats["deals"] == 5 and bot.stats["rollouts"] == 5 * actions
    assert bot.stats["cut_short"] == 0


#: The search bots that keep the Monte Carlo bot's budget, and the stat that
#: counts each one's units of work (deals searched; rollouts played).
SEARCH_BOTS = pytest.mark.parametrize(
    ("bot_class", "unit", "rollouts"),
    [(MonteCarloBot, "deals", "rollouts"), (ISMCTSBot, "iterations", "iterations")],
    ids=["montecarlo", "ismcts"],
)


@SEARCH_BOTS
def test_fixed_work_is_cut_short_to_keep_the_referees_deadline(
    bot_class: type[MonteCarloBot], unit: str, rollouts: str
) -> None:
    clock = TickClock(0.01)
    bot = bot_class(samples=10_000, seed=2, clock=clock)
    view = play_view().with_time_left(0.3)  # 0.5 * 0.3 - 0.05 = 0.1 s
    clock.now = 0.0
    assert bot.play(view) in view.legal_cards
    assert clock.now <= 0.1 + 0.02 and bot.stats["cut_short"] == 1
    assert 1 <= bot.stats[unit] < 10_000


@SEARCH_BOTS
def test_no_time_left_means_the_heuristics_choice_at_once(
    bot_class: type[MonteCarloBot], unit: str, rollouts: str
) -> None:
    clock = TickClock(0.01)
    bot = bot_class(think_time=1.0, seed=2, clock=clock)
    view = play_view().with_time_left(0.05)  # within the margin
    assert bot.play(view) == HeuristicBot().play(view)
    assert bot.stats["searches"] == 0 and bot.stats[rollouts] == 0


def test_bids_get_more_work_than_cards() -> None:
    hands = ["W 13S 12H 4D", "2S 3S 4S 5S", "6S 7S 8S 9S", "2H 3H 4H 5H"]
    view = position(4, hands, "2D", dealer=3).view(0)  # seat 0 bids first
    assert Bid(1) in view.legal_actions
    bot = MonteCarloBot(samples=3, seed=1, bid_effort=4, bid_inference=False)
    bot.bid(view)
    assert bot.stats["deals"] == 12


# -- seats that act at random --------------------------------------------------------


def test_noise_levels_tell_random_seats_from_sensible_ones() -> None:
    from wizard_arena.local import play_local
    from wizard_bots.opponents import noise_levels
    from wizard_bots.random_bot import RandomBot

    bots = [HeuristicBot(), RandomBot(seed=1), HeuristicBot(), RandomBot(seed=2)]
    result = play_local(bots, Rules(players=4), seed=9, hooks=False)
    game = Game.at_round(Rules(players=4), 15, dealer=0, totals=list(result.totals), seed=1)
    game.results = list(result.results)[:-1]  # the 14 rounds scored before the last
    game.deal()
    levels = noise_levels(game.view(0))
    assert levels[0] == 0.0 and levels[2] < 0.1
    assert levels[1] > 0.5 and levels[3] > 0.5


def test_a_random_bidders_bid_hardly_moves_the_deals() -> None:
    game = position(3, ["W W 13H", "2S 3S 4S", "5S 6S 7S"], "8D", bids=[3], dealer=2)
    view = game.view(1)
    strong = SampledDeal(
        (tuple(Card(t) for t in ("W", "W", "13H")), view.hand, game.view(2).hand), ()
    )
    weak = SampledDeal(
        (tuple(Card(t) for t in ("2H", "3H", "5C")), view.hand, game.view(2).hand), ()
    )
    assert bid_likelihood(view, strong) > 10 * bid_likelihood(view, weak)
    careless = [1.0, 0.0, 0.0]
    ratio = bid_likelihood(view, strong, careless) / bid_likelihood(view, weak, careless)
    assert ratio == pytest.approx(1.0)


def test_rollouts_with_noise_play_the_round_out_and_need_an_rng() -> None:
    from wizard_bots.montecarlo import play_out_round

    view = play_view()
    deal = sample_deal(view, random.Random(3))
    from wizard_bots.sampling import game_from_view

    quiet, same = game_from_view(view, deal.hands), game_from_view(view, deal.hands)
    play_out_round(quiet, deal.stock)
    play_out_round(same, deal.stock, noise=[0.0] * 4, rng=random.Random(1))
    assert quiet.results[-1] == same.results[-1]  # no noise: the heuristic's play
    wild = game_from_view(view, deal.hands)
    play_out_round(wild, deal.stock, noise=[1.0] * 4, rng=random.Random(1))
    assert wild.phase in (Phase.DEAL, Phase.GAME_OVER)
    with pytest.raises(ValueError):
        play_out_round(game_from_view(view, deal.hands), deal.stock, noise=[0.5] * 4)


@pytest.mark.parametrize("steps", [4 * 45 + 4 + 2, 2 * 45 + 4 + 1, 20 + 4])
def test_action_values_give_each_legal_card_a_value_and_play_takes_the_best(steps: int) -> None:
    """The teacher's labels of a learned player: one value per distinct legal
    card, and ``play`` plays the card valued highest (the same search, drawn
    from the same seed)."""
    game = heuristic_position(5, 4, steps)
    while game.phase is not Phase.PLAY or len(set(game.legal_actions())) < 2:
        seat = game.to_act
        assert seat is not None
        game.apply(seat, game.legal_actions()[0])
    assert game.to_act is not None
    view = game.view(game.to_act)
    values = MonteCarloBot(samples=4, seed=3).action_values(view)
    assert sorted(values, key=lambda c: c.index) == sorted(
        set(view.legal_cards), key=lambda c: c.index
    )
    assert all(math.isfinite(v) for v in values.values())
    best = max(values.values())
    played = MonteCarloBot(samples=4, seed=3).play(view)
    assert values[played] == best
    prior = HeuristicBot().play(view)
    if values[prior] == best:  # ties go to the heuristic's card
        assert played == prior


def test_action_values_of_a_forced_card_and_outside_play() -> None:
    view = play_view()
    game = position(3, ["5S", "7H", "9D"], "2C")
    game.bid(1, 0)
    game.bid(2, 0)
    game.bid(0, 1)
    forced = game.view(game.to_act or 0)
    bot = MonteCarloBot(samples=2, seed=1)
    assert bot.action_values(forced) == {forced.legal_cards[0]: 0.0}
    assert bot.stats["rollouts"] == 0  # nothing searched
    with pytest.raises(ValueError, match="card play"):
        bot.action_values(heuristic_position(1, 4, 0).view(1))
    assert len(bot.action_values(view)) == len(set(view.legal_cards))
