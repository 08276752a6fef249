"""Two entrants compared deal by deal: the paired score difference.

For every duplicate set (one deal at one table, played in every seating of
the design) in which both entrants played, the difference of their mean
final scores over the set's games is one value; the mean of those values,
with a 95% Student-t interval over the sets, says by how many points per
game one entrant outscores the other on the same deals. The sets are
independent (each has its own deal), so the t interval is exact for
normally distributed set values and close to it otherwise. Two copies of
one bot should differ by 0: an interval clear of 0 for them means the
seating favours one seat of the table (docs/tournament.md).

>>> d = paired_difference([(1, "x", "a", 10), (1, "x", "b", 4), (1, "y", "a", 0),
...                        (1, "y", "b", 2), (2, "x", "a", 5), (2, "x", "b", 5)], "a", "b")
>>> d.per_set, round(d.mean, 3)
((2.0, 0.0), 1.0)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from wizard_referee.ratings.student_t import t_quantile
from wizard_referee.tournament.store import GameSpec, SeatResult

__all__ = ["PairedDifference", "paired_difference", "paired_difference_of"]


@dataclass(frozen=True)
class PairedDifference:
    a: str
    b: str
    per_set: tuple[float, ...]
    """Per duplicate set: mean score of ``a`` minus mean score of ``b`` (per game)."""

    @property
    def sets(self) -> int:
        return len(self.per_set)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.per_set) if self.per_set else math.nan

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval (inf with fewer than 2 sets)."""
        n = self.sets
        if n < 2:
            return math.inf
        return t_quantile(n - 1) * statistics.stdev(self.per_set) / math.sqrt(n)

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def covers(self, value: float = 0.0) -> bool:
        return self.low <= value <= self.high

    def describe(self) -> str:
        return (
            f"{self.a} - {self.b}: {self.mean:+.1f} points per game "
            f"(95% interval {self.low:+.1f} to {self.high:+.1f}, {self.sets} deals)"
        )


def paired_difference(
    rows: Iterable[tuple[Hashable, Hashable, str, float]], a: str, b: str
) -> PairedDifference:
    """From ``(duplicate set, game, entrant, score)`` rows: the per-set differences
    of ``a`` and ``b`` over the sets where both played (each in every game of it)."""
    games: dict[Hashable, dict[Hashable, dict[str, float]]] = {}
    for dset, game, entrant, score in rows:
        games.setdefault(dset, {}).setdefault(game, {})[entrant] = score
    per_set = []
    for dset in games:
        both = [g for g in games[dset].values() if a in g and b in g]
        if both:
            per_set.append(statistics.fmean(g[a] - g[b] for g in both))
    return PairedDifference(a, b, tuple(per_set))


def paired_difference_of(
    finished: Iterable[tuple[GameSpec, list[SeatResult], bool]], a: str, b: str
) -> PairedDifference:
    """:func:`paired_difference` of finished games as
    :meth:`.ResultsStore.finished_games` gives them."""
    rows: list[tuple[Hashable, Hashable, str, float]] = [
        (spec.duplicate_set, spec.id, s.entrant, float(s.total))
        for spec, seats, _faulted in finished
        for s in seats
    ]
    return paired_difference(rows, a, b)
