"""The ladder's matchmaking and ratings on simulated fields of known strength.

A field: ``entries`` with true ratings evenly spaced over ``spread`` Elo
points (mean 1500); each comes and goes, online a share ``online`` of the
time in periods of ``stay`` set durations on average (exponential, as the
periods offline); ``late`` of them are registered only at time ``joins``.
Time runs in set durations: a duplicate set lasts 0.8 to 1.2 (uniform), so
sets end at different times, as they do in a running ladder. Whenever an
entry comes online or a set ends, the ladder's own matchmaker
(:mod:`.matchmaking`, with the live ratings, its patience half a set)
forms tables from the online entries not at a table; each table plays one
duplicate set, the season's seatings of one deal, each game's order of
finish drawn from Plackett-Luce with the true ratings (the calibration
harness's :func:`wizard_referee.tournament.calibrate.simulate`); when it
ends its members' live ratings are updated as the runner updates them.

Three things are measured (``bench/bench_ladder.py --simulate``; docs/ladder.md):

- the **comparison graph** of the games so far (an arc from a to b when a
  outscored b at least once) is strongly connected: one group, so every
  entry's official rating compares with every other's;
- every active entry's sets **grow without bound**: the fewest sets of a
  registered entry grows with time, a late entry's too;
- the official intervals' **coverage** under this adaptive matchmaking (it
  chooses opponents from the results): each printed interval of an entry's
  rating, and of its difference with the next entry, holds the truth as
  often as it says (:func:`coverage`, the calibration harness's checks).

>>> run = season(Field(entries=8, players=4), duration=12.0, seed=1)
>>> run.checkpoints[-1].groups, run.checkpoints[-1].fewest > 0
(1, True)
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wizard_referee.ladder.matchmaking import Candidate, Matchmaker, Policy
from wizard_referee.ladder.plackett_luce import LiveModel
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
    """Share of the time an entry is online."""
    stay: float = 10.0
    """Mean length of an online period, in set durations."""
    late: int = 0
    """Entries registered only at time ``joins`` (the weakest ones)."""
    joins: float = 0.0
    random_share: float = 0.25
    patience: float = 0.5
    """Set durations an anchor waits rather than repeat a recent table."""

    def truth(self) -> dict[str, float]:
        step = self.spread / (self.entries - 1) if self.entries > 1 else 0.0
        return {f"e{k:02d}": 1500.0 + self.spread / 2 - k * step for k in range(self.entries)}


@dataclass(frozen=True)
class Checkpoint:
    time: float
    sets: int
    """Sets finished so far."""
    groups: int
    """Strongly connected groups of the comparison graph (1: connected)."""
    fewest: int
    """The fewest sets of an entry registered so far."""
    fewest_late: int
    """The fewest sets of a late entry (0 before they join)."""
    tables: int
    """Different tables (sets of members) played so far."""


@dataclass
class Run:
    games: list[GameResult] = field(default_factory=list)
    sets: Counter[str] = field(default_factory=Counter)
    tables: set[frozenset[str]] = field(default_factory=set)
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


class _Season:
    """One season's state as the events come (see :func:`season`)."""

    def __init__(self, f: Field, seed: int) -> None:
        self.f = f
        self.truth = f.truth()
        self.names = list(self.truth)
        self.late = set(self.names[len(self.names) - f.late :]) if f.late else set()
        self.rng = np.random.default_rng(seed)
        self.matchmaker = Matchmaker(
            Policy(players=f.players, random_share=f.random_share, patience=f.patience),
            random.Random(seed),
        )
        self.model = LiveModel()
        self.ratings: dict[str, tuple[float, float]] = {}
        self.run = Run()
        self.events: list[tuple[float, int, str, Any]] = []
        self.order = itertools.count()
        self.online: set[str] = set()
        self.playing: set[str] = set()
        self.free_since: dict[str, float] = {}

    def at(self, time: float, kind: str, what: Any = None) -> None:
        heapq.heappush(self.events, (time, next(self.order), kind, what))

    def registered(self, now: float) -> list[str]:
        return [n for n in self.names if n not in self.late or now >= self.f.joins]

    def period(self, online: bool) -> float:
        """How long an entry stays online (or offline) from now."""
        if online and self.f.online >= 1.0:
            return math.inf  # always online
        mean = self.f.stay if online else self.f.stay * (1 - self.f.online) / self.f.online
        return float(self.rng.exponential(mean))

    def toggle(self, name: str, now: float) -> None:
        if name in self.online:
            self.online.discard(name)
        else:
            self.online.add(name)
            self.free_since[name] = now
        self.at(now + self.period(name in self.online), "toggle", name)

    def match(self, now: float) -> None:
        while True:
            reg = set(self.registered(now))
            free = [
                n for n in self.names if n in self.online and n in reg and n not in self.playing
            ]
            available = [
                Candidate(
                    self.names.index(n),
                    *self.ratings.get(n, self.model.prior),
                    self.run.sets[n],
                    self.free_since.get(n, now),
                )
                for n in free
            ]
            table = self.matchmaker.table(available, now, len(self.playing))
            if table is None:
                if len(available) >= self.f.players and self.f.patience > 0:  # waiting
                    self.at(now + self.matchmaker.patience, "look")
                return
            members = [self.names[k] for k in table]
            self.playing.update(members)
            self.at(now + float(self.rng.uniform(0.8, 1.2)), "end", members)

    def end(self, members: list[str], now: float) -> None:
        number = sum(self.run.sets.values()) // self.f.players  # (the set's own unit)
        specs = [GameSpec("", 0, number, 0, i, "", s) for i, s in enumerate(deal_seatings(members))]
        played = simulate(specs, self.truth, self.rng)
        self.run.games += played
        totals = Counter[str]()
        for g in played:
            totals.update(dict(zip(g.players, g.scores, strict=True)))
        after = self.model.rate(
            [self.ratings.get(m) for m in members], [totals[m] for m in members]
        )
        self.ratings.update(zip(members, after, strict=True))
        self.run.sets.update(members)
        self.run.tables.add(frozenset(members))
        self.playing.difference_update(members)
        for m in members:
            self.free_since[m] = now

    def check(self, now: float) -> None:
        reg = self.registered(now)
        late = [n for n in self.late if n in reg]
        self.run.checkpoints.append(
            Checkpoint(
                now,
                sum(self.run.sets.values()) // self.f.players,
                comparison_groups(self.run.games),
                min(self.run.sets[n] for n in reg),
                min((self.run.sets[n] for n in late), default=0),
                len(self.run.tables),
            )
        )


def season(f: Field, duration: float, seed: int, checkpoints: Sequence[float] = ()) -> Run:
    """One simulated season of ``duration`` set durations (checked at each
    time of ``checkpoints``, and at the end)."""
    s = _Season(f, seed)
    for name in s.names:
        online = bool(s.rng.random() < f.online)
        if online:
            s.online.add(name)
            s.free_since[name] = 0.0
        s.at(s.period(online), "toggle", name)
    if f.late:
        s.at(f.joins, "look")
    for t in {*checkpoints, duration}:
        s.at(t, "check")
    s.at(0.0, "look")
    while s.events:
        now, _, kind, what = heapq.heappop(s.events)
        if now > duration:
            break
        if kind == "toggle":
            s.toggle(what, now)
        elif kind == "end":
            s.end(what, now)
        elif kind == "check":
            s.check(now)
            continue
        s.match(now)
    return s.run


def coverage(
    f: Field,
    duration: float,
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
        run = season(f, duration, seed + s)
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
