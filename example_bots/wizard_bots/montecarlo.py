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

Either ``samples`` (a fixed number of deals per decision: reproducible) or
``think_time`` (seconds per decision, as many deals as fit: it depends on the
machine's speed and load) sets the effort; ``bid_effort`` multiplies it for
bids. Whatever the effort, a decision keeps to half the referee's
``time_left`` less 50 ms (:mod:`wizard_bots.budget`, on an injectable
``clock``): a fixed-work search that would overrun is cut short (and
counted). The deals are drawn from the seed the referee gives the bot for
each game (``GameInfo.rng``), or from ``seed`` if one is given, so with
``samples`` the same game is played the same way every time (unless a search
is cut short).

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
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import partial

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot, GameInfo
from wizard_arena.rules import Action, Bid, ChooseTrump, Game, Phase, Play, suit_to_follow
from wizard_bots.budget import TIME_MARGIN, TIME_SHARE, Budget, Clock
from wizard_bots.heuristic import (
    HeuristicBot,
    Opponent,
    card_counts,
    choose_bid,
    choose_card,
    choose_trump_suit,
    count_slot,
    estimate_tricks,
)
from wizard_bots.inference import play_likelihood
from wizard_bots.opponents import noise_levels
from wizard_bots.sampling import SampledDeal, game_from_view, sample_deals
from wizard_bots.steer import steer_card

__all__ = ["MonteCarloBot", "assumed_bids", "bid_likelihood", "heuristic_bid", "play_out_round"]

#: Spread (in tricks) of a player's bid around the heuristic's estimate of its hand.
BID_SIGMA = 1.0
#: Deals drawn at a time by a fixed-work search (the same whatever the clock says).
FIXED_BATCH = 16
#: ``steer`` flags: the rollouts of bids (of cards) play cards with :func:`steer_card`.
STEER_BIDS = 1
STEER_CARDS = 2
#: Below this estimated probability of acting at random a seat is modelled as
#: the heuristic (its bid read as a hint, its rollouts deterministic).
NOISE_THRESHOLD = 0.1


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
    noise: Sequence[float] | None = None,
    rng: random.Random | None = None,
    steer: bool = False,
) -> None:
    """Finish the current round of ``game`` with the heuristic policy for every seat.

    ``stock`` are the cards not dealt (so that each simulated seat knows which
    cards it has not seen) and ``voids`` the suits each seat is known to lack.
    With ``noise`` (by seat, see :mod:`wizard_bots.opponents`) and ``rng``, a
    seat bids and plays uniformly at random with that probability at each
    decision instead. With ``steer``, cards are played by
    :func:`wizard_bots.steer.steer_card` (which sees every hand) instead of
    the heuristic's :func:`~wizard_bots.heuristic.choose_card`. The game is
    left at the end of the round (scored).
    """
    if noise is not None and rng is None:
        raise ValueError("noise needs an rng")
    draw = rng.random if rng is not None else None
    n = game.players
    known: list[set[Suit]] = (
        [set(v) for v in voids] if voids is not None else [set() for _ in range(n)]
    )
    rnd = game.round
    if game.phase is Phase.CHOOSE_TRUMP and not (game.trick or game.tricks):
        game.choose_trump(game.dealer, choose_trump_suit(game.hands[game.dealer], n))
    while game.phase is Phase.BID:
        bidder = game.acting[0]  # (with hidden bids, any seat that has not bid)
        if noise is not None and rng is not None and rng.random() < noise[bidder]:
            game.bid(bidder, rng.choice(game.legal_bids(bidder)))
        else:
            game.bid(bidder, heuristic_bid(game, bidder))
    # unseen cards of the table (every hand and the stock), by card index
    remaining = card_counts(stock)
    for hand in game.hands:
        for c in hand:
            remaining[count_slot(c)] += 1
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
        elif noise is not None and draw is not None and draw() < noise[seat]:
            card = legal[int(draw() * len(legal))]
        elif steer:
            card = steer_card(game, seat)
        else:
            hand = game.hands[seat]
            out = list(remaining)
            for c in hand:
                out[count_slot(c)] -= 1
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
        remaining[count_slot(card)] -= 1
        game.play(seat, card)


def assumed_bids(view: SeatView, deal: SampledDeal) -> list[int] | None:
    """Bids for the seats whose bids the view hides once play has started
    (``reveal_bids_after_tricks``): the heuristic's bid for each seat's dealt
    hand in ``deal``; None when the view hides none."""
    hidden = [s for s, b in enumerate(view.bids) if b is None]
    if not hidden or view.phase is Phase.BID or not view.rules.reveal_bids_after_tricks:
        return None
    n = view.players
    dealt = [list(h) for h in deal.hands]
    for seat, card in view.plays:
        dealt[seat].append(card)
    legal = range(view.cards_per_player + 1)
    return [
        b
        if b is not None
        else choose_bid(estimate_tricks(dealt[s], view.trump, n, view.turned_card), legal)
        for s, b in enumerate(view.bids)
    ]


def bid_likelihood(
    view: SeatView, deal: SampledDeal, noise: Sequence[float] | None = None
) -> float:
    """How well the bids made so far fit the hands of ``deal`` (relative weight).

    With ``noise`` (by seat), a seat's bid is read as random with that
    probability: its factor is mixed with the likelihood of a random bid, so
    a careless bidder's bid hardly moves the deals."""
    n = view.players
    trump = view.trump
    dealt = [list(h) for h in deal.hands]
    for seat, card in view.plays:
        dealt[seat].append(card)
    err = 0.0
    mixed = 1.0
    flat = min(1.0, math.sqrt(2 * math.pi) * BID_SIGMA / (view.cards_per_player + 1))
    before: list[int] = []
    for k in range(n):
        seat = (view.dealer + 1 + k) % n
        bid = view.bids[seat]
        if bid is None:
            break
        if seat != view.seat:
            est = estimate_tricks(dealt[seat], trump, n, view.turned_card, before, k)
            e = noise[seat] if noise is not None else 0.0
            if e > 0.0:
                like = math.exp(-((bid - est) ** 2) / (2 * BID_SIGMA**2))
                mixed *= (1.0 - e) * like + e * flat
            else:
                err += (bid - est) ** 2
        before.append(bid)
    return mixed * math.exp(-err / (2 * BID_SIGMA**2))


class MonteCarloBot(Bot):
    """Chooses each action by playing sampled deals out with the heuristic policy.

    ``samples`` fixes the number of sampled deals per decision (reproducible:
    each game draws from the referee's seed for it, or from ``seed`` if given);
    otherwise ``think_time`` seconds are spent per decision. Either way a
    decision also keeps to ``time_share`` of the referee's ``time_left`` less
    ``time_margin`` (:class:`~wizard_bots.budget.Budget`; a fixed-work search
    cut short by it is counted in ``stats["cut_short"]``). ``bid_effort``
    multiplies the work (deals or think time) of a bid: the 15-odd bids of a
    game decide most of its score. ``bid_window`` is how far from the
    heuristic's bid the candidate bids range; ``bid_inference`` turns on
    weighing deals by the bids made; ``opponent_model`` on modelling seats
    that have shown they act at random (:mod:`wizard_bots.opponents`: their
    bids are not read as hints, and they act at random in the rollouts as
    often as estimated). ``steer`` makes the rollouts play cards with
    :func:`wizard_bots.steer.steer_card` (every hand seen): :data:`STEER_BIDS`
    in those of bids, :data:`STEER_CARDS` in those of card decisions, 3 in
    both; ``play_eps`` weighs the deals also by the cards the others played
    (:func:`wizard_bots.inference.play_likelihood`). Both are off by default:
    neither raised self-play bid accuracy (docs/strength.md). ``clock``
    (seconds, monotonic) is what the time budget reads.
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
        bid_effort: float = 1.0,
        opponent_model: bool = True,
        steer: int = 0,
        play_eps: float | None = None,
        time_share: float = TIME_SHARE,
        time_margin: float = TIME_MARGIN,
        clock: Clock = time.perf_counter,
    ) -> None:
        if samples is None and think_time is None:
            raise ValueError("give think_time or samples")
        if samples is not None and samples < 1:
            raise ValueError("samples must be at least 1")
        if bid_effort <= 0:
            raise ValueError("bid_effort must be positive")
        self.think_time = think_time if samples is None else None
        self.samples = samples
        self.seed = seed
        self.rng = random.Random(seed)
        self.bid_window = bid_window
        self.bid_inference = bid_inference
        self.pool_factor = pool_factor
        self.bid_effort = bid_effort
        self.opponent_model = opponent_model
        if steer not in (0, STEER_BIDS, STEER_CARDS, STEER_BIDS | STEER_CARDS):
            raise ValueError("steer is 0, 1 (bids), 2 (cards) or 3 (both)")
        if play_eps is not None and not 0.0 < play_eps <= 1.0:
            raise ValueError("play_eps must be in (0, 1]")
        self.steer = steer
        self.play_eps = play_eps
        self.time_share = time_share
        self.time_margin = time_margin
        self.clock = clock
        self._heuristic = HeuristicBot()
        self._sim_rng = random.Random(0)  # games never deal within a round: unused
        self.stats = {
            "decisions": 0,
            "searches": 0,
            "deals": 0,
            "rollouts": 0,
            "cut_short": 0,
        }

    # -- the Bot interface -------------------------------------------------------

    def on_game_start(self, info: GameInfo) -> None:
        if self.seed is None:
            self.rng = info.rng  # the referee's seed for this game and seat

    def bid(self, view: SeatView) -> int:
        prior = self._heuristic.bid(view)
        legal = view.legal_bids
        if not view.hand:  # a blind first round: the heuristic's bid is exact
            return prior
        if len(legal) == 1:
            return legal[0]
        cands = [b for b in legal if abs(b - prior) <= self.bid_window]
        steer = bool(self.steer & STEER_BIDS)
        best = self._search(view, [Bid(b) for b in cands], Bid(prior), self.bid_effort, steer)
        assert isinstance(best, Bid)
        return best.bid

    def play(self, view: SeatView) -> Card:
        cards = list(dict.fromkeys(view.legal_cards))
        if len(cards) == 1:
            return cards[0]
        prior = self._heuristic.play(view)
        steer = bool(self.steer & STEER_CARDS)
        best = self._search(view, [Play(c) for c in cards], Play(prior), steer=steer)
        assert isinstance(best, Play)
        return best.card

    def action_values(self, view: SeatView) -> dict[Card, float]:
        """The search's value of each distinct legal card of ``view`` (a play):
        its mean round score for this seat over the sampled deals, the very
        figures :meth:`play` picks the highest of (ties: the heuristic's card,
        then the first legal one). A teacher's labels for a learned player
        (``wizard_bots.learned.train``). A forced card is not searched (its
        value is 0.0); nor is any card when the budget leaves no time (all 0.0).
        The search draws from the bot's generator as :meth:`play` does.

        >>> from wizard_arena.rules import Game, Rules
        >>> game = Game(Rules(players=3), seed=2)
        >>> game.deal()
        >>> for _ in range(3):
        ...     game.bid(game.to_act, 0)
        >>> view = game.view(game.to_act)
        >>> values = MonteCarloBot(samples=4, seed=1).action_values(view)
        >>> sorted(values) == sorted(set(view.legal_cards))
        True
        """
        if view.phase is not Phase.PLAY:
            raise ValueError(f"action_values is for card play, not {view.phase.name}")
        cards = list(dict.fromkeys(view.legal_cards))
        if len(cards) == 1:
            return {cards[0]: 0.0}
        steer = bool(self.steer & STEER_CARDS)
        found = self._values(view, [Play(c) for c in cards], steer=steer)
        if found is None:
            return dict.fromkeys(cards, 0.0)
        totals, done = found
        return {c: t / done for c, t in zip(cards, totals, strict=True)}

    def bid_values(self, view: SeatView) -> dict[int, float]:
        """The search's value of every legal bid of ``view`` (a bid), as
        :meth:`action_values` gives cards': each bid's mean round score for
        this seat over the sampled deals, with the rest of the round played
        out by the heuristic policy. Every legal bid is searched, not only
        those near the heuristic's (a grader must value the bid made, however
        far off). Empty in a blind first round (no hand to sample around:
        :meth:`bid` takes the heuristic's bid there). A single legal bid is
        not searched (its value is 0.0); nor is any bid when the budget
        leaves no time (all 0.0).

        >>> from wizard_arena.rules import Game, Rules
        >>> game = Game(Rules(players=3), seed=2)
        >>> game.deal()
        >>> values = MonteCarloBot(samples=2, seed=1).bid_values(game.view(game.to_act))
        >>> sorted(values)
        [0, 1]
        """
        if view.phase is not Phase.BID:
            raise ValueError(f"bid_values is for bidding, not {view.phase.name}")
        legal = list(view.legal_bids)
        if not view.hand:
            return {}
        if len(legal) == 1:
            return {legal[0]: 0.0}
        steer = bool(self.steer & STEER_BIDS)
        found = self._values(view, [Bid(b) for b in legal], self.bid_effort, steer)
        if found is None:
            return dict.fromkeys(legal, 0.0)
        totals, done = found
        return {b: t / done for b, t in zip(legal, totals, strict=True)}

    def choose_trump(self, view: SeatView) -> Suit:
        prior = self._heuristic.choose_trump(view)
        if not view.hand:  # a blind round: nothing to sample from
            return prior
        best = self._search(view, [ChooseTrump(s) for s in Suit], ChooseTrump(prior))
        assert isinstance(best, ChooseTrump)
        return best.suit

    # -- search -------------------------------------------------------------------

    def budget(self, view: SeatView, scale: float = 1.0) -> Budget:
        """The budget of a decision on ``view`` starting now."""
        return Budget.start(
            self.clock,
            think_time=self.think_time,
            samples=self.samples,
            time_left=view.time_left,
            share=self.time_share,
            margin=self.time_margin,
            scale=scale,
        )

    def _noise(self, view: SeatView) -> list[float] | None:
        """Each seat's estimated probability of acting at random, or None when
        every seat looks sensible (see :data:`NOISE_THRESHOLD`)."""
        if not self.opponent_model:
            return None
        levels = [p if p >= NOISE_THRESHOLD else 0.0 for p in noise_levels(view)]
        return levels if any(levels) else None

    def _deals(
        self, view: SeatView, count: int, noise: Sequence[float] | None = None
    ) -> list[tuple[SampledDeal, int]]:
        """``count`` deals (with multiplicity), resampled by bid likelihood."""
        weigh: Callable[[SeatView, SampledDeal], float] | None = None
        if self.bid_inference and any(
            b is not None for s, b in enumerate(view.bids) if s != view.seat
        ):
            weigh = bid_likelihood if noise is None else partial(bid_likelihood, noise=noise)
        if self.play_eps is not None and view.plays:
            skip = [e > 0.0 for e in noise] if noise is not None else None
            eps = self.play_eps
            by_bids = weigh

            def weigh_all(v: SeatView, d: SampledDeal) -> float:
                w = by_bids(v, d) if by_bids is not None else 1.0
                if w <= 0.0:
                    return w
                return w * play_likelihood(v, d, assumed_bids(v, d), eps, skip)

            weigh = weigh_all
        return sample_deals(view, self.rng, count, weigh, self.pool_factor)

    def _evaluate(
        self,
        view: SeatView,
        deal: SampledDeal,
        actions: Sequence[Action],
        void_list: Sequence[AbstractSet[Suit]],
        budget: Budget,
        noise: Sequence[float] | None = None,
        steer: bool = False,
    ) -> list[int] | None:
        """The view's seat's round score after each action on ``deal``, or
        None when the budget ran out before every action was played out.
        With ``steer``, the rollouts play cards with :func:`steer_card`.
        With ``noise``, every action's rollout draws the same random choices
        (common random numbers)."""
        seat = view.seat
        bids = assumed_bids(view, deal)
        base = game_from_view(view, deal.hands, rng=self._sim_rng, bids=bids)
        roll_seed = self.rng.getrandbits(32) if noise is not None else 0
        points = []
        for action in actions:
            if budget.out_of_time():
                return None
            game = base.clone(rng=self._sim_rng)
            game.apply(seat, action)
            if noise is None:
                play_out_round(game, deal.stock, void_list, steer=steer)
            else:
                play_out_round(
                    game,
                    deal.stock,
                    void_list,
                    noise,
                    random.Random(roll_seed),
                    steer,
                )
            points.append(game.results[-1].points[seat])
            self.stats["rollouts"] += 1
        return points

    def _search(
        self,
        view: SeatView,
        actions: Sequence[Action],
        prior: Action,
        scale: float = 1.0,
        steer: bool = False,
    ) -> Action:
        found = self._values(view, actions, scale, steer)
        if found is None:
            return prior
        totals = found[0]
        # best average score; ties go to the heuristic's choice, then the first
        best = max(range(len(actions)), key=lambda i: (totals[i], actions[i] == prior, -i))
        return actions[best]

    def _values(
        self,
        view: SeatView,
        actions: Sequence[Action],
        scale: float = 1.0,
        steer: bool = False,
    ) -> tuple[list[float], int] | None:
        """Each action's total score over the deals played out, and their
        number (with multiplicity); None when no deal was (no time)."""
        self.stats["decisions"] += 1
        budget = self.budget(view, scale)
        if len(actions) == 1:
            return [0.0], 1
        if budget.timed and budget.seconds <= 0.0:  # no time to think: the heuristic's
            self.stats["cut_short"] += 1
            return None
        self.stats["searches"] += 1
        voids = view.known_voids()
        void_list = [voids[s] for s in range(view.players)]
        noise = self._noise(view)
        totals = [0.0] * len(actions)
        target = budget.deals if budget.deals is not None else 1_000_000
        # deals are drawn (and resampled by bid likelihood) in batches, so a
        # search that runs out of time has not drawn far more than it used
        batch = 4 if budget.deals is None else min(target, FIXED_BATCH)
        done = 0
        stopped = False
        while done < target and not stopped:
            for deal, mult in self._deals(view, min(batch, target - done), noise):
                points = self._evaluate(view, deal, actions, void_list, budget, noise, steer)
                if points is None:
                    stopped = True
                    break
                for i, p in enumerate(points):
                    totals[i] += mult * p
                done += mult
                self.stats["deals"] += 1
                if budget.out_of_time():
                    stopped = True
                    break
        if budget.deals is not None and done < budget.deals:
            self.stats["cut_short"] += 1
        if done == 0:
            return None
        return totals, done
