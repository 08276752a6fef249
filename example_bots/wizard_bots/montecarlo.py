"""A Monte Carlo bot: guess the hidden cards many times, play each guess out.

For a decision, the bot samples deals of the cards it has not seen that fit
everything it knows (:func:`~wizard_arena.rules.SeatView.known_voids`, hand
sizes; see :mod:`wizard_bots.sampling`), rebuilds each as a
:class:`~wizard_arena.rules.Game` and, for every candidate action, applies it
and plays the rest of the round with the heuristic policy
(:mod:`wizard_bots.heuristic`) for every seat. It picks the action with the
best average round score for itself: a card to play, a bid (among the bids
near the heuristic's), or a trump suit.

Sampling also weighs the deals by the bids already made ("bid inference"): a
deal in which a player holds cards worth far more or fewer tricks than it bid
is less likely. A pool of candidate deals is drawn and resampled in
proportion to ``exp(-(bid - estimate)^2 / 2)``, where ``estimate`` is the
heuristic's trick estimate for that player's hand in the deal.

Either ``samples`` (a fixed number of deals per decision: reproducible, given
``seed``) or ``think_time`` (seconds per decision, as many deals as fit) sets
the effort.

>>> from wizard_arena.local import play_local
>>> from wizard_bots.heuristic import HeuristicBot
>>> bots = [MonteCarloBot(samples=2, seed=1), HeuristicBot(), HeuristicBot()]
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
from wizard_arena.bot import Bot
from wizard_arena.rules import Action, Bid, ChooseTrump, Game, Phase, Play, suit_to_follow
from wizard_bots.heuristic import (
    HeuristicBot,
    Opponent,
    card_counts,
    choose_bid,
    choose_card,
    choose_trump_suit,
    estimate_tricks,
)
from wizard_bots.sampling import SampledDeal, game_from_view, sample_deal

__all__ = ["MonteCarloBot", "bid_likelihood", "heuristic_bid", "play_out_round"]

#: Spread (in tricks) of a player's bid around the heuristic's estimate of its hand.
BID_SIGMA = 1.0


# -- the rollout policy: the heuristic, driven straight from a Game ------------------


def _bids_before(game: Game, seat: int) -> tuple[list[int], int]:
    n = game.players
    position = (seat - game.dealer - 1) % n
    if game.rules.hidden_bids:  # nobody sees the others' bids
        return [], position
    bids = [b for k in range(position) if (b := game.bids[(game.dealer + 1 + k) % n]) is not None]
    return bids, position


def heuristic_bid(game: Game, seat: int) -> int:
    """The heuristic's bid for ``seat`` in ``game`` (which must be bidding)."""
    before, position = _bids_before(game, seat)
    est = estimate_tricks(
        game.hands[seat], game.trump, game.players, game.turned_card, before, position
    )
    return choose_bid(est, game.legal_bids(seat))


def play_out_round(
    game: Game,
    stock: Sequence[Card],
    voids: Sequence[AbstractSet[Suit]] | None = None,
) -> None:
    """Finish the current round of ``game`` with the heuristic policy for every seat.

    ``stock`` are the cards not dealt (so that each simulated seat knows which
    cards it has not seen) and ``voids`` the suits each seat is known to lack.
    The game is left at the end of the round (scored).
    """
    n = game.players
    known: list[set[Suit]] = (
        [set(v) for v in voids] if voids is not None else [set() for _ in range(n)]
    )
    rnd = game.round
    if game.phase is Phase.CHOOSE_TRUMP and not (game.trick or game.tricks):
        game.choose_trump(game.dealer, choose_trump_suit(game.hands[game.dealer], n))
    while game.phase is Phase.BID:
        bidder = game.acting[0]  # (with hidden bids, any seat that has not bid)
        game.bid(bidder, heuristic_bid(game, bidder))
    # unseen cards of the table (every hand and the stock), by card index
    remaining = card_counts(stock)
    for hand in game.hands:
        for c in hand:
            remaining[c.index] += 1
    while game.phase in (Phase.PLAY, Phase.CHOOSE_TRUMP) and game.round == rnd:
        seat = game.to_act
        assert seat is not None
        if game.phase is Phase.CHOOSE_TRUMP:  # tricksy: a Wizard's player names trump
            game.choose_trump(seat, choose_trump_suit(game.hands[seat], n))
            continue
        legal = game.legal_cards(seat)
        trick = game.trick
        first = legal[0]
        if all(c is first for c in legal):
            card = first
        else:
            hand = game.hands[seat]
            out = list(remaining)
            for c in hand:
                out[c.index] -= 1
            later = []
            for i in range(len(trick) + 1, n):
                s = (game.leader + i) % n
                bid = game.bids[s]
                later.append(Opponent((bid or 0) - game.tricks_won[s], known[s]))
            bid = game.bids[seat]
            need = (bid or 0) - game.tricks_won[seat]
            card = choose_card(hand, legal, trick, game.trump, need, later, out)
        if card.suit is not None:
            follow = suit_to_follow(trick)
            if follow is not None and card.suit is not follow:
                known[seat].add(follow)
        remaining[card.index] -= 1
        game.play(seat, card)


def bid_likelihood(view: SeatView, deal: SampledDeal) -> float:
    """How well the bids made so far fit the hands of ``deal`` (relative weight)."""
    n = view.players
    trump = view.trump
    dealt = [list(h) for h in deal.hands]
    for seat, card in view.plays:
        dealt[seat].append(card)
    err = 0.0
    before: list[int] = []
    for k in range(n):
        seat = (view.dealer + 1 + k) % n
        bid = view.bids[seat]
        if bid is None:
            break
        if seat != view.seat:
            est = estimate_tricks(dealt[seat], trump, n, view.turned_card, before, k)
            err += (bid - est) ** 2
        before.append(bid)
    return math.exp(-err / (2 * BID_SIGMA**2))


class MonteCarloBot(Bot):
    """Chooses each action by playing sampled deals out with the heuristic policy.

    ``samples`` fixes the number of sampled deals per decision (reproducible
    with ``seed``); otherwise ``think_time`` seconds are spent per decision
    (less if the referee's ``time_left`` is shorter). ``bid_window`` is how far
    from the heuristic's bid the candidate bids range; ``bid_inference``
    turns on weighing deals by the bids made.
    """

    name = "montecarlo"

    def __init__(
        self,
        think_time: float | None = 1.0,
        samples: int | None = None,
        seed: int | None = None,
        *,
        bid_window: int = 2,
        bid_inference: bool = True,
        pool_factor: int = 4,
    ) -> None:
        if samples is None and think_time is None:
            raise ValueError("give think_time or samples")
        if samples is not None and samples < 1:
            raise ValueError("samples must be at least 1")
        self.think_time = think_time
        self.samples = samples
        self.rng = random.Random(seed)
        self.bid_window = bid_window
        self.bid_inference = bid_inference
        self.pool_factor = pool_factor
        self._heuristic = HeuristicBot()
        self._sim_rng = random.Random(0)  # games never deal within a round: unused
        self.stats = {"decisions": 0, "searches": 0, "deals": 0, "rollouts": 0}

    # -- the Bot interface -------------------------------------------------------

    def bid(self, view: SeatView) -> int:
        prior = self._heuristic.bid(view)
        legal = view.legal_bids
        if not view.hand:  # a blind first round: the heuristic's bid is exact
            return prior
        if len(legal) == 1:
            return legal[0]
        cands = [b for b in legal if abs(b - prior) <= self.bid_window]
        best = self._search(view, [Bid(b) for b in cands], prior=Bid(prior))
        assert isinstance(best, Bid)
        return best.bid

    def play(self, view: SeatView) -> Card:
        cards = list(dict.fromkeys(view.legal_cards))
        if len(cards) == 1:
            return cards[0]
        prior = self._heuristic.play(view)
        best = self._search(view, [Play(c) for c in cards], prior=Play(prior))
        assert isinstance(best, Play)
        return best.card

    def choose_trump(self, view: SeatView) -> Suit:
        prior = self._heuristic.choose_trump(view)
        if not view.hand:  # a blind round: nothing to sample from
            return prior
        best = self._search(view, [ChooseTrump(s) for s in Suit], prior=ChooseTrump(prior))
        assert isinstance(best, ChooseTrump)
        return best.suit

    # -- search -------------------------------------------------------------------

    def _budget(self, view: SeatView) -> float | None:
        if self.samples is not None:
            return None
        assert self.think_time is not None
        budget = self.think_time
        if view.time_left is not None:
            budget = min(budget, 0.5 * view.time_left)
        return budget

    def _deals(self, view: SeatView, count: int) -> list[tuple[SampledDeal, int]]:
        """``count`` deals (with multiplicity), resampled by bid likelihood."""
        rng = self.rng
        if not self.bid_inference or all(
            b is None for s, b in enumerate(view.bids) if s != view.seat
        ):
            return [(sample_deal(view, rng), 1) for _ in range(count)]
        pool = [sample_deal(view, rng) for _ in range(count * self.pool_factor)]
        weights = [bid_likelihood(view, d) for d in pool]
        if sum(weights) <= 0.0:
            weights = [1.0] * len(pool)
        picks: dict[int, int] = {}
        for i in rng.choices(range(len(pool)), weights=weights, k=count):
            picks[i] = picks.get(i, 0) + 1
        return [(pool[i], k) for i, k in sorted(picks.items())]

    def _search(self, view: SeatView, actions: Sequence[Action], prior: Action) -> Action:
        self.stats["decisions"] += 1
        if len(actions) == 1:
            return actions[0]
        self.stats["searches"] += 1
        seat = view.seat
        voids = view.known_voids()
        void_list = [voids[s] for s in range(view.players)]
        totals = [0.0] * len(actions)
        budget = self._budget(view)
        start = time.perf_counter()
        target = self.samples if self.samples is not None else 1_000_000
        done = 0
        batch = target if budget is None else 4
        out_of_time = False
        while done < target and not out_of_time:
            for deal, mult in self._deals(view, min(batch, target - done)):
                base = game_from_view(view, deal.hands, rng=self._sim_rng)
                for i, action in enumerate(actions):
                    game = base.clone(rng=self._sim_rng)
                    game.apply(seat, action)
                    play_out_round(game, deal.stock, void_list)
                    totals[i] += mult * game.results[-1].points[seat]
                    self.stats["rollouts"] += 1
                done += mult
                self.stats["deals"] += 1
                if budget is not None and time.perf_counter() - start >= budget:
                    out_of_time = True
                    break
        # best average score; ties go to the heuristic's choice, then the first
        best = max(range(len(actions)), key=lambda i: (totals[i], actions[i] == prior, -i))
        return actions[best]
