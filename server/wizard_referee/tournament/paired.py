"""Two entrants compared deal by deal: the paired score difference.

For every whole duplicate set (one deal at one table, played in every
seating of the design) in which both entrants played every game, the
difference of their mean final scores over the set's games is one value;
the mean of those values,
with a 95% Student-t interval over the sets, says by how many points per
game one entrant outscores the other on the same deals. The sets are
independent (each has its own deal), so the t interval is exact for
normally distributed set values and close to it otherwise. Two copies of
one bot should differ by 0: an interval clear of 0 for them means the
seating favours one seat of the table (docs/statistics.md).

Only whole sets count. A set with fewer games than the design's seatings
(an interrupted deal: the tournament stopped, or a game was lost) has its
seats unevenly filled: the games it kept favour whoever held the better
seats in them, so its difference is biased, and it is left out (counted in
``partial``). The design's number of seatings is given
(``games_per_set``) or taken to be the most games any set has.

>>> d = paired_difference([(1, "x", "a", 10), (1, "x", "b", 4), (1, "y", "a", 0),
...                        (1, "y", "b", 2), (2, "x", "a", 5), (2, "x", "b", 5)], "a", "b")
>>> d.per_set, d.mean, d.partial  # set 2 played 1 of its 2 games: left out
((2.0,), 2.0, 1)
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
    """Per whole duplicate set: mean score of ``a`` minus mean score of ``b`` (per game)."""
    partial: int = 0
    """Sets with both entrants left out because they were not whole."""

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
        left_out = (
            f"; {self.partial} interrupted {'deal' if self.partial == 1 else 'deals'} left out"
            if self.partial
            else ""
        )
        return (
            f"{self.a} - {self.b}: {self.mean:+.1f} points per game "
            f"(95% interval {self.low:+.1f} to {self.high:+.1f}, {self.sets} deals{left_out})"
        )


def paired_difference(
    rows: Iterable[tuple[Hashable, Hashable, str, float]],
    a: str,
    b: str,
    *,
    games_per_set: int | None = None,
) -> PairedDifference:
    """From ``(duplicate set, game, entrant, score)`` rows: the per-set differences
    of ``a`` and ``b`` over the whole sets (``games_per_set`` games, by default
    as many as the fullest set has) where both played every game."""
    games: dict[Hashable, dict[Hashable, dict[str, float]]] = {}
    for dset, game, entrant, score in rows:
        games.setdefault(dset, {}).setdefault(game, {})[entrant] = score
    whole = games_per_set or max((len(g) for g in games.values()), default=0)
    per_set = []
    partial = 0
    for dset in games:
        played = list(games[dset].values())
        if not any(a in g and b in g for g in played):
            continue
        if len(played) < whole or not all(a in g and b in g for g in played):
            partial += 1
            continue
        per_set.append(statistics.fmean(g[a] - g[b] for g in played))
    return PairedDifference(a, b, tuple(per_set), partial)


def paired_difference_of(
    finished: Iterable[tuple[GameSpec, list[SeatResult], bool]],
    a: str,
    b: str,
    *,
    games_per_set: int | None = None,
) -> PairedDifference:
    """:func:`paired_difference` of finished games as
    :meth:`.ResultsStore.finished_games` gives them."""
    rows: list[tuple[Hashable, Hashable, str, float]] = [
        (spec.duplicate_set, spec.id, s.entrant, float(s.total))
        for spec, seats, _faulted in finished
        for s in seats
    ]
    return paired_difference(rows, a, b, games_per_set=games_per_set)
