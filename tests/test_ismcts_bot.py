"""The information-set MCTS bot: legal play, reproducible for a seed, its
budget kept on an injected clock (no test here waits or measures real time),
and it decides from what its seat sees only."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from wizard_arena.local import play_local
from wizard_arena.rules import Bid, Game, Phase, Play, Rules, SeatView
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.ismcts import ISMCTSBot
from wizard_bots.sampling import SampledDeal, consistency_problem, game_from_view, sample_deal

from .positions import TickClock, heuristic_position, play_view, position


class RecordingISMCTS(ISMCTSBot):
    """Keeps every determinization the search draws, with the view it was for."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.drawn: list[tuple[SeatView, SampledDeal]] = []

    def _deals(
        self, view: SeatView, count: int, noise: Sequence[float] | None = None
    ) -> list[tuple[SampledDeal, int]]:
        deals = super()._deals(view, count, noise)
        self.drawn.extend((view, d) for d, _ in deals)
        return deals


def _positions(seed: int, players: int, every: int) -> list[Game]:
    """Heuristic games stopped where a seat is to act, every ``every`` decisions."""
    out = []
    for steps in range(5, 4 * 40, every):
        game = heuristic_position(seed, players, steps)
        if not game.is_over and game.to_act is not None and game.phase is not Phase.DEAL:
            out.append(game)
    return out


def _views(seed: int, players: int, every: int) -> list[SeatView]:
    return [g.view(g.to_act) for g in _positions(seed, players, every) if g.to_act is not None]


def _decide(bot: ISMCTSBot, view: SeatView) -> object:
    if view.phase is Phase.BID:
        return Bid(bot.bid(view))
    if view.phase is Phase.PLAY:
        return bot.play(view)
    return bot.choose_trump(view)


# -- legal play ---------------------------------------------------------------------


@pytest.mark.parametrize("tree_opponents", [True, False])
@pytest.mark.parametrize("players", [3, 5])
def test_every_decision_is_legal(players: int, tree_opponents: bool) -> None:
    for view in _views(players, players, 17):
        bot = ISMCTSBot(samples=6, seed=1, tree_opponents=tree_opponents)
        action = _decide(bot, view)
        if view.phase is Phase.BID:
            assert isinstance(action, Bid) and action.bid in view.legal_bids
        elif view.phase is Phase.PLAY:
            assert action in view.legal_cards
    result = play_local(  # a short game, up to the biggest hand at 5 players
        [ISMCTSBot(samples=4, seed=2, tree_opponents=tree_opponents)]
        + [HeuristicBot() for _ in range(players - 1)],
        Rules(players=players, hand_sizes=(1, 6, 12)),
        seed=players,
    )
    assert result.faults == []


# -- reproducible -----------------------------------------------------------------------


def test_a_fixed_seed_gives_the_same_game() -> None:
    def game() -> tuple[list[int], dict[str, int]]:
        bot = ISMCTSBot(samples=6, seed=7, bid_effort=2)
        rules = Rules(players=3, hand_sizes=(1, 7, 20))
        result = play_local([bot, HeuristicBot(), HeuristicBot()], rules, seed=3)
        assert result.faults == []
        return result.totals, dict(bot.stats)

    first, again = game(), game()
    assert first == again
    assert first[1]["iterations"] > 0 and first[1]["cut_short"] == 0


# -- the budget ----------------------------------------------------------------------


def test_fixed_work_does_exactly_its_iterations_bids_more() -> None:
    clock = TickClock(1.0)  # a very slow machine: it must not matter
    bot = ISMCTSBot(samples=9, seed=2, clock=clock)
    bot.play(play_view())
    assert bot.stats["iterations"] == 9 and bot.stats["cut_short"] == 0
    hands = ["W 13S 12H 4D", "2S 3S 4S 5S", "6S 7S 8S 9S", "2H 3H 4H 5H"]
    view = position(4, hands, "2D", dealer=3).view(0)  # seat 0 bids first
    bidder = ISMCTSBot(samples=5, seed=1, bid_effort=3, bid_inference=False)
    assert bidder.bid(view) in view.legal_bids
    assert bidder.stats["iterations"] == 15
    # a deal reused for 4 iterations: a quarter of the deals (rounded up)
    reusing = ISMCTSBot(samples=10, seed=2, reuse=4, bid_inference=False)
    reusing.play(play_view())
    assert reusing.stats["iterations"] == 10 and reusing.stats["deals"] == 3


@pytest.mark.parametrize("think_time, time_left", [(0.2, None), (10.0, 0.5)])
def test_a_timed_search_stops_at_its_deadline(think_time: float, time_left: float | None) -> None:
    clock = TickClock(0.001)
    bot = ISMCTSBot(think_time=think_time, seed=1, clock=clock)
    view = play_view().with_time_left(time_left)
    allowed = bot.budget(view).seconds
    clock.now = 0.0
    assert bot.play(view) in view.legal_cards
    # read before every iteration: it ends at the first read past the deadline
    assert allowed <= clock.now <= allowed + 0.002
    assert bot.stats["iterations"] >= 10


# (cut short by the referee's deadline, and no time left at all: in
# tests/test_search_bot.py, for both search bots)


# -- what the bot sees ----------------------------------------------------------------


def test_every_determinization_fits_the_view() -> None:
    bot = RecordingISMCTS(samples=8, seed=3)
    rules = Rules(players=4, hidden_bids=True, reveal_bids_after_tricks=True, tricksy=True)
    assert play_local([bot, *(HeuristicBot() for _ in range(3))], rules, seed=9).faults == []
    assert len(bot.drawn) > 100
    for view, deal in bot.drawn:
        assert consistency_problem(view, deal) is None


def test_the_decision_depends_on_the_view_only() -> None:
    # the same view over different hidden cards: the same decision, the same work
    rng = random.Random(5)
    for game in _positions(11, 4, 23):
        assert game.to_act is not None
        view = game.view(game.to_act)
        other = game_from_view(view, sample_deal(view, rng).hands)
        # (the rebuilt game holds this round only: give it the scored ones)
        twin = dataclasses.replace(other.view(view.seat), results=view.results)
        assert twin == view
        assert other.hands != game.hands or len(view.hand) == 0
        a, b = ISMCTSBot(samples=6, seed=4), ISMCTSBot(samples=6, seed=4)
        assert _decide(a, view) == _decide(b, twin)
        assert a.stats == b.stats


def test_the_tree_counts_availability_and_visits() -> None:
    bot = ISMCTSBot(samples=60, seed=1)
    view = play_view()
    bot.play(view)
    root = bot.last_tree
    assert root is not None
    # every iteration passes through one of the root's actions; the bot's own
    # cards are known, so each is available at every selection (after the
    # first len(cards) iterations, which expand them)
    cards = list(dict.fromkeys(Play(c) for c in view.legal_cards))
    assert list(root.children) == [a for a in root.children if a in cards]
    assert set(root.children) == set(cards)
    assert sum(c.visits for c in root.children.values()) == 60
    assert all(c.avail == 60 - len(cards) for c in root.children.values())
    stack = list(root.children.values())
    while stack:
        node = stack.pop()
        kids = list(node.children.values())
        # a node is passed through at most once per visit; a child is
        # available whenever it is selected (not when it is expanded; the
        # other seats' bids are the heuristic's, not selected)
        assert sum(k.visits for k in kids) <= node.visits
        for key, k in node.children.items():
            assert k.visits >= 1
            if isinstance(key, Play) or k.seat == view.seat:  # chosen by UCB1
                assert k.visits <= k.avail + 1
        stack.extend(kids)
