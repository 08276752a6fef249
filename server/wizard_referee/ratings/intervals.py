"""The intervals as printed: none from too few duplicate sets, widened for few.

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

of the time (:func:`bootstrap_coverage`; normally distributed results).
Simulated tournaments (:mod:`wizard_referee.tournament.calibrate`) measure
the same shortfall on the ratings themselves: 90.0% at 10 sets. So:

- An entrant that played fewer than :data:`MIN_SETS` sets gets no interval,
  and a note says why in plain words.
- Every other interval is **widened** about the rating by
  :func:`widening` of the sets the entrant played: each half is stretched by
  ``t(0.975, n - 1) / 1.96 * sqrt(n / (n - 1))``, the factor that turns the
  bootstrap interval of a mean into the Student-t one (1.22 at 10 sets, 1.10
  at 20, 1.04 at 40, 1.01 at 150). The interval of the difference between a
  bot and the next one is widened the same way, by the factor of the one of
  the two with fewer sets.

And in a result of several groups (:mod:`.models`) every player gets a note
that says which group it is in and that only the groups' order is known.

>>> [round(bootstrap_coverage(n), 2) for n in (2, 5, 10, 30)]
[0.6, 0.85, 0.9, 0.94]
>>> [round(widening(n), 3) for n in (10, 20, 40)]
[1.217, 1.096, 1.045]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from wizard_referee.ratings.models import GameResult, RatingResult
from wizard_referee.ratings.student_t import t_quantile, t_two_sided

__all__ = [
    "MIN_SETS",
    "bootstrap_coverage",
    "group_notes",
    "printed_intervals",
    "sets_per_player",
    "widen",
    "widening",
]

Z_975 = 1.959963984540054

MIN_SETS = 10
"""Fewest duplicate sets (deals) an entrant must have played to get a 95% interval:
with 10 a bootstrap "95%" interval holds the truth about 90% of the time."""


def bootstrap_coverage(sets: int) -> float:
    """How often a percentile-bootstrap "95%" interval of a mean over ``sets``
    independent, normally distributed values holds the true mean."""
    if sets < 2:
        return 0.0
    return t_two_sided(1.959964 * math.sqrt((sets - 1) / sets), sets - 1)


def widening(sets: int) -> float:
    """By how much each half of a bootstrap interval over ``sets`` duplicate
    sets is stretched: ``t(0.975, sets - 1) / z(0.975) * sqrt(sets / (sets - 1))``
    (1 for fewer than 2 sets, which get no interval)."""
    if sets < 2:
        return 1.0
    return t_quantile(sets - 1) / Z_975 * math.sqrt(sets / (sets - 1))


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


def widen(point: float, low: float, high: float, factor: float) -> tuple[float, float]:
    """``low`` and ``high`` moved away from ``point`` by ``factor`` times their distance.

    >>> widen(10.0, 8.0, 14.0, 1.5)
    (7.0, 16.0)
    """
    return point - factor * (point - low), point + factor * (high - point)


def _widened(result: RatingResult, played: dict[str, int]) -> RatingResult:
    players = []
    for p in result.players:
        if p.low is not None and p.high is not None:
            low, high = widen(p.rating, p.low, p.high, widening(played.get(p.name, 0)))
            p = replace(p, low=low, high=high)
        players.append(p)
    neighbours = []
    for n in result.neighbours:
        if n.difference is not None and n.low is not None and n.high is not None:
            sets = min(played.get(n.upper, 0), played.get(n.lower, 0))
            low, high = widen(n.difference, n.low, n.high, widening(sets))
            n = replace(n, low=low, high=high)
        neighbours.append(n)
    return replace(result, players=tuple(players), neighbours=tuple(neighbours))


def group_notes(result: RatingResult) -> dict[str, str]:
    """A note per player of a result of several groups: which group, and
    that only the order of the groups is known (empty for one group).

    >>> from wizard_referee.ratings.models import PlayerRating
    >>> a, b = (PlayerRating(n, 1500.0, None, None, 3, k) for n, k in (("a", 1), ("b", 2)))
    >>> r = RatingResult("bt", (a, b), groups=(("a",), ("b",)))
    >>> group_notes(r)["a"]
    'group 1 of 2, alone in it: no interval; only the order of the groups is known'
    """
    count = len(result.groups)
    if count < 2:
        return {}
    notes = {}
    for k, members in enumerate(result.groups):
        for name in members:
            notes[name] = (
                f"group {k + 1} of {count}, alone in it: no interval; only the order of the"
                " groups is known"
                if len(members) == 1
                else f"group {k + 1} of {count}: rated within its group; only the order of the"
                " groups is known"
            )
    return notes


def printed_intervals(
    result: RatingResult,
    games: Sequence[GameResult],
    *,
    unit: str = "deals",
    withhold: bool = True,
) -> tuple[RatingResult, dict[str, str]]:
    """``result`` as it is printed, and a short note per player. Its
    intervals (the players' and the neighbours') are widened by
    :func:`widening`; with ``withhold`` (the intervals were asked for), the
    players with fewer than :data:`MIN_SETS` sets lose theirs and the
    neighbours' intervals they are part of, a plain note says so, and each
    such player's note says ``"no interval: 2 deals played, 10 needed"``.
    ``unit`` names a set for the reader (``deals`` in a tournament). The
    per-player notes also say each player's group when there are several
    (:func:`group_notes`)."""
    if result.method != "bt":
        return result, {}
    spans = [p.low for p in result.players] + [n.low for n in result.neighbours]
    if not withhold and all(x is None for x in spans):  # nothing to widen or withhold
        return result, group_notes(result)
    played = sets_per_player(games)
    result = _widened(result, played)
    per_player = group_notes(result)
    thin = {p.name: played.get(p.name, 0) for p in result.players}
    thin = {name: n for name, n in thin.items() if n < MIN_SETS}
    if not withhold or not thin:
        return result, per_player
    players = tuple(
        replace(p, low=None, high=None) if p.name in thin else p for p in result.players
    )
    neighbours = tuple(
        replace(n, low=None, high=None, los=None) if n.upper in thin or n.lower in thin else n
        for n in result.neighbours
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
    for name, n in thin.items():
        thin_note = f"no interval: {_count(n, unit)} played, {MIN_SETS} needed"
        per_player[name] = "; ".join(x for x in (thin_note, per_player.get(name)) if x)
    shown = replace(result, players=players, neighbours=neighbours, notes=(*result.notes, note))
    return shown, per_player


def _count(n: int, unit: str) -> str:
    """``1 deal``, ``2 deals`` (``unit`` is plural)."""
    return f"{n} {unit.removesuffix('s') if n == 1 else unit}"
