"""The ladder's matchmaking and ratings on simulated fields of known strength.

A field: ``entries`` with true ratings evenly spaced over ``spread`` Elo
points (mean 1500), each online in a round with probability ``online``
(independently, round by round: entries come and go), ``late`` of them
registered only after ``joins`` rounds. A round: the online entries form
the available ones; the ladder's own matchmaker (:mod:`.matchmaking`, with
the live ratings) forms tables until too few are left; each table plays one
duplicate set, the season's seatings of one deal, each game's order of
finish drawn from Plackett-Luce with the true ratings (the calibration
harness's :func:`wizard_referee.tournament.calibrate.simulate`); then the
members' live ratings are updated as the runner updates them.

Three things are measured (``bench/bench_ladder.py --simulate``; docs/ladder.md):

- the **comparison graph** of the games so far (an arc from a to b when a
  outscored b at least once) is strongly connected: one group, so every
  entry's official rating compares with every other's;
- every active entry's sets **grow without bound**: the fewest sets of an
  entry registered for ``k`` rounds grows with ``k``;
- the official intervals' **coverage** under this adaptive matchmaking (it
  chooses opponents from the results): each printed interval of an entry's
  rating, and of its difference with the next entry, holds the truth as
  often as it says (:func:`coverage`, the calibration harness's checks).

>>> run = season(Field(entries=8, players=4), rounds=12, seed=1)
>>> run.checkpoints[-1].groups, run.checkpoints[-1].fewest > 0
(1, True)
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from wizard_referee.ladder.live import LiveModel
from wizard_referee.ladder.matchmaking import Candidate, Matchmaker, Policy
from wizard_referee.ratings.models import GameResult, groups
from wizard_referee.tournament.calibrate import Case, Coverage, outcome, simulate
from wizard_referee.tournament.leaderboard import rate_results
from wizard_referee.tournament.seating import deal_seatings
from wizard_referee.tournament.store import GameSpec

__all__ = ["Checkpoint", "Field", "Run", "comparison_groups", "coverage", "season"]


@dataclass(frozen=True)
class Field:
    entries: int = 16
    players: int = 4
    spread: float = 300.0
    """True ratings run from 1500 + spread/2 down to 1500 - spread/2."""
    online: float = 0.75
    """Chance an entry is online in a round."""
    late: int = 0
    """Entries registered only after ``joins`` rounds (the weakest ones)."""
    joins: int = 0
    random_share: float = 0.25

    def truth(self) -> dict[str, float]:
        step = self.spread / (self.entries - 1) if self.entries > 1 else 0.0
        return {f"e{k:02d}": 1500.0 + self.spread / 2 - k * step for k in range(self.entries)}


@dataclass(frozen=True)
class Checkpoint:
    round: int
    sets: int
    """Sets played so far."""
    groups: int
    """Strongly connected groups of the comparison graph (1: connected)."""
    fewest: int
    """The fewest sets of an entry registered so far."""
    fewest_late: int
    """The fewest sets of a late entry (0 before they join)."""


@dataclass
class Run:
    games: list[GameResult] = field(default_factory=list)
    sets: Counter[str] = field(default_factory=Counter)
    checkpoints: list[Checkpoint] = field(default_factory=list)


def comparison_groups(games: Sequence[GameResult]) -> int:
    """The strongly connected groups of the games' comparison graph."""
    names = sorted({p for g in games for p in g.players})
    index = {n: k for k, n in enumerate(names)}
    pairs: dict[tuple[int, int], list[float]] = {}
    for g in games:
        seated = sorted((index[p], s) for p, s in zip(g.players, g.scores, strict=True))
        for x in range(len(seated)):
            for y in range(x + 1, len(seated)):
                (a, sa), (b, sb) = seated[x], seated[y]
                w = pairs.setdefault((a, b), [0.0, 0.0])
                w[0] += 1.0 if sa > sb else 0.0 if sa < sb else 0.5
                w[1] += 1.0
    keys = list(pairs)
    found, _ = groups(
        len(names),
        [a for a, _ in keys],
        [b for _, b in keys],
        [pairs[k][0] for k in keys],
        [pairs[k][1] for k in keys],
    )
    return len(found)


def season(f: Field, rounds: int, seed: int, checkpoints: Sequence[int] = ()) -> Run:
    """One simulated season of ``rounds`` rounds (checked after each round
    in ``checkpoints``, and after the last)."""
    truth = f.truth()
    names = list(truth)
    late = set(names[len(names) - f.late :]) if f.late else set()
    rng = np.random.default_rng(seed)
    choose = random.Random(seed)
    matchmaker = Matchmaker(Policy(players=f.players, random_share=f.random_share), choose)
    model = LiveModel()
    ratings: dict[str, tuple[float, float]] = {}
    run = Run()
    marks = {*checkpoints, rounds}
    for r in range(1, rounds + 1):
        registered = [n for n in names if n not in late or r > f.joins]
        online = [n for n in registered if rng.random() < f.online]
        available = [
            Candidate(k, *ratings.get(names[k], model.prior), run.sets[names[k]], 0.0)
            for k, n in enumerate(names)
            if n in online
        ]
        while True:
            table = matchmaker.table(available)
            if table is None:
                break
            available = [c for c in available if c.key not in table]
            members = [names[k] for k in table]
            set_id = sum(run.sets.values()) // f.players
            specs = [
                GameSpec("", 0, set_id, 0, i, "", s) for i, s in enumerate(deal_seatings(members))
            ]
            played = simulate(specs, truth, rng)
            run.games += played
            totals = Counter[str]()
            for g in played:
                totals.update(dict(zip(g.players, g.scores, strict=True)))
            after = model.rate([ratings.get(m) for m in members], [totals[m] for m in members])
            ratings.update(zip(members, after, strict=True))
            run.sets.update(members)
        if r in marks:
            reg = [n for n in names if n not in late or r > f.joins]
            run.checkpoints.append(
                Checkpoint(
                    r,
                    sum(run.sets.values()) // f.players,
                    comparison_groups(run.games),
                    min(run.sets[n] for n in reg),
                    min((run.sets[n] for n in late), default=0) if r > f.joins else 0,
                )
            )
    return run


def coverage(
    f: Field,
    rounds: int,
    seasons: int,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    narrow: Sequence[float] = (1.0,),
) -> tuple[list[Coverage], int]:
    """The official intervals' coverage over ``seasons`` simulated seasons
    (the calibration harness's :class:`~wizard_referee.tournament.calibrate.Coverage`),
    one per factor of ``narrow`` (0.5: every interval half as wide, a
    planted fault), and how many seasons were left out because their
    results split into several groups (ratings compare only within a
    group: the truth cannot be put on their scale)."""
    results = [Coverage(Case(f.entries, 0, f.players, f.spread)) for _ in narrow]  # (a field)
    split = 0
    start = time.process_time()
    truth = f.truth()
    for s in range(seasons):
        run = season(f, rounds, seed + s)
        rated, _ = rate_results(run.games, bootstrap=bootstrap, seed=seed + s)
        if len(rated.groups) > 1:
            split += 1
            continue
        played = [p.name for p in rated.players]
        centre = sum(truth[n] for n in played) / len(played) - 1500.0
        shifted = {n: truth[n] - centre for n in played}
        for result, factor in zip(results, narrow, strict=True):
            result.outcomes.append(outcome(rated, shifted, factor))
    for result in results:
        result.cpu_seconds = time.process_time() - start
    return results, split
