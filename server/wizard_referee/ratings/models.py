"""Ratings from game results: Bradley-Terry (default) and provisional incremental Elo.

A game is a list of players with their final scores. For rating, every game is
split into all pairs of its players: in each pair the higher final score wins
(1 point), the lower loses (0), equal scores are half a point each. A game of
N players gives N(N-1)/2 such comparisons.

Bradley-Terry (:func:`bradley_terry`, the default)
    One batch maximum-likelihood fit over all comparisons on the 400-point Elo
    curve: a rating difference ``d`` gives the expected score
    ``1 / (1 + 10 ** (-d / 400))``. Ratings are shifted so that the pool mean is
    exactly 1500. The fit is Newton's method on the (concave) log-likelihood in
    natural-log strengths, each Newton system solved directly (numpy, many
    resamples at once: :mod:`.batch`), with a backtracking line search; it
    stops when the largest update is below ``tol`` Elo points. The
    aggregated counts are multiples of 1/2, so the fit is exactly
    independent of the order of the games.

    The maximum-likelihood estimate exists (finite, unique) exactly when the
    directed comparison graph (an arc i -> j when i scored anything against j)
    is strongly connected. When it is not, the results tell only an order:
    the graph's strongly connected components (**groups**) are ordered, one
    group above another when its players outscored the other's in every
    comparison they had (directly or through other groups), and how far apart
    two groups are is not measured at all: the likelihood grows without end
    as they move apart. So no rating difference across groups is given.
    Each group is rated on its own (its games among its own players, by the
    same rules; its mean at 1500, so ratings compare only within a group):
    ``PlayerRating.group`` numbers the groups from 1 at the top,
    ``RatingResult.groups`` lists them and a note names them and says that
    only their order is known. A group of one has no interval (nothing to
    measure it against). Players are listed group by group, best first.

    A resample of the bootstrap (below) whose comparisons within a group are
    not strongly connected is fitted with a small prior: every player of it
    gets one virtual draw against a pseudo-player fixed at the origin of the
    scale (1500), and a note counts such resamples. ``split=False`` rates
    every player in one fit instead, with that prior when the whole graph
    is not strongly connected (``prior_used``): the gap it then puts between
    groups comes from the prior, not the results, and grows with the number
    of games; it is kept for comparison and for the reference tests.

    95% intervals: percentile bootstrap. Whole games are resampled with
    replacement (a seeded :class:`random.Random`); games that carry a
    ``duplicate_set`` are resampled as whole sets, each set's games kept
    together (games without one are units of their own). Each resample is
    refitted (warm-started at the full-data fit) with the same rule for the
    prior, and the 2.5% and 97.5% percentiles (linear interpolation) of each
    player's resampled ratings give ``low`` and ``high``. A player missing from
    a resample (all their games left out) gets no value from it. Units are put
    in a canonical order before resampling, so intervals too are independent of
    the input order. (:mod:`.intervals` then withholds and widens them for
    few duplicate sets, as the leaderboard and the ``ratings`` verb print them.)

    Neighbours: for each player and the one listed below it in the same
    group, ``RatingResult.neighbours`` has their rating difference, its 95%
    interval from the same resamples (percentiles of the resampled
    differences, over the resamples that hold both), and the **likelihood of
    superiority** (LOS, as chess tools print it): the share of those
    resamples in which the upper one is rated above the lower (ties count
    half). Across groups there is no difference, interval or LOS, only the
    order.

Incremental Elo (:func:`elo`, provisional)
    Games in the given order; every player at a table of N is updated at once
    from the pre-game ratings: ``R_i += K / (N - 1) * sum_j (S_ij - E_ij)`` over
    the other N - 1 players, ``E_ij = 1 / (1 + 10 ** ((R_j - R_i) / 400))``.
    Start 1500 (per-name overrides), K = 32. It depends on game order and has no
    intervals, so its results are labelled provisional.

>>> games = [GameResult(("a", "b"), (10, 0))]
>>> [(r.name, r.rating) for r in elo(games).players]
[('a', 1516.0), ('b', 1484.0)]
>>> bt = bradley_terry(games * 3, bootstrap=0)  # a always beat b: two groups, order only
>>> [(r.name, r.group, r.rating, r.low) for r in bt.players], bt.groups
([('a', 1, 1500.0, None), ('b', 2, 1500.0, None)], (('a',), ('b',)))
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wizard_referee.ratings.batch import Comparisons, ConvergenceError, fit, resample_counts
from wizard_referee.stats import percentile

__all__ = [
    "BASE_RATING",
    "ELO_PER_NAT",
    "PRIOR_DRAWS",
    "ConvergenceError",
    "EloState",
    "GameResult",
    "Neighbour",
    "PlayerRating",
    "RatingResult",
    "ResultFormatError",
    "bradley_terry",
    "elo",
    "expected_score",
    "game_from_dict",
    "groups",
    "strongly_connected",
]

BASE_RATING = 1500.0
"""Pool mean for Bradley-Terry ratings and the starting rating for Elo."""

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of natural-log strength (about 173.72)."""

PRIOR_DRAWS = 1.0
"""Virtual draws per player against the 1500 pseudo-player when the prior is needed."""

DUPLICATE_SET_KEY = "duplicate_set"


class ResultFormatError(ValueError):
    """A game result is malformed (the message says what is wrong)."""


@dataclass(frozen=True)
class GameResult:
    """One finished game: players and their final scores, seat order irrelevant."""

    players: tuple[str, ...]
    scores: tuple[float, ...]
    duplicate_set: str | int | None = None

    def __post_init__(self) -> None:
        _check_game(self.players, self.scores)

    @classmethod
    def unchecked(
        cls,
        players: tuple[str, ...],
        scores: tuple[float, ...],
        duplicate_set: str | int | None = None,
    ) -> GameResult:
        """A result known to be well formed (read back from a store that
        checked it when it was written), built without the checks: over
        100,000 games they cost more than the fit.

        >>> GameResult.unchecked(("a", "b"), (3, 1), 7) == GameResult(("a", "b"), (3, 1), 7)
        True
        """
        game = object.__new__(cls)
        object.__setattr__(game, "players", players)
        object.__setattr__(game, "scores", scores)
        object.__setattr__(game, "duplicate_set", duplicate_set)
        return game


@dataclass(frozen=True)
class PlayerRating:
    name: str
    rating: float
    low: float | None  # 95% interval; None for Elo or without bootstrap
    high: float | None
    games: int
    group: int = 1
    """Bradley-Terry: the player's group, 1 the top one (ratings compare only within one)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rating": self.rating,
            "low": self.low,
            "high": self.high,
            "games": self.games,
            "group": self.group,
        }


@dataclass(frozen=True)
class Neighbour:
    """A player and the one listed below it: by how much the upper one is
    rated higher, and how sure the resamples are that it is better. Across
    groups (``same_group`` false) only their order is known, so every
    figure is None."""

    upper: str
    lower: str
    same_group: bool
    difference: float | None
    low: float | None  # 95% interval of the difference
    high: float | None
    los: float | None
    """Likelihood of superiority: share of resamples rating ``upper`` above ``lower``."""


@dataclass(frozen=True)
class RatingResult:
    method: str  # "bt" or "elo"
    players: tuple[PlayerRating, ...]  # best first (rating descending, then name)
    provisional: bool = False  # Elo: order-dependent, no intervals
    prior_used: bool = False  # BT point estimate needed the prior (no finite MLE)
    bootstrap: int = 0  # resamples used for the intervals
    bootstrap_prior_used: int = 0  # resamples whose fit needed the prior
    iterations: int = 0  # Newton iterations of the point fit
    notes: tuple[str, ...] = field(default=())
    groups: tuple[tuple[str, ...], ...] = ()
    """Bradley-Terry: the groups, top first (one group when every rating is comparable)."""
    ordered: tuple[bool, ...] = ()
    """Per pair of consecutive groups: whether the upper one is known to be above."""
    neighbours: tuple[Neighbour, ...] = ()
    """Bradley-Terry: each player and the next one listed, in order."""

    def by_name(self) -> dict[str, PlayerRating]:
        return {p.name: p for p in self.players}

    def as_dicts(self) -> list[dict[str, Any]]:
        return [p.as_dict() for p in self.players]


def expected_score(diff: float) -> float:
    """Expected score of a player rated ``diff`` points above the opponent.

    >>> expected_score(0.0), round(expected_score(400.0), 4)
    (0.5, 0.9091)
    """
    return 1.0 / (1.0 + math.pow(10.0, -diff / 400.0))


# --------------------------------------------------------------------------- input


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _check_game(players: Sequence[object], scores: Sequence[object]) -> None:
    if len(players) < 2:
        raise ResultFormatError(f"a game needs at least 2 players, got {len(players)}")
    if len(scores) != len(players):
        raise ResultFormatError(f"{len(players)} players but {len(scores)} scores")
    for p in players:
        if not isinstance(p, str) or not p:
            raise ResultFormatError(f"player names must be non-empty strings, got {p!r}")
    if len(set(players)) != len(players):
        dup = sorted({str(p) for p in players if players.count(p) > 1})
        raise ResultFormatError(f"player listed twice in one game: {', '.join(dup)}")
    for s in scores:
        if not _is_number(s):
            raise ResultFormatError(f"scores must be finite numbers, got {s!r}")


def game_from_dict(obj: object) -> GameResult:
    """Validate one decoded JSON object ``{"players": [...], "scores": [...], ...}``.

    Extra keys are ignored except ``duplicate_set`` (a string or integer, or null).

    >>> game_from_dict({"players": ["a", "b", "c"], "scores": [10, -20, 30], "game_id": 7})
    GameResult(players=('a', 'b', 'c'), scores=(10, -20, 30), duplicate_set=None)
    """
    if not isinstance(obj, Mapping):
        raise ResultFormatError(f"expected a JSON object, got {type(obj).__name__}")
    for key in ("players", "scores"):
        if key not in obj:
            raise ResultFormatError(f'missing key "{key}"')
        if not isinstance(obj[key], list):
            raise ResultFormatError(f'"{key}" must be a list, got {type(obj[key]).__name__}')
    dset = obj.get(DUPLICATE_SET_KEY)
    if dset is not None and (isinstance(dset, bool) or not isinstance(dset, str | int)):
        raise ResultFormatError(f'"duplicate_set" must be a string or integer, got {dset!r}')
    players, scores = obj["players"], obj["scores"]
    _check_game(players, scores)
    return GameResult(tuple(players), tuple(scores), dset)


def _coerce(games: Iterable[GameResult | Mapping[str, Any]]) -> list[GameResult]:
    return [g if isinstance(g, GameResult) else game_from_dict(g) for g in games]


def _game_key(g: GameResult) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(zip(g.players, g.scores, strict=True)))


# --------------------------------------------------------------------------- Elo


class EloState:
    """Incremental Elo, one game at a time (what :func:`elo` runs over a
    list): a live display updates it as games end instead of rating every
    game again.

    >>> live = EloState()
    >>> live.add(("a", "b", "c"), (30, 10, 10))
    >>> live.leader(), round(live.ratings["a"], 1), live.ratings["b"] == live.ratings["c"]
    ('a', 1516.0, True)
    """

    def __init__(
        self,
        k: float = 32.0,
        initial: Mapping[str, float] | None = None,
        start: float = BASE_RATING,
    ) -> None:
        self.k = k
        self.start = start
        self.initial = dict(initial or {})
        self.ratings: dict[str, float] = {}
        self.played: Counter[str] = Counter()

    def add(self, players: Sequence[str], scores: Sequence[float]) -> None:
        """Update every player of one game at once from the pre-game ratings."""
        ratings = self.ratings
        pre = [ratings.setdefault(p, float(self.initial.get(p, self.start))) for p in players]
        n = len(pre)
        scale = self.k / (n - 1)
        for i, name in enumerate(players):
            delta = 0.0
            for j in range(n):
                if j != i:
                    s = scores[i]
                    t = scores[j]
                    actual = 1.0 if s > t else 0.0 if s < t else 0.5
                    delta += actual - expected_score(pre[i] - pre[j])
            ratings[name] = pre[i] + scale * delta
            self.played[name] += 1

    def leader(self) -> str:
        """The best-rated player ("" before any game; ties: the first name)."""
        if not self.ratings:
            return ""
        return min(self.ratings, key=lambda p: (-self.ratings[p], p))


def elo(
    games: Iterable[GameResult | Mapping[str, Any]],
    *,
    k: float = 32.0,
    initial: Mapping[str, float] | None = None,
    start: float = BASE_RATING,
) -> RatingResult:
    """Provisional incremental pairwise Elo over ``games`` in the order given."""
    state = EloState(k, initial, start)
    for g in _coerce(games):
        state.add(g.players, g.scores)
    rated = [PlayerRating(p, r, None, None, state.played[p]) for p, r in state.ratings.items()]
    rated.sort(key=lambda p: (-p.rating, p.name))
    note = (
        f"provisional: Elo updated after every game (K={k:g}), so the same games in another"
        " order give other ratings; and it has no intervals"
    )
    return RatingResult("elo", tuple(rated), provisional=True, notes=(note,))


# --------------------------------------------------------------------------- Bradley-Terry


@dataclass
class _Pairs:
    """Aggregated comparisons between players 0..n-1, for pairs that met (i < j)."""

    n: int
    i: list[int]
    j: list[int]
    w: list[float]  # score of i against j (wins + half the draws)
    m: list[float]  # number of comparisons


def strongly_connected(
    n: int, i: Sequence[int], j: Sequence[int], w: Sequence[float], m: Sequence[float]
) -> bool:
    """Whether the directed graph with an arc a -> b whenever a scored against b is
    strongly connected (the condition for a finite maximum-likelihood fit).

    >>> strongly_connected(2, [0], [1], [1.0], [1.0])  # 0 beat 1, 1 never scored
    False
    >>> strongly_connected(2, [0], [1], [0.5], [1.0])  # a draw: both scored
    True
    """
    if n <= 1:
        return True
    fwd: list[list[int]] = [[] for _ in range(n)]
    rev: list[list[int]] = [[] for _ in range(n)]
    for a, b, wab, mab in zip(i, j, w, m, strict=True):
        if wab > 0:  # a scored against b
            fwd[a].append(b)
            rev[b].append(a)
        if mab - wab > 0:  # b scored against a
            fwd[b].append(a)
            rev[a].append(b)
    for adj in (fwd, rev):
        seen = [False] * n
        seen[0] = True
        stack = [0]
        count = 1
        while stack:
            for b in adj[stack.pop()]:
                if not seen[b]:
                    seen[b] = True
                    count += 1
                    stack.append(b)
        if count != n:
            return False
    return True


def _units(games: list[GameResult]) -> list[list[GameResult]]:
    """Resampling units in a canonical order: duplicate sets, then single games."""
    sets: dict[str | int, list[GameResult]] = {}
    singles: list[GameResult] = []
    for g in games:
        if g.duplicate_set is None:
            singles.append(g)
        else:
            sets.setdefault(g.duplicate_set, []).append(g)
    ordered = sorted(sets.items(), key=lambda kv: (type(kv[0]).__name__, kv[0]))
    out = [sorted(unit, key=_game_key) for _, unit in ordered]
    out += [[g] for g in sorted(singles, key=_game_key)]
    return out


def _comparisons(units: list[list[GameResult]]) -> tuple[list[str], Comparisons]:
    """The players (sorted) and every comparison, summed by pair and unit in
    the order (pair, unit): canonical, so that sums, and so the fits, do not
    depend on the order of the games or the seats."""
    names = sorted({p for unit in units for g in unit for p in g.players})
    index = {name: k for k, name in enumerate(names)}
    n = len(names)
    count = len(units)
    keys: list[int] = []  # (a * n + b) * count + unit, a < b
    scores: list[float] = []  # of a against b
    for u, unit in enumerate(units):
        for g in unit:
            seated = sorted(zip((index[p] for p in g.players), g.scores, strict=True))
            for (a, sa), (b, sb) in itertools.combinations(seated, 2):
                keys.append((a * n + b) * count + u)
                scores.append(1.0 if sa > sb else 0.0 if sa < sb else 0.5)
    key = np.array(keys, dtype=np.int64)
    entry, inverse = np.unique(key, return_inverse=True)
    pairs, entry_pair = np.unique(entry // count, return_inverse=True)
    return names, Comparisons(
        n=n,
        pair_a=pairs // n,
        pair_b=pairs % n,
        units=count,
        entry_pair=entry_pair.astype(np.int64),
        entry_unit=entry % count,
        entry_w=np.bincount(inverse, np.array(scores), minlength=len(entry)).astype(np.float64),
        entry_m=np.bincount(inverse, minlength=len(entry)).astype(np.float64),
    )


def _pairs(c: Comparisons, w: Any, m: Any) -> _Pairs:
    """The pairs that met in one weighting (``w``, ``m`` per pair), numbered
    among the players present in it; and those players' global indices."""
    keep = m > 0
    a, b = c.pair_a[keep], c.pair_b[keep]
    present = np.unique(np.concatenate([a, b]))
    return _Pairs(
        len(present),
        np.searchsorted(present, a).tolist(),
        np.searchsorted(present, b).tolist(),
        w[keep].tolist(),
        m[keep].tolist(),
    )


def groups(
    n: int, i: Sequence[int], j: Sequence[int], w: Sequence[float], m: Sequence[float]
) -> tuple[list[list[int]], list[bool]]:
    """The strongly connected components of the graph of
    :func:`strongly_connected` (each sorted), top first: a group comes
    before every group its players outscored in every comparison, directly
    or through others; groups in no such order are put by their smallest
    member. And for each pair of consecutive groups whether the first is
    known to be above the second (a path of arcs from it to the other).

    >>> groups(3, [0, 1, 0], [1, 2, 2], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])  # 0 > 1 > 2
    ([[0], [1], [2]], [True, True])
    >>> groups(4, [0, 2], [1, 3], [0.5, 0.5], [1.0, 1.0])  # {0, 1} and {2, 3} never met
    ([[0, 1], [2, 3]], [False])
    """
    fwd: list[set[int]] = [set() for _ in range(n)]
    for a, b, wab, mab in zip(i, j, w, m, strict=True):
        if wab > 0:
            fwd[a].add(b)
        if mab - wab > 0:
            fwd[b].add(a)
    comp = _components(n, fwd)
    count = max(comp, default=-1) + 1
    members: list[list[int]] = [[] for _ in range(count)]
    for v in range(n):
        members[comp[v]].append(v)
    succ: list[set[int]] = [set() for _ in range(count)]
    for a in range(n):
        succ[comp[a]].update(comp[b] for b in fwd[a] if comp[b] != comp[a])
    indegree = [0] * count
    for c in range(count):
        for d in succ[c]:
            indegree[d] += 1
    ready = sorted((members[c][0], c) for c in range(count) if indegree[c] == 0)
    order: list[int] = []
    while ready:
        _, c = ready.pop(0)
        order.append(c)
        for d in succ[c]:
            indegree[d] -= 1
            if indegree[d] == 0:
                ready.append((members[d][0], d))
        ready.sort()
    known = [_reaches(succ, a, b) for a, b in itertools.pairwise(order)]
    return [members[c] for c in order], known


def _components(n: int, fwd: list[set[int]]) -> list[int]:
    """Tarjan's strongly connected components, iteratively: a component
    number per vertex."""
    index = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    found = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, iter(sorted(fwd[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            advanced = False
            for u in it:
                if index[u] < 0:
                    index[u] = low[u] = counter
                    counter += 1
                    stack.append(u)
                    on_stack[u] = True
                    work.append((u, iter(sorted(fwd[u]))))
                    advanced = True
                    break
                if on_stack[u]:
                    low[v] = min(low[v], index[u])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    u = stack.pop()
                    on_stack[u] = False
                    comp[u] = found
                    if u == v:
                        break
                found += 1
    return comp


def _reaches(succ: list[set[int]], a: int, b: int) -> bool:
    seen = {a}
    stack = [a]
    while stack:
        for d in succ[stack.pop()]:
            if d == b:
                return True
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return False


def _groups_note(named: list[list[str]], known: list[bool]) -> str:
    def group(k: int) -> str:
        return f"group {k + 1} ({', '.join(named[k])})"

    steps = []
    for k, ordered in enumerate(known):
        if ordered:
            steps.append(f"{group(k)} outscored {group(k + 1)} in every comparison")
        else:
            steps.append(
                f"{group(k)} and {group(k + 1)} were never compared, even through others"
                " (not even their order is known)"
            )
    alone = all(len(g) == 1 for g in named)
    return (
        f"the results tell only the order of {len(named)} groups, not how far apart they"
        f" are: {'; '.join(steps)}. The best fit would put the groups infinitely far"
        " apart, so no rating difference across groups is given: each group is rated on"
        " its own (its mean at 1500, intervals within it), and ratings compare only"
        " within a group"
        + (
            ". Every group is one bot, so every rating is 1500.0: the bots finished in the"
            " same order in every comparison, as few deals often make them; play more"
            " deals (deal_sets, --deal-sets; 10 or more) to measure how far apart they are"
            if alone
            else ""
        )
    )


def _needs_prior(p: _Pairs) -> bool:
    return not strongly_connected(p.n, p.i, p.j, p.w, p.m)


def _prior_note(p: _Pairs, names: list[str]) -> str:
    won = [0.0] * p.n
    lost = [0.0] * p.n
    for a, b, w, m in zip(p.i, p.j, p.w, p.m, strict=True):
        won[a] += w
        lost[a] += m - w
        won[b] += m - w
        lost[b] += w
    unbeaten = [names[k] for k in range(p.n) if lost[k] == 0]
    winless = [names[k] for k in range(p.n) if won[k] == 0]
    why = []
    if unbeaten:
        why.append(", ".join(unbeaten) + " won every comparison (outscored everyone it met)")
    if winless:
        why.append(", ".join(winless) + " lost every comparison")
    if not why:
        why.append("one group of players never lost to (or never met) the rest")
    return (
        "; ".join(why)
        + ", so the best fit would put some ratings infinitely far apart. To keep them"
        f" finite, every player is counted as having drawn {PRIOR_DRAWS:g} extra game"
        " against an imaginary player rated 1500 (a prior), which pulls all ratings a"
        " little towards 1500"
    )


def _bootstrap(
    c: Comparisons, theta: Any, resamples: int, seed: int, tol: float
) -> tuple[Any, int]:
    """The ratings of every resample (resamples x players, NaN where a
    player is missing from it) and how many resamples needed the prior.
    Each resample is fitted warm-started at ``theta``, with the prior only
    when its comparisons have no finite fit."""
    rng = random.Random(seed)
    out = []
    needed = 0
    batch = max(1, min(resamples, 4_000_000 // c.units))
    for counts in resample_counts(rng, c.units, resamples, batch):
        w, m = c.totals(counts)
        need = [_needs_prior(_pairs(c, w[r], m[r])) for r in range(len(counts))]
        needed += sum(need)
        prior = np.where(need, PRIOR_DRAWS, 0.0)
        start = np.broadcast_to(theta, (len(counts), c.n))
        fitted, _, _ = fit(c, w, m, prior, start, tol=tol)
        out.append(BASE_RATING + ELO_PER_NAT * fitted)
    return np.concatenate(out), needed


@dataclass
class _Fit:
    """One Bradley-Terry fit of some players (all of them, or one group)."""

    names: list[str]
    ratings: Any  # (n,) Elo
    samples: Any  # (resamples, n) Elo, NaN where a player is missing; None without
    prior_used: bool
    boot_prior: int
    iterations: int
    notes: list[str]


def _fit(
    data: tuple[list[str], Comparisons], bootstrap: int, seed: int, tol: float, prior_note: bool
) -> _Fit:
    names, comps = data
    w, m = comps.totals(None)
    pairs = _pairs(comps, w[0], m[0])
    assert pairs.n == len(names)
    prior_used = _needs_prior(pairs)
    notes: list[str] = []
    if prior_used and prior_note:
        notes.append(_prior_note(pairs, names))
    prior = np.array([PRIOR_DRAWS if prior_used else 0.0])
    fitted, _, iterations = fit(comps, w, m, prior, np.zeros((1, len(names))), tol=tol)
    theta = fitted[0]
    if bootstrap > 0 and comps.units < 2:
        # resampling one unit reproduces it: a zero-width interval would lie
        notes.append(
            "all the games are one duplicate set (or one game): with nothing to compare it"
            " with, no 95% interval can be given"
        )
        bootstrap = 0
    samples, boot_prior = None, 0
    if bootstrap > 0:
        samples, boot_prior = _bootstrap(comps, theta, bootstrap, seed, tol)
    ratings = BASE_RATING + ELO_PER_NAT * theta
    return _Fit(names, ratings, samples, prior_used, boot_prior, iterations, notes)


def bradley_terry(
    games: Iterable[GameResult | Mapping[str, Any]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    tol: float = 1e-6,
    split: bool = True,
) -> RatingResult:
    """Bradley-Terry maximum-likelihood ratings with bootstrap 95% intervals,
    each group on its own (mean 1500 in each; ``split=False``: all in one fit,
    with the prior when needed).

    ``bootstrap`` resamples (0: no intervals, ``low``/``high`` are None), drawn with
    ``random.Random(seed)``; ``tol`` is the convergence tolerance in Elo points.
    """
    glist = _coerce(games)
    if not glist:
        return RatingResult("bt", ())
    played = Counter(p for g in glist for p in g.players)
    names = sorted(played)
    parts: list[list[str]] = [names]
    known: list[bool] = []
    whole = _comparisons(_units(glist))
    if split:
        comps = whole[1]
        w, m = comps.totals(None)
        pairs = _pairs(comps, w[0], m[0])
        found, known = groups(pairs.n, pairs.i, pairs.j, pairs.w, pairs.m)
        parts = [[names[k] for k in part] for part in found]
    notes: list[str] = []
    if len(parts) > 1:
        notes.append(_groups_note(parts, known))
    fits: list[_Fit | None] = []
    for part in parts:
        if len(part) == 1:
            fits.append(None)
            continue
        data = whole
        if len(parts) > 1:
            members = set(part)
            own = []
            for g in glist:
                kept = [(p, x) for p, x in zip(g.players, g.scores, strict=True) if p in members]
                if len(kept) >= 2:
                    players, scores = zip(*kept, strict=True)
                    own.append(GameResult(players, scores, g.duplicate_set))
            data = _comparisons(_units(own))
        fits.append(_fit(data, bootstrap, seed, tol, prior_note=not split))
    return _assemble(parts, known, fits, played, bootstrap, notes)


def _assemble(
    parts: list[list[str]],
    known: list[bool],
    fits: list[_Fit | None],
    played: Counter[str],
    bootstrap: int,
    notes: list[str],
) -> RatingResult:
    """The result of the groups' fits: players group by group, best first,
    their intervals, the neighbours and the notes."""
    rated: list[PlayerRating] = []
    column: dict[str, tuple[Any, int]] = {}  # name -> (its group's samples, its column)
    for k, (part, f) in enumerate(zip(parts, fits, strict=True)):
        members: list[PlayerRating] = []
        if f is None:  # a group of one: nothing to measure it against
            members.append(PlayerRating(part[0], BASE_RATING, None, None, played[part[0]], k + 1))
        else:
            for g, name in enumerate(f.names):
                low = high = None
                if f.samples is not None:
                    col = f.samples[:, g]
                    s = sorted(col[~np.isnan(col)].tolist())
                    low = percentile(s, 0.025) if s else None
                    high = percentile(s, 0.975) if s else None
                    column[name] = (f.samples, g)
                rating = float(f.ratings[g])
                members.append(PlayerRating(name, rating, low, high, played[name], k + 1))
        members.sort(key=lambda r: (-r.rating, r.name))
        rated += members
    done = [f for f in fits if f is not None]
    for f in done:
        notes += [n for n in f.notes if n not in notes]
    boots = bootstrap if any(f.samples is not None for f in done) else 0
    boot_prior = sum(f.boot_prior for f in done)
    if boot_prior:
        notes.append(
            f"the intervals come from re-rating {boots} random redraws of the duplicate"
            f" sets (the bootstrap); in {boot_prior} of them someone won or lost every"
            " comparison, so the imaginary extra draw against a 1500 player was used there"
        )
    short = sorted(
        name
        for f in done
        if f.samples is not None
        for g, name in enumerate(f.names)
        if np.isnan(f.samples[:, g]).any()
    )
    if short:
        notes.append(
            ", ".join(short) + " played so few duplicate sets that some random redraws"
            " behind the intervals left them out; their intervals come from the others"
        )
    return RatingResult(
        "bt",
        tuple(rated),
        prior_used=any(f.prior_used for f in done),
        bootstrap=boots,
        bootstrap_prior_used=boot_prior,
        iterations=max((f.iterations for f in done), default=0),
        notes=tuple(notes),
        groups=tuple(tuple(r.name for r in rated if r.group == k + 1) for k in range(len(parts))),
        ordered=tuple(known),
        neighbours=tuple(_neighbour(a, b, column) for a, b in itertools.pairwise(rated)),
    )


def _neighbour(a: PlayerRating, b: PlayerRating, column: dict[str, tuple[Any, int]]) -> Neighbour:
    """``a`` and ``b`` (listed next, below it) compared from the same resamples."""
    if a.group != b.group:
        return Neighbour(a.name, b.name, False, None, None, None, None)
    low = high = los = None
    if a.name in column and b.name in column:
        samples, ca = column[a.name]
        _, cb = column[b.name]
        d = samples[:, ca] - samples[:, cb]
        d = d[~np.isnan(d)]
        if len(d):
            s = sorted(d.tolist())
            low, high = percentile(s, 0.025), percentile(s, 0.975)
            los = float(np.mean(d > 0) + 0.5 * np.mean(d == 0))
    return Neighbour(a.name, b.name, True, a.rating - b.rating, low, high, los)
