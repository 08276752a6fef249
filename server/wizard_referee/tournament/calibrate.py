"""Calibration of the leaderboard's intervals on fields of known strength.

Does a printed "95% interval" hold the true value 95 times in 100? Only a
field whose true ratings are known can tell, so this module makes them: a
field of ``entrants`` bots with true ratings evenly spaced over ``spread``
Elo points (mean 1500), seated by the tournament's own plan
(:func:`~.plan.plan_games`: its tables, the default seating design, every
seating of a deal a game of one duplicate set), and each game's order of
finish drawn from a **Plackett-Luce** model: the winner is drawn with
probability proportional to ``10 ** (rating / 400)``, then the second among
the rest, and so on (the Gumbel-max trick: sort ``rating / ELO_PER_NAT``
plus a standard Gumbel variable). The pairwise marginals of Plackett-Luce
are Bradley-Terry: in any game, bot i finishes above bot j with probability
``1 / (1 + 10 ** ((R_j - R_i) / 400))``, so the true ratings are what the
leaderboard estimates. No gRPC, no bots, no cards: only the statistics.

Each tournament is rated by the leaderboard's own code
(:func:`~.leaderboard.rate_results`: the fit, the bootstrap over duplicate
sets, the widening and withholding of :mod:`wizard_referee.ratings.intervals`)
and what it prints is checked against the truth:

- each bot's interval for its rating holds its true rating (true ratings and
  fitted ones both have mean 1500);
- each bot's interval for its difference with the next bot listed holds the
  true difference of the two.

``narrow`` (default 1) shrinks every printed interval about its estimate,
0.7 giving intervals 30% too narrow: a planted fault the checks must catch.

>>> case = Case(entrants=4, deal_sets=10)
>>> truth = true_ratings(case)
>>> [round(r) for r in truth.values()]
[1650, 1550, 1450, 1350]
>>> len(plan(case)), len({g.duplicate_set for g in plan(case)})  # 12 seatings of a deal
(120, 10)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from wizard_referee.ratings.models import ELO_PER_NAT, GameResult, RatingResult
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.leaderboard import rate_results
from wizard_referee.tournament.plan import plan_games
from wizard_referee.tournament.store import GameSpec

__all__ = [
    "Case",
    "Coverage",
    "Outcome",
    "measure",
    "outcome",
    "plan",
    "simulate",
    "tournament",
    "true_ratings",
]


@dataclass(frozen=True)
class Case:
    """A simulated tournament: ``entrants`` bots at tables of ``players``,
    ``deal_sets`` deals at each table. With more entrants than a table holds
    the plan is the schedule's cyclic design of ``entrants`` tables (each bot
    at ``players`` tables, so it plays ``players * deal_sets`` duplicate
    sets); with as many, one table (``deal_sets`` sets)."""

    entrants: int
    deal_sets: int
    players: int = 4
    spread: float = 300.0
    """True ratings run from 1500 + spread/2 down to 1500 - spread/2."""

    def sets_per_bot(self) -> int:
        return self.deal_sets * (1 if self.entrants == self.players else self.players)


def true_ratings(case: Case) -> dict[str, float]:
    """Bot name -> true rating, best first, evenly spaced, mean 1500."""
    e = case.entrants
    step = case.spread / (e - 1) if e > 1 else 0.0
    return {f"bot{k:02d}": 1500.0 + case.spread / 2 - k * step for k in range(e)}


def plan(case: Case) -> list[GameSpec]:
    """The tournament's plan for ``case`` (its tables, seatings, duplicate sets)."""
    cfg = TournamentConfig.from_dict(
        {
            "tournament": {
                "players": case.players,
                "deal_sets": case.deal_sets,
                "seed": 1,
                "max_tables": case.entrants,
            },
            "entrant": [{"name": name, "command": "unused"} for name in true_ratings(case)],
        }
    )
    return plan_games(cfg)


def simulate(
    specs: Sequence[GameSpec], truth: dict[str, float], rng: np.random.Generator
) -> list[GameResult]:
    """One game per spec, its order of finish drawn from Plackett-Luce with
    the true ratings: final scores 0, -1, -2, ... from first to last."""
    names = sorted(truth)
    index = {n: k for k, n in enumerate(names)}
    strength = np.array([truth[n] for n in names]) / ELO_PER_NAT
    seats = np.array([[index[n] for n in g.seats] for g in specs])
    utility = strength[seats] + rng.gumbel(size=seats.shape)
    place = np.argsort(np.argsort(-utility, axis=1), axis=1)  # 0 = first
    return [
        GameResult(g.seats, tuple(-int(p) for p in row), g.duplicate_set)
        for g, row in zip(specs, place, strict=True)
    ]


@dataclass(frozen=True)
class Outcome:
    """One tournament: whether each printed interval held the truth, in
    the leaderboard's order (None where nothing was printed)."""

    ratings: tuple[bool | None, ...]
    neighbours: tuple[bool | None, ...]


def tournament(
    case: Case,
    specs: Sequence[GameSpec],
    rng: np.random.Generator,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    narrow: float = 1.0,
) -> Outcome:
    """Simulate, rate as the leaderboard does, and check every interval."""
    truth = true_ratings(case)
    rated, _ = rate_results(simulate(specs, truth, rng), bootstrap=bootstrap, seed=seed)
    return outcome(rated, truth, narrow)


def outcome(rated: RatingResult, truth: dict[str, float], narrow: float = 1.0) -> Outcome:
    """Whether each interval ``rated`` prints (as :func:`rate_results`
    gives them) holds the truth: each bot's rating (true ratings with mean
    1500, as the fit's), and each difference with the next bot listed."""
    ratings: list[bool | None] = []
    for p in rated.players:
        if p.low is None or p.high is None:
            ratings.append(None)
            continue
        low, high = _narrowed(p.rating, p.low, p.high, narrow)
        ratings.append(low <= truth[p.name] <= high)
    neighbours: list[bool | None] = []
    for n in rated.neighbours:
        if n.difference is None or n.low is None or n.high is None:
            neighbours.append(None)
            continue
        low, high = _narrowed(n.difference, n.low, n.high, narrow)
        neighbours.append(low <= truth[n.upper] - truth[n.lower] <= high)
    return Outcome(tuple(ratings), tuple(neighbours))


def _narrowed(point: float, low: float, high: float, narrow: float) -> tuple[float, float]:
    return point - narrow * (point - low), point + narrow * (high - point)


@dataclass
class Coverage:
    """Coverage over many tournaments of one case."""

    case: Case
    outcomes: list[Outcome] = field(default_factory=list)
    cpu_seconds: float = 0.0

    def rate(self, which: str) -> tuple[float, float, int]:
        """Share of printed intervals (``"ratings"`` or ``"neighbours"``)
        that held the truth, its standard error (from the spread of the
        tournaments' shares: the intervals of one tournament are not
        independent), and how many were printed."""
        per = [[x for x in getattr(o, which) if x is not None] for o in self.outcomes]
        per = [p for p in per if p]
        total = sum(len(p) for p in per)
        if not total:
            return float("nan"), float("nan"), 0
        held = sum(sum(p) for p in per)
        share = held / total
        # ratio estimator over tournaments (clusters)
        m = len(per)
        sizes = np.array([len(p) for p in per], dtype=float)
        hits = np.array([sum(p) for p in per], dtype=float)
        resid = hits - share * sizes
        se = float(np.sqrt(m / max(m - 1, 1) * np.sum(resid**2)) / sizes.sum())
        return share, se, total

    def one_each(self, which: str, pick: int) -> list[bool]:
        """One printed interval per tournament (the ``pick``-th, cycling with
        the tournament's number): independent events, for a binomial check."""
        out = []
        for t, o in enumerate(self.outcomes):
            shown = getattr(o, which)
            x = shown[(pick + t) % len(shown)] if shown else None
            if x is not None:
                out.append(x)
        return out


def measure(
    case: Case,
    tournaments: int,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    narrow: float = 1.0,
) -> Coverage:
    """``tournaments`` independent simulated tournaments of ``case``."""
    specs = plan(case)
    rng = np.random.default_rng(seed)
    result = Coverage(case)
    start = time.process_time()
    for t in range(tournaments):
        result.outcomes.append(
            tournament(case, specs, rng, bootstrap=bootstrap, seed=seed + t, narrow=narrow)
        )
    result.cpu_seconds = time.process_time() - start
    return result
