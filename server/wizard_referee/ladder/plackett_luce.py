"""The live ratings: OpenSkill's Plackett-Luce model (Weng and Lin's
Algorithm 4, with the settings of the ``openskill`` package's
``PlackettLuce``), one update per finished duplicate set.

A set's members are rated as teams of one, ranked by their scores summed
over the set's games (the set is one observation of their order, as the
duplicate design makes it fair). Each entry starts at the model's prior
(mu 25, sigma 25/3) and the updates are applied in the order the sets were
stored (their ``finish_seq``), so the same store always gives the same
ratings (:func:`replay`). The live table sorts by the conservative estimate
mu - 3 sigma (``ordinal``), so an entry with few sets is not placed high on
one lucky set.

**Ties.** Plackett-Luce is a model of strict orders; equal summed scores
are an order the set left undecided. The update of a set with ties is the
average of the updates of every strict order that breaks its ties, each
equally likely (computed exactly, without listing the orders: see
:meth:`LiveModel.rate`): mu moves by the average of those orders' mu
updates, and sigma shrinks by the average of their shrinking terms (within
0.001 of the average of their sigmas: the square root is taken once). So
entries that tied with equal ratings get the same update, a lower-scoring
entry never gets the update of those that beat it, and a table that ties
throughout leaves equal ratings' mu where it was (their sigma still
shrinks: the set said they are close). Without ties
this is openskill's own ``PlackettLuce.rate`` (a test checks); openskill
6.2's handling of ties is not used, as it gives an entry placed below a tie
the tied winners' update.

>>> model = LiveModel()
>>> after = model.rate([None, None, None], [30, 10, -5])
>>> [round(mu, 2) for mu, _ in after], after[0][1] < model.prior[1]
([27.87, 25.72, 21.41], True)
>>> [round(mu, 2) for mu, _ in model.rate([None] * 4, [100, 100, 0, -50])]
[27.17, 27.17, 24.69, 20.96]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import combinations

from openskill.models import PlackettLuce

__all__ = ["LiveModel", "ordinal", "replay"]

Rating = tuple[float, float]


def ordinal(rating: Rating) -> float:
    """The conservative estimate the live table sorts by: mu - 3 sigma."""
    mu, sigma = rating
    return mu - 3.0 * sigma


class LiveModel:
    """OpenSkill's Plackett-Luce with its defaults, ties averaged over the
    strict orders that break them."""

    def __init__(self) -> None:
        model = PlackettLuce()
        default = model.rating()
        self.prior: Rating = (float(default.mu), float(default.sigma))
        self.beta = float(model.beta)
        self.tau = float(model.tau)
        self.kappa = float(model.kappa)

    def rate(self, prior: Sequence[Rating | None], scores: Sequence[float]) -> list[Rating]:
        """The members' ratings after a set: ``prior`` their ratings before
        (None: the model's prior), ``scores`` their summed scores, both in
        table order.

        In Plackett-Luce the entries are placed best first, and the update
        of entry i sums, over each step of the placing while i is still
        unplaced, a term of p = e_i / S(R): e_i = exp(mu_i / c), R the
        entries not yet placed, S(R) the sum of their e. Breaking the ties
        of a group of k equal scores at random, the entries unplaced when
        t of the group remain are any t of them, each such set with
        probability 1 / C(k, t); the averaged update is those terms each
        weighted by that probability: at most 2**k sets per group."""
        if len(prior) != len(scores):
            raise ValueError(f"{len(prior)} ratings for {len(scores)} scores")
        n = len(scores)
        mus = [(p if p is not None else self.prior)[0] for p in prior]
        variances = [(p if p is not None else self.prior)[1] ** 2 + self.tau**2 for p in prior]
        c = math.sqrt(sum(v + self.beta**2 for v in variances))
        e = [math.exp(mu / c) for mu in mus]
        # groups of equal scores, best first
        groups: list[list[int]] = []
        for i in sorted(range(n), key=lambda i: -scores[i]):
            if groups and scores[groups[-1][0]] == scores[i]:
                groups[-1].append(i)
            else:
                groups.append([i])
        # omega: sum of (1 if i is placed at that step else 0) - p over the
        # steps while i is unplaced, whose first part is always 1 in all
        placed_term = [0.0] * n
        delta = [0.0] * n
        worse: list[int] = []  # entries of the groups below the current one
        for group in reversed(groups):
            rest = sum(e[s] for s in worse)
            k = len(group)
            for t in range(1, k + 1):
                weight = 1.0 / math.comb(k, t)
                for left in combinations(group, t):
                    total = rest + sum(e[s] for s in left)
                    for i in (*left, *worse):
                        p = e[i] / total
                        placed_term[i] += weight * p
                        delta[i] += weight * p * (1.0 - p)
            worse = [*group, *worse]
        after: list[Rating] = []
        for i in range(n):
            var = variances[i]
            omega = (1.0 - placed_term[i]) * var / c
            gamma = math.sqrt(var) / c
            shrink = delta[i] * gamma * var / c**2
            sigma = math.sqrt(var) * math.sqrt(max(1.0 - shrink, self.kappa))
            after.append((mus[i] + omega, sigma))
        return after


def replay(
    model: LiveModel, sets: Iterable[tuple[Sequence[int], Sequence[float]]]
) -> dict[int, Rating]:
    """Every entry's live rating after ``sets`` (each: its members, their
    summed scores), applied in the order given.

    >>> r = replay(LiveModel(), [((1, 2, 3), (9, 5, 1)), ((3, 1, 4), (2, 2, 0))])
    >>> sorted(r), r[1][0] > r[2][0] > r[3][0]
    ([1, 2, 3, 4], True)
    """
    ratings: dict[int, Rating] = {}
    for members, scores in sets:
        after = model.rate([ratings.get(m) for m in members], scores)
        ratings.update(zip(members, after, strict=True))
    return ratings
