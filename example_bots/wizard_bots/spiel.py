"""OpenSpiel's own ISMCTS at the arena's table: ``SpielISMCTSBot``.

The bot plays Wizard through OpenSpiel's game API: Wizard registered as the
OpenSpiel game ``python_wizard`` (:mod:`wizard_arena.rl.openspiel`), searched
by OpenSpiel's Python ``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``,
Cowling, Powley and Whitehouse's information-set MCTS) with OpenSpiel's
random-rollout evaluator. Only the two things a Python game cannot give
OpenSpiel come from here:

- **The root**: the seat's :class:`~wizard_arena.rules.SeatView` is all the
  bot is given; the hidden hands of the state it searches from are one deal
  drawn by the project's sampler (:func:`wizard_bots.sampling.sample_deals`:
  hands that fit what every seat has shown, weighed by how well they explain
  the bids made), rebuilt as a rules-core game in the view's position
  (:func:`~wizard_bots.sampling.game_from_view`) and wrapped by
  :func:`~wizard_arena.rl.openspiel.state_at`. With hidden bids, where the
  referee asks every seat still to bid and the game has them bid in turn,
  the seats before this one bid the heuristic's bid for their sampled hands
  (bids this seat cannot see).
- **The resampler** (``ISMCTSBot.set_resampler``; OpenSpiel's C++ ISMCTS
  calls ``ResampleFromInfostate``, which Python games lack): every simulation
  starts from another such deal, drawn from the view of the player to act,
  never from the hidden cards of the state it is handed.

The search ends when the current round is scored (the state's
``last_round``): its returns are the round's points, and later rounds, dealt
anew, would only add noise. A plain MCTS (``open_spiel.python.algorithms.mcts``)
would search the state's true hidden hands: no fair bot at a table.

``simulations`` per decision (reproducible: the bot draws from the referee's
seed for each game, or from ``seed``), ``uct_c`` (UCT's constant, in points
of a round), ``rollouts`` per leaf. It needs the ``open_spiel`` extra.

>>> from wizard_arena.local import play_local
>>> from wizard_arena.rules import Rules
>>> from wizard_bots.heuristic import HeuristicBot
>>> bots = [SpielISMCTSBot(simulations=8, seed=1), HeuristicBot(), HeuristicBot()]
>>> play_local(bots, Rules(players=3, hand_sizes=(1, 3)), seed=4).faults
[]
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot, GameInfo
from wizard_arena.extras import require
from wizard_arena.rules import Action, Bid, ChooseTrump, Phase, Play, Rules
from wizard_bots.budget import Budget
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.montecarlo import assumed_bids, bid_likelihood, heuristic_bid
from wizard_bots.sampling import SampledDeal, game_from_view, sample_deals

require("open_spiel", "wizard_bots.spiel (OpenSpiel's ISMCTS at the table)")
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from wizard_arena.rl.encoding import action_id, action_of  # noqa: E402
from wizard_arena.rl.openspiel import (  # noqa: E402
    SHORT_NAME,
    WizardGame,
    WizardState,
    parameters_of,
    state_at,
)

__all__ = ["SpielISMCTSBot", "spiel_game"]

_GAMES: dict[Rules, WizardGame] = {}


def spiel_game(rules: Rules) -> WizardGame:
    """The OpenSpiel game of ``rules`` (loaded once)."""
    import pyspiel

    game = _GAMES.get(rules)
    if game is None:
        game = _GAMES[rules] = pyspiel.load_game(SHORT_NAME, parameters_of(rules))
    return game


class _TimedISMCTS(ismcts.ISMCTSBot):  # type: ignore[misc]
    """OpenSpiel's ISMCTS stopping its simulations at ``deadline`` (on
    ``clock``; after one at least), so that a decision keeps to the referee's
    clock: OpenSpiel's runs its ``max_simulations`` whatever they take."""

    def __init__(self, *args: Any, deadline: float, clock: Callable[[], float], **kw: Any):
        super().__init__(*args, **kw)
        self.deadline = deadline
        self.clock = clock
        self.ran = 0

    def run_search(self, state: Any) -> Any:
        """OpenSpiel's ``run_search`` (ismcts.py), its loop of simulations
        stopped at the deadline."""
        self.reset()
        legal_actions = state.legal_actions()
        if len(legal_actions) == 1:
            return [(legal_actions[0], 1.0)]
        self._root_node = self.create_new_node(state)
        for _ in range(self._max_simulations):
            if self.ran and self.clock() >= self.deadline:
                break
            self.run_simulation(self.sample_root_state(state))
            self.ran += 1
        node = self._root_node
        if self._allow_inconsistent_action_sets:
            node = self.filter_illegals(node, state.legal_actions())
        return self.get_final_policy(state, node)


class SpielISMCTSBot(Bot):
    """OpenSpiel's ISMCTS over the project's deal sampler (see the module).
    ``simulations`` a decision at most, fewer when the referee's clock
    (``view.time_left``) would not allow them: the search stops at the
    share of the time left that the example bots' budget gives a decision."""

    name = "spiel-ismcts"

    def __init__(
        self,
        simulations: int = 100,
        uct_c: float = 40.0,
        rollouts: int = 1,
        seed: int | None = None,
    ) -> None:
        if simulations < 1 or rollouts < 1:
            raise ValueError("simulations and rollouts must be at least 1")
        self.simulations = simulations
        self.uct_c = uct_c
        self.rollouts = rollouts
        self.seed = seed
        self.rng = random.Random(seed)
        self._heuristic = HeuristicBot()
        self.stats = {"searches": 0, "simulations": 0, "resampled": 0}
        #: The clock of the decisions' budgets (a test may give another).
        self.clock: Callable[[], float] = time.monotonic

    def on_game_start(self, info: GameInfo) -> None:
        if self.seed is None:
            self.rng = info.rng  # the referee's seed for this game and seat

    def bid(self, view: SeatView) -> int:
        if not view.hand:  # a blind first round: nothing to sample from
            return self._heuristic.bid(view)
        action = self._search(view)
        assert isinstance(action, Bid)
        return action.bid

    def play(self, view: SeatView) -> Card:
        action = self._search(view)
        assert isinstance(action, Play)
        return action.card

    def choose_trump(self, view: SeatView) -> Suit:
        if not view.hand:
            return self._heuristic.choose_trump(view)
        action = self._search(view)
        assert isinstance(action, ChooseTrump)
        return action.suit

    # -- the search ---------------------------------------------------------------------------

    def _search(self, view: SeatView) -> Action:
        legal = list(dict.fromkeys(view.legal_actions))
        if len(legal) == 1:
            return legal[0]
        game = spiel_game(view.rules)
        deals = self._deals(view, self.simulations + 1)
        root = self.root(view, deals.pop(), game)
        np_rng = np.random.RandomState(self.rng.getrandbits(32))
        evaluator = mcts.RandomRolloutEvaluator(self.rollouts, np_rng)
        budget = Budget.start(self.clock, think_time=None, samples=None, time_left=view.time_left)
        search = _TimedISMCTS(
            game,
            evaluator,
            self.uct_c,
            self.simulations,
            random_state=np_rng,
            use_observation_string=True,  # the game offers no information state
            deadline=budget.deadline,
            clock=self.clock,
        )
        search.set_resampler(partial(self.resample, deals=deals, game=game))
        self.stats["searches"] += 1
        chosen = action_of(int(search.step(root)))
        self.stats["simulations"] += search.ran
        assert action_id(chosen) in {action_id(a) for a in legal}
        return chosen

    def _deals(self, view: SeatView, count: int) -> list[SampledDeal]:
        """``count`` deals for ``view`` (the project's sampler, weighed by the bids)."""
        weigh = bid_likelihood if any(b is not None for b in view.bids) else None
        out: list[SampledDeal] = []
        for deal, k in sample_deals(view, self.rng, count, weigh):
            out += [deal] * k
        self.rng.shuffle(out)
        return out

    @staticmethod
    def root(view: SeatView, deal: SampledDeal, game: WizardGame) -> WizardState:
        """The OpenSpiel state in ``view``'s position with ``deal``'s hidden
        hands, ending when the round is scored."""
        position = game_from_view(view, deal.hands, bids=assumed_bids(view, deal))
        # with hidden bids the referee asks every seat still to bid, the game
        # bids in order: the seats before this one bid (unseen) the heuristic's bid
        while position.phase is Phase.BID and position.acting[0] != view.seat:
            seat = position.acting[0]
            position.bid(seat, heuristic_bid(position, seat))
        return state_at(game, position, last_round=view.round)

    def resample(
        self, state: WizardState, player: int, *, deals: list[SampledDeal], game: WizardGame
    ) -> WizardState:
        """ISMCTS's resampler: a state ``player`` cannot tell from ``state``,
        from ``player``'s view alone (the next of the decision's deals, or a
        fresh one)."""
        view = state.view(player)
        deal = deals.pop() if deals else self._deals(view, 1)[0]
        self.stats["resampled"] += 1
        return self.root(view, deal, game)

    def __repr__(self) -> str:
        return f"SpielISMCTSBot(simulations={self.simulations}, uct_c={self.uct_c})"
