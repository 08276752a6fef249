"""Information-set Monte Carlo tree search (single-observer ISMCTS).

The Monte Carlo bot (:mod:`wizard_bots.montecarlo`) plays every sampled deal
out independently with the heuristic policy for every seat, its own later
decisions included. This bot instead grows **one search tree over its own
information set** (Cowling, Powley and Whitehouse 2012, "Information Set
Monte Carlo Tree Search", SO-ISMCTS):

- every iteration draws a fresh determinization of the hidden cards — the
  Monte Carlo bot's own sampler, :meth:`MonteCarloBot._deals
  <wizard_bots.montecarlo.MonteCarloBot._deals>` (hands that fit what every
  seat has shown, resampled by how well they explain the bids made) — and
  rebuilds it as a :class:`~wizard_arena.rules.Game` in the view's position
  (:func:`~wizard_bots.sampling.game_from_view`);
- it descends the tree in that game: a node stands for what the bot has
  observed so far, its children for the actions taken from it (the rules
  core's :meth:`~wizard_arena.rules.Game.legal_actions`); at a decision chosen
  by search, UCB1 picks among the children legal *in this determinization*,
  with the number of times each child was available (not the parent's
  visits) under the logarithm;
- at the first untried action it expands one node, plays the rest of the
  round out with the heuristic policy
  (:func:`~wizard_bots.montecarlo.play_out_round`) and credits every node on
  the path with the round's points of the seat that chose it.

Its own later cards are thus chosen by the statistics of every
determinization together (the bid is evaluated with the card play the search
itself will find), rather than by the heuristic. The other seats' cards and
trump choices are searched too (``tree_opponents``, each seat maximising its
own points: SO-ISMCTS proper), or played by the heuristic; their bids are the
heuristic's (within the tree, as observed outcomes when the rules show them).
Seats the opponent model finds random (:mod:`wizard_bots.opponents`) act at
random that often, in the tree and in the rollouts.

``samples`` is the number of iterations (determinizations) per decision,
``bid_effort`` multiplies it for bids, and the time budget is the Monte Carlo
bot's (:mod:`wizard_bots.budget`: the clock is read before every iteration).

Measured (docs/strength.md): at 48 iterations a decision and
``bid_effort=4`` its 4-player self-play bid accuracy is the Monte Carlo
bot's (65.6 ± 1.9% against 66.3 ± 3.0% on the same 20 games), at about
1.7 times its processor time; it beats the heuristic at a table with
random bots.

>>> from wizard_arena.local import play_local
>>> from wizard_bots.heuristic import HeuristicBot
>>> bots = [ISMCTSBot(samples=8, seed=1), HeuristicBot(), HeuristicBot()]
>>> play_local(bots, seed=4).faults
[]
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from wizard_arena import Card, SeatView, Suit
from wizard_arena.rules import Action, Bid, ChooseTrump, Game, Phase, Play, suit_to_follow
from wizard_bots.budget import TIME_MARGIN, TIME_SHARE, Clock
from wizard_bots.heuristic import choose_trump_suit
from wizard_bots.montecarlo import (
    FIXED_BATCH,
    MonteCarloBot,
    assumed_bids,
    heuristic_bid,
    play_out_round,
)
from wizard_bots.sampling import game_from_view

__all__ = ["ISMCTSBot"]

#: UCB1's exploration constant, for rewards scaled to about [-1, 1].
EXPLORATION = 0.7


class _Node:
    """What the observer has seen up to here; ``children`` by the action taken next."""

    __slots__ = ("avail", "children", "seat", "total", "visits")

    def __init__(self, seat: int = -1) -> None:
        self.seat = seat
        """The seat whose action led here (-1: the root)."""
        self.children: dict[object, _Node] = {}
        self.visits = 0
        self.avail = 0
        self.total = 0.0
        """Sum of the rewards of the seat whose action led here."""

    def ucb(self, c: float) -> float:
        return self.total / self.visits + c * math.sqrt(math.log(self.avail) / self.visits)


class ISMCTSBot(MonteCarloBot):
    """Chooses each action by single-observer information-set MCTS (see the module).

    ``samples`` (iterations per decision; reproducible with a seed) or
    ``think_time``, ``bid_effort``, ``bid_window`` (candidate bids within it of
    the heuristic's, for every bid searched), the bid weighting of the
    determinizations, the opponent model and the time budget are the Monte
    Carlo bot's. ``exploration`` is UCB1's constant; ``tree_opponents``
    searches the other seats' cards and trump choices in the tree (each for
    its own points) instead of playing them with the heuristic.
    ``widening`` (0: off) lets a node below the root try a new action only
    while it has fewer than ``widening * sqrt(visits)`` children (progressive
    widening; the heuristic's action is always tried first), so that a small
    budget is not spent trying every card once at every node. ``reuse``
    runs that many iterations on each determinization drawn (drawing and
    weighing deals costs more than an iteration).
    """

    name = "ismcts"

    def __init__(
        self,
        think_time: float | None = 1.0,
        samples: int | None = None,
        seed: int | None = None,
        *,
        exploration: float = EXPLORATION,
        tree_opponents: bool = True,
        widening: float = 0.0,
        reuse: int = 1,
        bid_window: int = 2,
        bid_inference: bool = True,
        pool_factor: int = 4,
        bid_effort: float = 1.0,
        opponent_model: bool = True,
        time_share: float = TIME_SHARE,
        time_margin: float = TIME_MARGIN,
        clock: Clock = time.perf_counter,
    ) -> None:
        super().__init__(
            think_time,
            samples,
            seed,
            bid_window=bid_window,
            bid_inference=bid_inference,
            pool_factor=pool_factor,
            bid_effort=bid_effort,
            opponent_model=opponent_model,
            time_share=time_share,
            time_margin=time_margin,
            clock=clock,
        )
        if exploration < 0:
            raise ValueError("exploration must not be negative")
        self.exploration = exploration
        self.tree_opponents = tree_opponents
        if widening < 0:
            raise ValueError("widening must not be negative")
        self.widening = widening
        if reuse < 1:
            raise ValueError("reuse must be at least 1")
        self.reuse = reuse
        self.stats["iterations"] = 0
        self.stats["nodes"] = 0
        self.last_tree: _Node | None = None
        """The root of the last decision's tree (kept until the next search)."""

    def _search(
        self,
        view: SeatView,
        actions: Sequence[Action],
        prior: Action,
        scale: float = 1.0,
        steer: bool = False,
    ) -> Action:
        self.stats["decisions"] += 1
        budget = self.budget(view, scale)
        if len(actions) == 1:
            return actions[0]
        if budget.timed and budget.seconds <= 0.0:  # no time to think: the heuristic's
            self.stats["cut_short"] += 1
            return prior
        self.stats["searches"] += 1
        voids = view.known_voids()
        void_list = [voids[s] for s in range(view.players)]
        noise = self._noise(view)
        root = self.last_tree = _Node()
        target = budget.deals if budget.deals is not None else 1_000_000
        batch = 4 if budget.deals is None else min(target, FIXED_BATCH)
        done = 0
        stopped = False
        reuse = self.reuse
        while done < target and not stopped:
            want = -(-min(batch, target - done) // reuse)  # deals, each for `reuse` iterations
            for deal, mult in self._deals(view, want, noise):
                base = game_from_view(
                    view, deal.hands, rng=self._sim_rng, bids=assumed_bids(view, deal)
                )
                self.stats["deals"] += 1
                # a deal drawn k times: k * reuse iterations on it
                for _ in range(mult * reuse):
                    if done >= target:
                        break
                    if budget.out_of_time():
                        stopped = True
                        break
                    game = base.clone(rng=self._sim_rng)
                    self._iterate(
                        root, game, view.seat, actions, prior, deal.stock, void_list, noise
                    )
                    done += 1
                if stopped or done >= target:
                    break
        if budget.deals is not None and done < budget.deals:
            self.stats["cut_short"] += 1
        tried = [(a, root.children[a]) for a in actions if a in root.children]
        if not tried:
            return prior
        # the most visited; ties: the better mean, then the heuristic's choice
        best = max(
            tried,
            key=lambda t: (t[1].visits, t[1].total / t[1].visits, t[0] == prior),
        )
        return best[0]

    # -- one iteration ---------------------------------------------------------------

    def _iterate(
        self,
        root: _Node,
        game: Game,
        me: int,
        root_actions: Sequence[Action],
        prior: Action,
        stock: Sequence[Card],
        voids: Sequence[AbstractSet[Suit]],
        noise: Sequence[float] | None,
    ) -> None:
        """Select and expand in ``game`` (a fresh determinization), play out, back up."""
        rng = self.rng
        known = [set(v) for v in voids]
        rnd = game.round
        node = root
        path: list[_Node] = []
        expanded = False
        while not expanded and game.round == rnd and game.acting:
            # the root is the observer's decision (with hidden bids it need
            # not be the first seat still to bid)
            seat = me if node is root else game.acting[0]
            phase = game.phase
            searched = seat == me or (self.tree_opponents and phase is not Phase.BID)
            action: Action
            if node is root:
                action, expanded = self._select(node, root_actions, prior, rng)
            elif noise is not None and seat != me and rng.random() < noise[seat]:
                action = rng.choice(game.legal_actions(seat))
            elif searched:
                cands = self._candidates(game, seat)
                action, expanded = self._select(node, cands, None, rng, game, seat)
            else:
                action = self._policy(game, seat)
            if phase is Phase.PLAY:
                assert isinstance(action, Play)
                follow = suit_to_follow(game.trick)
                if follow is not None and action.card.suit not in (None, follow):
                    known[seat].add(follow)
            game.apply(seat, action)
            # an action the observer does not see (another seat's hidden bid)
            # leads to one node whatever it was
            hidden = phase is Phase.BID and seat != me and game.rules.hidden_bids
            key: object = ("hidden", seat) if hidden else action
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node(seat)
                self.stats["nodes"] += 1
            path.append(child)
            node = child
        if game.round == rnd and game.phase is not Phase.DEAL and not game.is_over:
            draw = random.Random(rng.getrandbits(32)) if noise is not None else None
            play_out_round(game, stock, known, noise, draw)
        points = game.results[-1].points
        scale = 10.0 * (game.cards + 2)
        for child in path:
            child.visits += 1
            child.total += points[child.seat] / scale
        self.stats["iterations"] += 1
        self.stats["rollouts"] += 1

    def _select(
        self,
        node: _Node,
        cands: Sequence[Action],
        prior: Action | None,
        rng: random.Random,
        game: Game | None = None,
        seat: int = -1,
    ) -> tuple[Action, bool]:
        """UCB1 over ``cands`` (the actions legal here), counting each child's
        availability; an untried action first (the heuristic's, if untried):
        then True, the tree grows by that node. With ``widening`` a node
        below the root has at most ``widening * sqrt(visits)`` children (at
        least one legal here)."""
        children = node.children
        untried = [a for a in cands if a not in children]
        tried = [a for a in cands if a in children]
        w = self.widening
        if untried and (
            not tried or node is self.last_tree or not w or len(children) < w * node.visits**0.5
        ):
            if prior is None and game is not None:
                prior = self._policy(game, seat)
            if prior in untried:
                return prior, True
            return untried[rng.randrange(len(untried))], True
        c = self.exploration
        best: Action | None = None
        best_value = -math.inf
        for a in tried:
            child = children[a]
            child.avail += 1
            value = child.ucb(c)
            if value > best_value:
                best, best_value = a, value
        assert best is not None
        return best, False

    def _candidates(self, game: Game, seat: int) -> list[Action]:
        """The actions searched for ``seat``: its distinct legal cards or trump
        suits, or the legal bids within ``bid_window`` of the heuristic's."""
        if game.phase is Phase.BID:
            prior = heuristic_bid(game, seat)
            w = self.bid_window
            return [Bid(b) for b in game.legal_bids(seat) if abs(b - prior) <= w]
        return game.legal_actions(seat)

    def _policy(self, game: Game, seat: int) -> Action:
        """The heuristic's action for ``seat`` in ``game`` (from that seat's view)."""
        phase = game.phase
        if phase is Phase.BID:
            return Bid(heuristic_bid(game, seat))
        if phase is Phase.CHOOSE_TRUMP:
            return ChooseTrump(choose_trump_suit(game.hands[seat], game.players))
        return Play(self._heuristic.play(game.view(seat)))
