"""No interval rather than a misleading one: too few duplicate sets.

A bootstrap interval is made by re-rating many reshuffled copies of the
results, each drawn from the duplicate sets (deals) that were played, with
repeats. With few sets there are few different ways to reshuffle them, so
the reshuffled ratings vary less than ratings from new deals would, and the
interval comes out too narrow. For a mean over n sets the percentile
bootstrap interval is about mean +- 1.96 * sd * sqrt((n - 1) / n) / sqrt(n),
where the honest one has t(n - 1) instead of 1.96 and no shrinking factor,
so a "95%" interval holds the true value only about

======  =====  =====  =====  =====  =====  =====
sets    2      3      5      10     20     30
holds   60%    75%    85%    90%    93%    94%
======  =====  =====  =====  =====  =====  =====

of the time (:func:`bootstrap_coverage`; normally distributed results). So
an entrant that played fewer than :data:`MIN_SETS` sets gets no interval,
and a note says why in plain words.

>>> [round(bootstrap_coverage(n), 2) for n in (2, 5, 10, 30)]
[0.6, 0.85, 0.9, 0.94]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from wizard_referee.ratings.models import GameResult, RatingResult
from wizard_referee.ratings.student_t import t_two_sided

__all__ = ["MIN_SETS", "bootstrap_coverage", "sets_per_player", "withhold_thin_intervals"]

MIN_SETS = 10
"""Fewest duplicate sets (deals) an entrant must have played to get a 95% interval:
with 10 a bootstrap "95%" interval holds the truth about 90% of the time."""


def bootstrap_coverage(sets: int) -> float:
    """How often a percentile-bootstrap "95%" interval of a mean over ``sets``
    independent, normally distributed values holds the true mean."""
    if sets < 2:
        return 0.0
    return t_two_sided(1.959964 * math.sqrt((sets - 1) / sets), sets - 1)


def sets_per_player(games: Iterable[GameResult]) -> dict[str, int]:
    """The duplicate sets each player played in (a game without a set is one of its own).

    >>> sets_per_player([GameResult(("a", "b"), (1, 0), "d0"), GameResult(("b", "a"), (2, 0), "d0"),
    ...                  GameResult(("a", "c"), (1, 0))])
    {'a': 2, 'b': 1, 'c': 1}
    """
    units: dict[str, set[object]] = {}
    for n, g in enumerate(games):
        unit = ("set", g.duplicate_set) if g.duplicate_set is not None else ("game", n)
        for p in g.players:
            units.setdefault(p, set()).add(unit)
    return {p: len(u) for p, u in units.items()}


def withhold_thin_intervals(
    result: RatingResult, games: Sequence[GameResult], *, unit: str = "deals"
) -> tuple[RatingResult, dict[str, str]]:
    """``result`` without the intervals of players with fewer than
    :data:`MIN_SETS` sets, a plain note saying so, and a short note per such
    player (``"no interval: 2 deals played, 10 needed"``). ``unit`` names a
    set for the reader (``deals`` in a tournament). For a result with
    intervals, or one rated without them (``bootstrap=0``) because no player
    had enough sets."""
    if result.method != "bt":
        return result, {}
    played = sets_per_player(games)
    thin = {p.name: played.get(p.name, 0) for p in result.players}
    thin = {name: n for name, n in thin.items() if n < MIN_SETS}
    if not thin:
        return result, {}
    players = tuple(
        replace(p, low=None, high=None) if p.name in thin else p for p in result.players
    )
    fewest, most = min(thin.values()), max(thin.values())
    counts = _count(fewest, unit) if fewest == most else f"{fewest} to {most} {unit}"
    everyone = len(thin) == len(result.players)
    who = "the bots" if everyone else ", ".join(sorted(thin))
    # from 1 set the bootstrap cannot vary at all: quote the least that can
    least = _count(max(fewest, 2), unit)
    note = (
        f"no 95% interval for {who}: {'they' if everyone or len(thin) > 1 else 'it'} played "
        f"only {counts}, and an interval needs at least {MIN_SETS}. The interval is "
        f"worked out by re-rating the results many times, each time with the {unit} drawn "
        f"again at random; with few {unit} those re-ratings vary too little, so the interval "
        f"would look more precise than it is ({'even ' if fewest < 2 else ''}from {least} a "
        f'"95%" interval holds the true rating only about '
        f"{bootstrap_coverage(max(fewest, 2)):.0%} of the time). Play more {unit} to get intervals."
    )
    per_player = {
        name: f"no interval: {_count(n, unit)} played, {MIN_SETS} needed"
        for name, n in thin.items()
    }
    return replace(result, players=players, notes=(*result.notes, note)), per_player


def _count(n: int, unit: str) -> str:
    """``1 deal``, ``2 deals`` (``unit`` is plural)."""
    return f"{n} {unit.removesuffix('s') if n == 1 else unit}"
