"""The live ratings: OpenSkill's Plackett-Luce model (the ``openskill``
package), one update per finished duplicate set.

A set's members are rated as teams of one, ranked by their scores summed
over the set's games (``rate(..., scores=...)``: the set is one
observation of their order, as the duplicate design makes it fair). Each
entry starts at the model's prior (mu 25, sigma 25/3) and the updates are
applied in the order the sets were stored (their ``finish_seq``), so the
same store always gives the same ratings (:func:`replay`). The live table
sorts by the conservative estimate mu - 3 sigma (``ordinal``), so an entry
with few sets is not placed high on one lucky set.

>>> model = LiveModel()
>>> after = model.rate([None, None, None], [30, 10, -5])
>>> [round(mu, 2) for mu, _ in after], after[0][1] < model.prior[1]
([27.87, 25.72, 21.41], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from openskill.models import PlackettLuce

__all__ = ["LiveModel", "ordinal", "replay"]

Rating = tuple[float, float]


def ordinal(rating: Rating) -> float:
    """The conservative estimate the live table sorts by: mu - 3 sigma."""
    mu, sigma = rating
    return mu - 3.0 * sigma


class LiveModel:
    """OpenSkill's Plackett-Luce with its defaults."""

    def __init__(self) -> None:
        self.model = PlackettLuce()
        default = self.model.rating()
        self.prior: Rating = (float(default.mu), float(default.sigma))

    def rate(self, prior: Sequence[Rating | None], scores: Sequence[float]) -> list[Rating]:
        """The members' ratings after a set: ``prior`` their ratings before
        (None: the model's prior), ``scores`` their summed scores, both in
        table order."""
        teams = [[self.model.rating(*(p if p is not None else self.prior))] for p in prior]
        rated = self.model.rate(teams, scores=list(scores))
        return [(float(t[0].mu), float(t[0].sigma)) for t in rated]


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
