"""What the Monte Carlo bot believes about how each other seat plays.

The bot's rollouts play every seat with the heuristic policy, and its
sampler reads each seat's bid as a hint of its hand. Both are wrong for a
seat that plays carelessly (a random bot, a buggy one): its bid says nothing
about its cards, and it does not duck or take tricks the way the heuristic
would. :func:`noise_levels` estimates, for each seat, the probability that it
acts at random rather than sensibly, from the rounds already scored (each
seat's bid and tricks are public once a round ends):

- a sensible player lands on its bid about half of the time (the heuristic
  53%, the Monte Carlo bot 60-70%): ``SENSIBLE_EXACT``;
- a player who bids at random among ``0..r`` lands on it about once in
  ``r + 1`` rounds.

Starting from the prior ``PRIOR_NOISE``, each scored round updates the odds
by Bayes' rule. One-card rounds say little (either kind hits half of the
time); a few longer rounds tell the two kinds apart.

>>> from wizard_arena.rules import RoundResult
>>> exact = RoundResult(5, 0, (2, 1, 3), (2, 1, 0), (40, 30, -30), (40, 30, -30))
>>> [round(p, 3) for p in noise_from_results([exact] * 3, 3)]
[0.005, 0.005, 0.196]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wizard_arena.rules import RoundResult, SeatView

__all__ = ["PRIOR_NOISE", "SENSIBLE_EXACT", "noise_from_results", "noise_levels"]

#: Prior probability that a seat acts at random.
PRIOR_NOISE = 0.05
#: Share of rounds a sensible player's bid is exact.
SENSIBLE_EXACT = 0.55
#: Beliefs never go below this (a sensible player's rare blunders).
FLOOR = 0.001


def noise_from_results(results: Sequence[RoundResult], players: int) -> list[float]:
    """Each seat's probability of acting at random, given the scored ``results``."""
    prior = math.log(PRIOR_NOISE / (1.0 - PRIOR_NOISE))
    odds = [prior] * players
    for result in results:
        p_random = 1.0 / (sum(result.tricks) + 1)  # every trick of the round was won
        for seat in range(players):
            bid, tricks = result.bids[seat], result.tricks[seat]
            if bid == tricks:
                odds[seat] += math.log(p_random / SENSIBLE_EXACT)
            else:
                odds[seat] += math.log((1.0 - p_random) / (1.0 - SENSIBLE_EXACT))
    return [max(FLOOR, 1.0 / (1.0 + math.exp(-o))) for o in odds]


def noise_levels(view: SeatView) -> list[float]:
    """:func:`noise_from_results` for the rounds ``view`` has seen scored
    (the viewing seat's own entry is 0: it knows how it plays)."""
    levels = noise_from_results(view.results, view.players)
    levels[view.seat] = 0.0
    return levels
