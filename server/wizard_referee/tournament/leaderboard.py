"""The leaderboard of a tournament: ratings (Bradley-Terry with bootstrap
intervals over duplicate sets, or provisional Elo) and per-entrant statistics
from the finished games of a results store, as a table, CSV or JSON.

Each row also compares the entrant with the one below it, from the same
bootstrap: their rating difference ``vs_next`` with its 95% interval
(``vs_next_low``, ``vs_next_high``) and ``los``, the likelihood that the upper
one is the better (the share of the bootstrap's redraws rating it above the
other). When the results split the entrants into groups that only an order
connects (one group outscored another in every comparison:
:mod:`wizard_referee.ratings.models`), each group is rated on its own,
``group`` numbers it, the row's ``note`` says so, and between two groups the
table prints ``order only``: no difference, no interval, no LOS."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from wizard_referee.ratings import models as rating_lib
from wizard_referee.ratings.intervals import MIN_SETS, printed_intervals, sets_per_player
from wizard_referee.tournament.store import GameSpec, ResultsStore, SeatResult

__all__ = [
    "Leaderboard",
    "LeaderboardRow",
    "format_leaderboard",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_of",
    "rate_results",
]


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    name: str
    rating: float
    low: float | None
    high: float | None
    games: int
    mean_points: float
    tables_won: float
    """Share of games ranked first (a tie for first counts 1/k)."""
    bid_accuracy: float
    """Share of rounds where bid = tricks."""
    timeouts: int
    illegal: int
    faulted_games: int
    note: str = ""
    """Why ``low`` and ``high`` are missing, and the entrant's group when there
    are several, in words (empty otherwise)."""
    group: int = 1
    """The entrant's group (1 the top one): ratings compare only within a group."""
    vs_next: float | None = None
    """Rating minus the next row's, when both are in one group (else None)."""
    vs_next_low: float | None = None
    vs_next_high: float | None = None
    los: float | None = None
    """Likelihood of superiority over the next row: share of the bootstrap's
    redraws that rate this entrant above it."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Leaderboard:
    rows: tuple[LeaderboardRow, ...]
    method: str
    games: int
    notes: tuple[str, ...] = ()
    provisional: bool = False


def leaderboard(
    store: ResultsStore,
    *,
    method: str = "bt",
    bootstrap: int = 1000,
    seed: int = 0,
    exclude_faulted: bool = False,
) -> Leaderboard:
    """Ratings and statistics of every entrant from the finished games."""
    return leaderboard_of(
        store.finished_games(),
        method=method,
        bootstrap=bootstrap,
        seed=seed,
        exclude_faulted=exclude_faulted,
    )


def leaderboard_of(
    finished: Iterable[tuple[GameSpec, list[SeatResult], bool]],
    *,
    method: str = "bt",
    bootstrap: int = 1000,
    seed: int = 0,
    exclude_faulted: bool = False,
) -> Leaderboard:
    """The leaderboard of finished games given as :meth:`.ResultsStore.finished_games`
    gives them (games played elsewhere, e.g. in-process, rate the same way).

    An entrant that played fewer than :data:`~.intervals.MIN_SETS` deals gets
    no interval (``low``/``high`` None) and a ``note`` saying so."""
    stats, results, games = _tally(finished, exclude_faulted)
    row_notes: dict[str, str] = {}
    if method == "elo":
        rated = rating_lib.elo(results)
    else:
        rated, row_notes = rate_results(results, bootstrap=bootstrap, seed=seed)
    notes = list(rated.notes)
    if exclude_faulted:
        notes.append(
            "games in which a bot was faulted (timed out, made an illegal move, crashed)"
            " are kept out of the ratings"
        )
    rows = _rows(stats, rated, row_notes)
    return Leaderboard(rows, rated.method, games, tuple(notes), rated.provisional)


def rate_results(
    results: list[rating_lib.GameResult], *, bootstrap: int = 1000, seed: int = 0
) -> tuple[rating_lib.RatingResult, dict[str, str]]:
    """The Bradley-Terry ratings the leaderboard prints, and a note per
    entrant: intervals widened for few deals, none below
    :data:`~.intervals.MIN_SETS` deals (:func:`~.intervals.printed_intervals`).
    The calibration (:mod:`.calibrate`) measures exactly these."""
    enough = bootstrap > 0 and any(n >= MIN_SETS for n in sets_per_player(results).values())
    boots = bootstrap if enough else 0  # no resampling when no interval is shown
    rated = rating_lib.bradley_terry(results, bootstrap=boots, seed=seed)
    return printed_intervals(rated, results, withhold=bootstrap > 0)


def _tally(
    finished: Iterable[tuple[GameSpec, list[SeatResult], bool]], exclude_faulted: bool
) -> tuple[dict[str, dict[str, float]], list[rating_lib.GameResult], int]:
    """Each entrant's counts over the finished games, the games' results to
    rate (without the faulted ones when ``exclude_faulted``), and the number
    of finished games."""
    stats: dict[str, dict[str, float]] = {}
    results: list[rating_lib.GameResult] = []
    games = 0
    for spec, seats, faulted in finished:
        games += 1
        winners = [s for s in seats if s.rank == 1]
        for s in seats:
            st = stats.setdefault(s.entrant, dict.fromkeys(_COUNTS, 0))
            st["games"] += 1
            st["points"] += s.total
            if s.rank == 1:
                st["won"] += 1 / len(winners)
            st["rounds"] += len(s.bids)
            st["exact"] += sum(1 for b, t in zip(s.bids, s.tricks, strict=True) if b == t)
            st["timeouts"] += s.faults.get("timeout", 0)
            st["illegal"] += s.faults.get("illegal", 0)
            st["faulted"] += 1 if s.faults else 0
        if exclude_faulted and faulted:
            continue
        results.append(
            rating_lib.GameResult(
                tuple(s.entrant for s in seats),
                tuple(s.total for s in seats),
                spec.duplicate_set,
            )
        )
    return stats, results, games


_COUNTS = ("games", "points", "won", "rounds", "exact", "timeouts", "illegal", "faulted")


def _rows(
    stats: dict[str, dict[str, float]],
    rated: rating_lib.RatingResult,
    row_notes: dict[str, str],
) -> tuple[LeaderboardRow, ...]:
    """One row per entrant in the ratings' order (group by group, best
    first; unrated entrants last, by name)."""
    by_name = rated.by_name()
    order = [p.name for p in rated.players if p.name in stats]
    order += sorted(name for name in stats if name not in by_name)
    below = {n.upper: n for n in rated.neighbours}
    rows = []
    for i, name in enumerate(order):
        st = stats[name]
        r = by_name.get(name)
        nb = below.get(name)
        rows.append(
            LeaderboardRow(
                rank=i + 1,
                name=name,
                rating=r.rating if r else math.nan,
                low=r.low if r else None,
                high=r.high if r else None,
                games=int(st["games"]),
                mean_points=st["points"] / st["games"],
                tables_won=st["won"] / st["games"],
                bid_accuracy=st["exact"] / st["rounds"] if st["rounds"] else 0.0,
                timeouts=int(st["timeouts"]),
                illegal=int(st["illegal"]),
                faulted_games=int(st["faulted"]),
                note=row_notes.get(name, ""),
                group=r.group if r else 1,
                vs_next=nb.difference if nb else None,
                vs_next_low=nb.low if nb else None,
                vs_next_high=nb.high if nb else None,
                los=nb.los if nb else None,
            )
        )
    return tuple(rows)


def _vs_next(r: LeaderboardRow, below: LeaderboardRow | None) -> tuple[str, str]:
    """The table's ``vs next (95% interval)`` and ``LOS`` cells: ``+26 (-80 to
    +108)`` and ``72%``, or ``order only`` between groups."""
    if below is None:
        return "", ""
    if below.group != r.group:
        return "order only", ""
    if r.vs_next is None:
        return "", ""
    cell = f"{r.vs_next:+.0f}"
    if r.vs_next_low is not None and r.vs_next_high is not None:
        cell += f" ({r.vs_next_low:+.0f} to {r.vs_next_high:+.0f})"
    return cell, "" if r.los is None else f"{r.los:.0%}"


def format_leaderboard(board: Leaderboard, header: str = "") -> str:
    """The leaderboard as a text table with its notes; with several groups
    a line ``-- group 2 of 2 (order only between groups) --`` opens each."""
    lines = [header] if header else []
    label = "Elo (provisional)" if board.method == "elo" else "rating (95% interval)"
    bt = board.method != "elo"
    vs = f" {'vs next (95% interval)':<22} {'LOS':>4}" if bt else ""
    lines.append(
        f"{'rank':>4}  {'bot':<20} {label:<26}{vs} {'games':>5} {'mean pts':>8} "
        f"{'won':>6} {'bid acc':>7} {'timeouts':>8} {'illegal':>7}"
    )
    groups = len({r.group for r in board.rows})
    for k, r in enumerate(board.rows):
        if groups > 1 and (k == 0 or r.group != board.rows[k - 1].group):
            lines.append(f"      -- group {r.group} of {groups} (order only between groups) --")
        if r.low is not None and r.high is not None:
            rating = f"{r.rating:7.1f} ({r.low:.0f}-{r.high:.0f})"
        elif r.note:
            rating = f"{r.rating:7.1f} (no interval)"
        else:
            rating = f"{r.rating:7.1f}"
        below = board.rows[k + 1] if k + 1 < len(board.rows) else None
        diff, los = _vs_next(r, below)
        cell = f" {diff:<22} {los:>4}" if bt else ""
        lines.append(
            f"{r.rank:>4}  {r.name:<20} {rating:<26}{cell} {r.games:>5} {r.mean_points:>8.1f} "
            f"{r.tables_won:>6.1%} {r.bid_accuracy:>7.1%} {r.timeouts:>8} {r.illegal:>7}"
        )
    for note in board.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def leaderboard_csv(board: Leaderboard) -> str:
    buf = io.StringIO()
    fields = list(LeaderboardRow.__dataclass_fields__)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in board.rows:
        w.writerow(r.as_dict())
    return buf.getvalue()
