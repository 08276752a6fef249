"""One comparison: its results store, the tally of finished games and the
statistics that say when to stop.

The statistics see the deals **in plan order**: a deal counts once both of
its games are stored and every earlier deal has counted. Games run in
parallel and finish out of order, so at most a few deals wait for an
earlier one; in exchange the answer, and the game at which it is reached,
depend only on the games' results, never on timing, and a resumed
comparison reaches exactly the answer an uninterrupted one would. Games
finished beyond the deal that decided are kept in the store, not counted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from wizard_arena.protocol.seeds import new_secret
from wizard_referee.compare.plan import SIDES, ComparePlan, PlannedGame
from wizard_referee.compare.stats import Bounds, PairedStats, Verdict
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import ResultsStore, StoreError

__all__ = ["CompareError", "Comparison", "Outcome", "Progress", "open_comparison"]


class CompareError(Exception):
    """A comparison that cannot run (the message says why and what to do)."""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    games: int
    """Games counted (two per deal)."""
    stats: PairedStats
    llr: float | None
    """The final LLR (None: a fixed number of games)."""

    def as_dict(self, bounds: Bounds | None) -> dict[str, Any]:
        low, high = self.stats.interval()
        out: dict[str, Any] = {
            "verdict": self.verdict.name.lower(),
            "text": self.verdict.value,
            "games": self.games,
            "deals": self.stats.n,
            "mean": self.stats.mean,
            "sd": self.stats.sd,
            "low": None if math.isnan(low) else low,
            "high": None if math.isnan(high) else high,
        }
        if bounds is not None:
            out.update(
                llr=self.llr,
                lower=bounds.lower,
                upper=bounds.upper,
                mu0=bounds.mu0,
                mu1=bounds.mu1,
                alpha=bounds.alpha,
                beta=bounds.beta,
            )
        return out


@dataclass
class Comparison:
    """The plan, the store and the tally of one comparison.

    ``deals``: the deals planned (the most to play); ``bounds`` None: a fixed
    number of games (all ``deals``), else an SPRT that may stop sooner."""

    plan: ComparePlan
    store: ResultsStore
    deals: int
    bounds: Bounds | None
    stats: PairedStats = field(default_factory=PairedStats)
    verdict: Verdict | None = None
    played: int = 0
    """Games stored (finished) in all."""
    _scores: dict[int, dict[str, int]] = field(default_factory=dict)
    _queue: Iterator[PlannedGame] | None = None
    _retry: list[PlannedGame] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.verdict is not None or self.stats.n >= self.deals

    @property
    def counted(self) -> int:
        return 2 * self.stats.n

    def outcome(self) -> Outcome:
        verdict = self.verdict or Verdict.UNDECIDED
        llr = self.stats.llr(self.bounds) if self.bounds is not None else None
        return Outcome(verdict, self.counted, self.stats, llr)

    def load(self) -> None:
        """Count the games already in the store (on resume)."""
        for spec, seats, _ in self.store.finished_games():
            side = SIDES[spec.rotation]
            total = next((s.total for s in seats if s.entrant == side), None)
            if total is not None:
                self._add(spec.deal_set, side, total)

    def add(self, game: PlannedGame, record: GameRecord) -> None:
        """Store a game's record; count it if it finished (an aborted game
        is played again)."""
        self.store.save_game(game.spec, record)
        if record.status != "finished":
            self._retry.append(game)
            return
        self._add(game.deal, game.side, record.totals[game.candidate_seat])

    def _add(self, deal: int, side: str, total: int) -> None:
        self.played += 1
        self._scores.setdefault(deal, {})[side] = total
        while not self.done:
            pair = self._scores.get(self.stats.n)
            if pair is None or len(pair) < 2:
                break
            self.stats.add(pair["A"] - pair["B"])
            if self.bounds is not None:
                self.verdict = self.stats.verdict(self.bounds)

    def next_game(self) -> PlannedGame | None:
        """The next game to play (in plan order), or None when there is none
        (decided, or every planned game is stored or being played)."""
        if self.done:
            return None
        if self._retry:
            return self._retry.pop(0)
        if self._queue is None:
            self._queue = iter(self.plan.games(range(self.deals)))
        for game in self._queue:
            if game.side in self._scores.get(game.deal, {}):
                continue
            return game
        return None


def open_comparison(
    plan: ComparePlan,
    database: Path,
    deals: int,
    bounds: Bounds | None,
    *,
    resume: bool,
    secret: str | None,
) -> Comparison:
    """Create the store (or open it to resume; the plan must match), with
    the planned games up to ``deals``; return the comparison with what is
    already stored counted. The plan's secret is the stored one."""
    exists = database.exists()
    if exists and not resume:
        raise CompareError(
            f"{database} exists: continue that comparison with --resume, "
            "or give another database (--database PATH)"
        )
    if resume and not exists:
        raise CompareError(f"{database} does not exist: nothing to resume")
    try:
        store = ResultsStore(database, create=not resume)
    except StoreError as e:
        raise CompareError(str(e)) from None
    try:
        stored = store.tournament_config()
        if stored is None:
            secret = secret or new_secret()
            plan = _with_secret(plan, secret)
            store.create(
                "compare",
                {"plan": plan.key(), "bot_seed_secret": secret},
                [(n, "compare", t) for n, t in _entrant_rows(plan)],
                [g.spec for g in plan.games(range(deals))],
                plan.rules.to_dict(),
            )
        else:
            plan = _check_stored(plan, stored, store.path, secret)
            have = {g.id for g in store.games()}
            missing = [g.spec for g in plan.games(range(deals)) if g.spec.id not in have]
            if missing:
                store.add_games(missing, plan.rules.to_dict())
    except BaseException:
        store.close()
        raise
    comparison = Comparison(plan, store, deals, bounds)
    comparison.load()
    return comparison


def _with_secret(plan: ComparePlan, secret: str) -> ComparePlan:
    from dataclasses import replace

    return replace(plan, secret=secret)


def _entrant_rows(plan: ComparePlan) -> list[tuple[str, str]]:
    bots = (plan.a, plan.b, *plan.opponents)
    return [(name, bot.text) for name, bot in zip(plan.names, bots, strict=True)]


def _check_stored(
    plan: ComparePlan, stored: dict[str, Any], path: Path, secret: str | None
) -> ComparePlan:
    key = stored.get("plan") or {}
    if key.get("kind") != "compare":
        raise CompareError(f"{path} holds a tournament, not a comparison")
    mine = plan.key()
    differ = [k for k in sorted(set(key) | set(mine)) if key.get(k) != mine.get(k)]
    if differ:
        shown = "; ".join(f"{k}: stored {key.get(k)!r}, given {mine.get(k)!r}" for k in differ)
        raise CompareError(
            f"the comparison does not match the one stored in {path} ({shown}): "
            "resume with the stored values, or start another with a new --database"
        )
    stored_secret = str(stored.get("bot_seed_secret") or "")
    if secret is not None and secret != stored_secret:
        raise CompareError(
            "--bot-seed-secret differs from the one stored with the comparison: leave it out"
        )
    return _with_secret(plan, stored_secret)


@dataclass
class Progress:
    """The progress line: games, the running estimate, the LLR and its bounds."""

    comparison: Comparison
    stream: TextIO | None = None
    interval: float = 1.0
    started: float = field(default_factory=time.monotonic)
    at_start: int = 0
    _last: float = 0.0

    def __post_init__(self) -> None:
        self.at_start = self.comparison.played

    def line(self) -> str:
        c = self.comparison
        s = c.stats
        elapsed = time.monotonic() - self.started
        rate = (c.played - self.at_start) / elapsed if elapsed > 0 else 0.0
        text = f"games {c.played}/{2 * c.deals}"
        if s.n >= 2:
            low, high = s.interval()
            text += f"  A-B {s.mean:+.1f} pts/game (95% {low:+.1f} to {high:+.1f}, {s.n} deals)"
        else:
            text += "  A-B -"
        if c.bounds is not None:
            b = c.bounds
            text += f"  LLR {s.llr(b):+.2f} [{b.lower:+.2f}, {b.upper:+.2f}]"
        return text + f"  {rate:.1f} games/s"

    def tick(self, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        tty = self.stream.isatty()
        self.stream.write(("\r" if tty else "") + self.line() + ("" if tty else "\n"))
        self.stream.flush()

    def end(self) -> None:
        if self.stream is None:
            return
        self.tick(force=True)
        if self.stream.isatty():
            self.stream.write("\n")
            self.stream.flush()
