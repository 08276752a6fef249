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

import hashlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from wizard_arena.protocol.seeds import new_secret
from wizard_referee.compare.plan import SIDES, ComparePlan, PlannedGame
from wizard_referee.compare.stats import ConfidenceSequence, Design, Statement, Verdict
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import ResultsStore, StoreError, start_problem

__all__ = [
    "DIGEST_TAG",
    "CompareError",
    "Comparison",
    "Outcome",
    "Progress",
    "open_comparison",
    "play_digest",
]


class CompareError(Exception):
    """A comparison that cannot run (the message says why and what to do)."""


#: The record tag that keeps a game's :func:`play_digest` (read back on resume).
DIGEST_TAG = "play_digest"


def play_digest(record: GameRecord) -> str:
    """A digest of every move of a game, in order: two games of one deal
    with the same digest were played identically (the same bids, cards and
    trumps by every seat)."""
    h = hashlib.blake2b(digest_size=16)
    for rnd in record.rounds:
        h.update(b"|".join(f"{m.seat}{m.action}".encode() for m in rnd.moves))
        h.update(b"#")
    return h.hexdigest()


def _signed(x: float) -> str:
    return f"{x:+.1f}"


def _shown(design: Design, x: float) -> str:
    """A mean or an end of the sequence: points to a tenth, a share of the
    deals in percent to a tenth."""
    return f"{100 * x:+.1f}%" if design.deals else _signed(x)


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    """UNDECIDED also for a fixed number of games."""
    sequential: bool
    games: int
    """Games counted (two per deal)."""
    deals: int
    identical: int
    """Deals whose two games were played identically."""
    mean: float
    sd: float
    low: float
    """The confidence sequence's lower end (``-bound`` while it has none)."""
    high: float
    bound: float
    """The largest possible difference either way (the rules')."""
    t_interval: tuple[float, float]
    statements: tuple[Statement, ...]
    design: Design
    a_ahead: int = 0
    """Deals on which A's total was above B's."""
    b_ahead: int = 0
    """Deals on which B's total was above A's (the rest were ties)."""
    points_mean: float = 0.0
    """The mean of A - B in points per game, whatever the question."""

    @property
    def ties(self) -> int:
        return self.deals - self.a_ahead - self.b_ahead

    @property
    def text(self) -> str:
        return self.design.verdict_text(self.verdict)

    def interval_text(self) -> str:
        """The sequence's interval, an end that is still the rules' bound said so."""
        d = self.design
        b = f"{d.show(self.bound)[1:]} (the bound)"
        low = "-" + b if self.low <= -self.bound else _shown(d, self.low)
        high = "+" + b if self.high >= self.bound else _shown(d, self.high)
        return f"{low} to {high}"

    def as_dict(self) -> dict[str, Any]:
        low, high = self.t_interval
        d = self.design
        return {
            "verdict": d.verdict_name(self.verdict) if self.sequential else "fixed",
            "text": self.text if self.sequential else "a fixed number of games",
            "games": self.games,
            "deals": self.deals,
            "identical_deals": self.identical,
            "mean": self.mean if self.deals else None,
            "sd": self.sd if self.deals > 1 else None,
            "low": self.low,
            "high": self.high,
            "bound": self.bound,
            "statements": [{"text": s.text, "error": s.error} for s in self.statements],
            # the Student-t interval only for a fixed number of games (a sequential
            # stop biases it)
            "t_low": None if self.sequential or math.isnan(low) else low,
            "t_high": None if self.sequential or math.isnan(high) else high,
            "deals_a_ahead": self.a_ahead,
            "deals_b_ahead": self.b_ahead,
            "deals_tied": self.ties,
            "points_mean": self.points_mean if self.deals else None,
            "test": {"sequential": self.sequential, **d.key()},
        }


@dataclass
class Comparison:
    """The plan, the store and the tally of one comparison.

    ``deals``: the deals planned (the most to play); ``sequential`` False: a
    fixed number of games (all ``deals``), else the design's test stops
    sooner when its answer is known."""

    plan: ComparePlan
    store: ResultsStore
    deals: int
    design: Design
    sequential: bool = True
    cs: ConfidenceSequence = field(init=False)
    verdict: Verdict | None = None
    played: int = 0
    """Games stored (finished) in all."""
    identical: int = 0
    """Deals counted whose two games were played identically."""
    a_ahead: int = 0
    """Deals counted on which A's total was above B's."""
    b_ahead: int = 0
    """Deals counted on which B's total was above A's."""
    points_total: int = 0
    """The sum of A - B over the deals counted."""
    _scores: dict[int, dict[str, tuple[int, str]]] = field(default_factory=dict)
    _queue: Iterator[PlannedGame] | None = None
    _retry: list[PlannedGame] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cs = ConfidenceSequence(self.design.bound(self.plan.rules), self.design)

    @property
    def done(self) -> bool:
        return self.verdict is not None or self.cs.n >= self.deals

    @property
    def counted(self) -> int:
        return 2 * self.cs.n

    def outcome(self) -> Outcome:
        cs = self.cs
        return Outcome(
            self.verdict or Verdict.UNDECIDED,
            self.sequential,
            self.counted,
            cs.n,
            self.identical,
            cs.mean,
            cs.sd,
            cs.lower(),
            cs.upper(),
            cs.bound,
            cs.t_interval(),
            tuple(cs.statements()),
            self.design,
            self.a_ahead,
            self.b_ahead,
            self.points_total / cs.n if cs.n else 0.0,
        )

    def load(self) -> None:
        """Count the games already in the store (on resume): the totals from
        the seat results, the digests from the records' tags (computed from
        the record where a game was stored without one)."""
        digests = self.store.record_tags(DIGEST_TAG)
        for spec, seats, _ in self.store.finished_games():
            side = SIDES[spec.rotation]
            total = next((s.total for s in seats if s.entrant == side), None)
            if total is None:
                continue
            digest = digests.get(spec.id)
            if digest is None:
                record = self.store.record(spec.id)
                digest = play_digest(record) if record is not None else ""
            self._add(spec.deal_set, side, total, str(digest))

    def add(self, game: PlannedGame, record: GameRecord) -> None:
        """Store a game's record; count it if it finished (an aborted game
        is played again)."""
        digest = record.tags[DIGEST_TAG] = play_digest(record)
        self.store.save_game(game.spec, record)
        if record.status != "finished":
            self._retry.append(game)
            return
        self._add(game.deal, game.side, record.totals[game.candidate_seat], digest)

    def _add(self, deal: int, side: str, total: int, digest: str) -> None:
        self.played += 1
        self._scores.setdefault(deal, {})[side] = (total, digest)
        while not self.done:
            pair = self._scores.get(self.cs.n)
            if pair is None or len(pair) < 2:
                break
            (a, a_digest), (b, b_digest) = pair["A"], pair["B"]
            try:
                self.cs.add(self.design.outcome(a - b))
            except ValueError as e:  # a total beyond the rules' range: a bug to report
                raise CompareError(f"deal {self.cs.n} (games d{self.cs.n}-A, -B): {e}") from None
            self.identical += a_digest == b_digest and a == b
            self.a_ahead += a > b
            self.b_ahead += b > a
            self.points_total += a - b
            if self.sequential:
                self.verdict = self.cs.decide()

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
    database: str | Path,
    deals: int,
    design: Design,
    *,
    sequential: bool = True,
    resume: bool,
    secret: str | None,
) -> Comparison:
    """Create the store (or open it to resume; the plan and the test must
    match: only the number of games may change), with the planned games up to
    ``deals``; return the comparison with what is already stored counted.
    The plan's secret is the stored one."""
    try:
        problem = start_problem(database, resume=resume, what="comparison")
        if problem is not None:
            raise CompareError(problem)
        store = ResultsStore(database, create=not resume)
    except StoreError as e:
        raise CompareError(str(e)) from None
    test = {"sequential": sequential, **design.key()}
    try:
        stored = store.tournament_config()
        if stored is None:
            secret = secret or new_secret()
            plan = _with_secret(plan, secret)
            store.create(
                "compare",
                {"plan": plan.key(), "bot_seed_secret": secret, "test": test},
                [(n, "compare", t) for n, t in _entrant_rows(plan)],
                [g.spec for g in plan.games(range(deals))],
                plan.rules.to_dict(),
            )
        else:
            plan = _check_stored(plan, stored, store.where, secret)
            _check_test(test, stored, store)
            have = {g.id for g in store.games()}
            missing = [g.spec for g in plan.games(range(deals)) if g.spec.id not in have]
            if missing:
                store.add_games(missing, plan.rules.to_dict())
    except BaseException:
        store.close()
        raise
    try:
        comparison = Comparison(plan, store, deals, design, sequential)
        comparison.load()
    except BaseException:
        store.close()
        raise
    return comparison


def _with_secret(plan: ComparePlan, secret: str) -> ComparePlan:
    from dataclasses import replace

    return replace(plan, secret=secret)


def _entrant_rows(plan: ComparePlan) -> list[tuple[str, str]]:
    bots = (plan.a, plan.b, *plan.opponents)
    return [(name, bot.text) for name, bot in zip(plan.names, bots, strict=True)]


def _check_stored(
    plan: ComparePlan, stored: dict[str, Any], path: str, secret: str | None
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


#: How each part of the stored test is given on the command line.
_TEST_OPTIONS = {
    "method": "the method",
    "h0": "--h0",
    "h1": "--h1",
    "alpha": "--alpha",
    "beta": "--beta",
    "margin": "--margin",
    "question": "--question",
}


def _test_text(key: str, value: Any) -> str:
    if key == "sequential":
        return "a sequential test" if value else "a fixed number of games (--games)"
    return f"{_TEST_OPTIONS.get(key, key)} {value!r}" if value is not None else f"no {key}"


def _check_test(test: dict[str, Any], stored: dict[str, Any], store: ResultsStore) -> None:
    """Refuse to judge stored games by another test than the one they were
    planned for (a comparison stored before tests were kept takes the one given)."""
    have = stored.get("test")
    if have is None:
        store.update_config({**stored, "test": test})
        return
    have = {"question": "points", **have}  # stored before the deals question was offered
    differ = [k for k in sorted(set(have) | set(test)) if have.get(k) != test.get(k)]
    if differ:
        shown = "; ".join(
            f"stored {_test_text(k, have.get(k))}, given {_test_text(k, test.get(k))}"
            for k in differ
        )
        raise CompareError(
            f"the test does not match the one stored in {store.where} ({shown}): resume with "
            "the stored test (only the number of games, --max-games or --games N, may "
            "change), or start another comparison with a new --database"
        )


#: Deals all played identically after which the progress says what that means.
IDENTICAL_NOTE_DEALS = 10


@dataclass
class Progress:
    """The progress line: games, the running estimate and the confidence
    sequence's ends ("-" for an end still at the rules' bound)."""

    comparison: Comparison
    stream: TextIO | None = None
    interval: float = 1.0
    started: float = field(default_factory=time.monotonic)
    at_start: int = 0
    _last: float = 0.0
    _shown: str = ""
    """The last line written, without its rate."""
    _said_identical: bool = False

    def __post_init__(self) -> None:
        self.at_start = self.comparison.played

    def line(self) -> str:
        c = self.comparison
        cs = c.cs
        elapsed = time.monotonic() - self.started
        rate = (c.played - self.at_start) / elapsed if elapsed > 0 else 0.0
        text = f"games {c.played}/{2 * c.deals}"
        if cs.n:
            low, high = cs.lower(), cs.upper()
            ends = (
                "-" if low <= -cs.bound else _shown(c.design, low),
                "-" if high >= cs.bound else _shown(c.design, high),
            )
            if c.design.deals:
                text += (
                    f"  net deals {_shown(c.design, cs.mean)} (A ahead {c.a_ahead}, B ahead "
                    f"{c.b_ahead}), sequence {ends[0]} to {ends[1]} "
                    f"({cs.n} deals, {c.identical} identical)"
                )
            else:
                text += (
                    f"  A-B {cs.mean:+.1f} pts/game, sequence {ends[0]} to {ends[1]} "
                    f"({cs.n} deals, {c.identical} identical)"
                )
        else:
            text += f"  {c.design.measure} -"
        return text + f"  {rate:.1f} games/s"

    def tick(self, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        tty = self.stream.isatty()
        line = self.line()
        if not tty and line.rsplit("  ", 1)[0] == self._shown:
            return  # a log, not a screen: a line only when something changed
        self._shown = line.rsplit("  ", 1)[0]
        self.stream.write(("\r" if tty else "") + line + ("" if tty else "\n"))
        note = self.identical_note()
        if note:
            self.stream.write(("\n" if tty else "") + note + "\n")
        self.stream.flush()

    def identical_note(self) -> str:
        """Once, when the first :data:`IDENTICAL_NOTE_DEALS` deals were all
        played identically: what that means, early (the verdict is far off)."""
        c = self.comparison
        n = c.cs.n
        if self._said_identical or n < IDENTICAL_NOTE_DEALS or c.identical != n:
            return ""
        self._said_identical = True
        return (
            f"note: all {n} deals so far were played identically by A and B (the same "
            "moves in both games of each deal): they look like the same deterministic bot, "
            "and no number of games will tell them apart; the verdict will be 'not stronger' "
            "once the sequence rules out the threshold"
        )

    def end(self) -> None:
        if self.stream is None:
            return
        self.tick(force=True)
        if self.stream.isatty():
            self.stream.write("\n")
            self.stream.flush()
