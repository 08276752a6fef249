"""Who sits where in the games of one deal: the seating designs.

A table (its members in seat order, from :mod:`.schedule`) plays every deal
several times, each time with the members in other seats, so that the luck
of the cards and the luck of the seating cancel out. A design is the list of
those seatings, the same for every deal. Two designs (``seating`` in a
tournament file):

``"balanced"`` (the default)
    For every member: every seat (so every hand of the deal) equally often,
    and every other member equally often directly after it (the next to
    play, its left neighbour when play goes to the left), directly before
    it, and at every other distance around the table. That takes
    ``k * (k - 1)`` games per deal at a table of k, and no design can take
    fewer: a member must sit in each of the k seats equally often (a
    multiple of k games) and have each of the k - 1 others after it equally
    often (a multiple of k - 1), and k and k - 1 have no common factor.

    ===  ===============  ===================================================
    k    games per deal   design
    ===  ===============  ===================================================
    3    6                every ordering of the 3 (both cyclic orders, each
                          in its 3 rotations)
    4    12               the even permutations (the alternating group A4)
    5    20               the 4 cyclic orders "every a-th member", a = 1..4,
                          each in its 5 rotations
    6    30               6 base seatings, each played with the labels of
                          members 1..5 shifted by 0..4 (mod 5, member 0
                          fixed), found by an exact search
    ===  ===============  ===================================================

    At 3, 4 and 5 the design is *sharply 2-transitive*: for any two seats
    and any two members there is exactly one game with the first member in
    the first seat and the second in the second. So a member holding a given
    hand has each other member after it (and before it, and opposite) once.
    At 3 and 5 it is a classic design: several cyclic orders, each played in
    every rotation, chosen so that every ordered pair of members is adjacent
    exactly once. Such a set of k - 1 cyclic orders is a decomposition of
    the complete directed graph on k vertices into Hamiltonian cycles; for
    odd k it comes from Walecki's decomposition of the complete graph
    (Lucas, Recreations mathematiques, 1892), each cycle taken in both
    directions (here a = 1, 4 and a = 2, 3). Tillson (1980, "A Hamiltonian
    decomposition of K*_2m, 2m >= 8", J. Combin. Theory B 29, 68-74) gave
    it for even k of 8 and more; it does not exist for 4 or 6 (the
    exceptions his title leaves out; ``scripts/search_seating.py`` checks
    both exhaustively), so there cyclic orders played in every rotation
    would have to cover every pair twice: 24 games at 4, 60 at 6. A design
    need not play every rotation of a cyclic order, though. At 4 the 12
    even permutations (each of the 6 cyclic orders in 2 of its 4 rotations)
    are sharply 2-transitive (they form the affine group of the field of 4
    elements). At 6 no sharply 2-transitive set exists (it would give a
    complete set of 5 orthogonal Latin squares of order 6; not even 2 exist,
    Tarry 1900), so :data:`BALANCED_6` was found by an exact search
    (``scripts/search_seating.py``) among "1-rotational" designs (member 0
    fixed, members 1..5 developed mod 5): every seat 5 times, every other
    member at every distance 6 times, and for 7 of the 15 pairs of seats
    (4 of the 6 pairs of neighbouring seats) every ordered pair of members
    in those two seats exactly once; with every distance balanced no such
    design does this for 5 neighbouring pairs.

    What no design of this size can give: with the partner's position fixed,
    who sits where among the *others* (the three-way arrangement) is not
    the same for every member. Only all k! orderings balance that, 24 games
    at 4 and 720 at 6. Pairs are what the calibration test checks
    (tests/test_calibration.py).

``"cyclic"`` (before)
    The k cyclic shifts of the table (:func:`.schedule.seat_rotations`):
    every member holds every hand once, with k games per deal, but the order
    around the table never changes, so a member always has the same left
    neighbour. With two copies of one bot, the copy that sits after the
    other is systematically better or worse placed (docs/statistics.md).

>>> [len(design(k)) for k in range(3, 7)]
[6, 12, 20, 30]
>>> deal_seatings(("a", "b", "c"), "cyclic")
[('a', 'b', 'c'), ('b', 'c', 'a'), ('c', 'a', 'b')]
>>> deal_seatings(("a", "b", "c"))[3:]
[('a', 'c', 'b'), ('b', 'a', 'c'), ('c', 'b', 'a')]
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BALANCED_6",
    "DEFAULT_SEATING",
    "SEATINGS",
    "SeatingBalance",
    "deal_seatings",
    "design",
    "games_per_deal",
    "resolve_seating",
    "seating_balance",
    "stored_seating",
]

SEATINGS = ("balanced", "cyclic")
"""The designs a tournament may use (``seating`` in its file)."""
DEFAULT_SEATING = "balanced"

Design = tuple[tuple[int, ...], ...]
"""Seatings of one deal: game g puts the table's member ``design[g][s]`` in seat s."""

BALANCED_6: tuple[tuple[int, ...], ...] = (
    (5, 0, 1, 2, 3, 4),
    (0, 5, 2, 4, 1, 3),
    (0, 1, 5, 4, 3, 2),
    (0, 4, 3, 5, 1, 2),
    (0, 2, 4, 3, 5, 1),
    (0, 3, 1, 4, 2, 5),
)
"""The base seatings of the 6-player design, in the search's labels: 5 is the
fixed member, 0..4 are shifted by 0..4 (mod 5) to give the 30 games."""


def _cyclic(k: int) -> Design:
    return tuple(tuple((s + r) % k for s in range(k)) for r in range(k))


def _affine_prime(k: int) -> Design:
    """Seat s gets member a*s + b (mod k), a = 1..k-1, b = 0..k-1 (k prime)."""
    return tuple(tuple((a * s + b) % k for s in range(k)) for a in range(1, k) for b in range(k))


def _alternating_4() -> Design:
    """The even permutations of 4, as the 3 cosets g*V of the Klein group V
    (each coset is a Latin square: every member in every seat once)."""
    klein = ((0, 1, 2, 3), (1, 0, 3, 2), (2, 3, 0, 1), (3, 2, 1, 0))
    shifts = ((0, 1, 2, 3), (1, 2, 0, 3), (2, 0, 1, 3))  # 1, a 3-cycle, its square
    return tuple(tuple(g[v[s]] for s in range(4)) for g in shifts for v in klein)


def _one_rotational_6() -> Design:
    """:data:`BALANCED_6` developed mod 5, relabelled so game 0 is the table's order."""
    games = []
    for shift in range(5):
        for base in BALANCED_6:
            members = [m if m == 5 else (m + shift) % 5 for m in base]
            games.append(tuple((m + 1) % 6 for m in members))  # 5 -> 0, 0 -> 1, ...
    return tuple(games)


_BALANCED: dict[int, Design] = {
    3: _affine_prime(3),
    4: _alternating_4(),
    5: _affine_prime(5),
    6: _one_rotational_6(),
}


def design(k: int, seating: str = DEFAULT_SEATING) -> Design:
    """The seatings of one deal at a table of ``k`` (3 to 6) under ``seating``."""
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {', '.join(SEATINGS)}, not {seating!r}")
    if k not in _BALANCED:
        raise ValueError(f"tables seat 3 to 6 players, not {k}")
    return _cyclic(k) if seating == "cyclic" else _BALANCED[k]


def games_per_deal(k: int, seating: str = DEFAULT_SEATING) -> int:
    """Games of one deal at a table of ``k``: k(k-1) balanced, k cyclic.

    >>> [games_per_deal(k) for k in range(3, 7)], games_per_deal(4, "cyclic")
    ([6, 12, 20, 30], 4)
    """
    return len(design(k, seating))


def deal_seatings(table: Sequence[str], seating: str = DEFAULT_SEATING) -> list[tuple[str, ...]]:
    """The seatings in which ``table`` (its members in seat order) plays one deal."""
    members = tuple(table)
    return [tuple(members[m] for m in game) for game in design(len(members), seating)]


# --------------------------------------------------------------------------- checking


@dataclass(frozen=True)
class SeatingBalance:
    """How evenly a list of seatings (tuples in seat order, one table size)
    spreads seats and neighbours."""

    seats: dict[str, tuple[int, ...]]
    """Times each member sat in seat 0, 1, ..."""
    after: dict[int, dict[tuple[str, str], int]]
    """``after[d][(x, y)]``: times y sat d seats after x (d = 1: the next to play)."""
    seat_pairs: dict[tuple[int, int], dict[tuple[str, str], int]]
    """``seat_pairs[(s, t)][(x, y)]``: games with x in seat s and y in seat t."""

    @property
    def seat_spread(self) -> int:
        """Most minus fewest times any member sat in any seat (0: perfect)."""
        counts = [c for row in self.seats.values() for c in row]
        return max(counts) - min(counts)

    def after_spread(self, d: int) -> int:
        """Most minus fewest times any ordered pair sat ``d`` apart (0: perfect)."""
        counts = list(self.after[d].values())
        return max(counts) - min(counts)

    def even_seat_pairs(self) -> list[tuple[int, int]]:
        """Pairs of seats (s < t) in which every ordered pair of members sat
        equally often."""
        return [
            (s, t)
            for (s, t), counts in self.seat_pairs.items()
            if s < t and len(set(counts.values())) == 1
        ]


def seating_balance(seatings: Iterable[Sequence[str]]) -> SeatingBalance:
    """Seat, distance and seat-pair counts of ``seatings`` (all of one table).

    >>> b = seating_balance(deal_seatings("abcd"))
    >>> b.seat_spread, [b.after_spread(d) for d in (1, 2, 3)], len(b.even_seat_pairs())
    (0, [0, 0, 0], 6)
    >>> c = seating_balance(deal_seatings("abcd", "cyclic"))
    >>> c.seat_spread, c.after[1][("a", "b")], c.after[1][("b", "a")]
    (0, 4, 0)
    """
    rows = [tuple(s) for s in seatings]
    k = len(rows[0])
    names = sorted({x for row in rows for x in row})
    ordered = [(x, y) for x, y in itertools.permutations(names, 2)]
    seats = {x: [0] * k for x in names}
    after = {d: Counter[tuple[str, str]]() for d in range(1, k)}
    pairs = {(s, t): Counter[tuple[str, str]]() for s in range(k) for t in range(k) if s != t}
    for row in rows:
        if len(row) != k:
            raise ValueError("seatings of different table sizes")
        for s, x in enumerate(row):
            seats[x][s] += 1
            for d in range(1, k):
                after[d][(x, row[(s + d) % k])] += 1
            for t, y in enumerate(row):
                if t != s:
                    pairs[(s, t)][(x, y)] += 1
    return SeatingBalance(
        {x: tuple(c) for x, c in seats.items()},
        {d: {p: after[d][p] for p in ordered} for d in after},
        {st: {p: c[p] for p in ordered} for st, c in pairs.items()},
    )


# --------------------------------------------------------------------------- plans


def stored_seating(plan: Mapping[str, Any]) -> str:
    """The seating of a stored plan: one stored before seatings could be chosen
    (no ``seating`` key) was played cyclic.

    >>> stored_seating({"players": 4}), stored_seating({"seating": "balanced"})
    ('cyclic', 'balanced')
    """
    return str(plan.get("seating", "cyclic"))


def resolve_seating(given: str | None, stored_config: Mapping[str, Any] | None) -> str:
    """The seating a run uses: the one ``given`` (the file or ``--seating``);
    else a new tournament's default, or the stored tournament's own seating
    (so a tournament stored before seatings existed resumes as cyclic).

    >>> resolve_seating(None, None), resolve_seating(None, {"plan": {}})
    ('balanced', 'cyclic')
    >>> resolve_seating("cyclic", None)
    'cyclic'
    """
    if given is not None:
        return given
    if stored_config is None:
        return DEFAULT_SEATING
    return stored_seating(stored_config.get("plan") or {})
