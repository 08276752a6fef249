"""The leaderboard of a tournament: ratings (Bradley-Terry with bootstrap
intervals over duplicate sets, or provisional Elo) and per-entrant statistics
from the finished games of a results store, as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from wizard_referee.ratings import models as rating_lib
from wizard_referee.ratings.intervals import MIN_SETS, sets_per_player, withhold_thin_intervals
from wizard_referee.tournament.store import GameSpec, ResultsStore, SeatResult

__all__ = [
    "Leaderboard",
    "LeaderboardRow",
    "format_leaderboard",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_of",
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
    """Why ``low`` and ``high`` are missing, in words (empty when they are not)."""

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
        enough = any(n >= MIN_SETS for n in sets_per_player(results).values())
        boots = bootstrap if enough else 0  # no resampling when no interval is shown
        rated = rating_lib.bradley_terry(results, bootstrap=boots, seed=seed)
        if bootstrap > 0:
            rated, row_notes = withhold_thin_intervals(rated, results)
    notes = list(rated.notes)
    if exclude_faulted:
        notes.append(
            "games in which a bot was faulted (timed out, made an illegal move, crashed)"
            " are kept out of the ratings"
        )
    rows = _rows(stats, rated.by_name(), row_notes)
    return Leaderboard(rows, rated.method, games, tuple(notes), rated.provisional)


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
    by_name: dict[str, rating_lib.PlayerRating],
    row_notes: dict[str, str],
) -> tuple[LeaderboardRow, ...]:
    """One row per entrant, best rating first (unrated entrants last, by name)."""
    rated = []
    for name, st in stats.items():
        r = by_name.get(name)
        rated.append(
            (
                r.rating if r else math.nan,
                name,
                r.low if r else None,
                r.high if r else None,
                st,
            )
        )
    rated.sort(key=lambda x: (-(x[0] if not math.isnan(x[0]) else -1e9), x[1]))
    return tuple(
        LeaderboardRow(
            rank=i + 1,
            name=name,
            rating=rating,
            low=low,
            high=high,
            games=int(st["games"]),
            mean_points=st["points"] / st["games"],
            tables_won=st["won"] / st["games"],
            bid_accuracy=st["exact"] / st["rounds"] if st["rounds"] else 0.0,
            timeouts=int(st["timeouts"]),
            illegal=int(st["illegal"]),
            faulted_games=int(st["faulted"]),
            note=row_notes.get(name, ""),
        )
        for i, (rating, name, low, high, st) in enumerate(rated)
    )


def format_leaderboard(board: Leaderboard, header: str = "") -> str:
    lines = []
    if header:
        lines.append(header)
    label = "Elo (provisional)" if board.method == "elo" else "rating (95% interval)"
    lines.append(
        f"{'rank':>4}  {'bot':<20} {label:<26} {'games':>5} {'mean pts':>8} "
        f"{'won':>6} {'bid acc':>7} {'timeouts':>8} {'illegal':>7}"
    )
    for r in board.rows:
        if r.low is not None and r.high is not None:
            rating = f"{r.rating:7.1f} ({r.low:.0f}-{r.high:.0f})"
        elif r.note:
            rating = f"{r.rating:7.1f} (no interval)"
        else:
            rating = f"{r.rating:7.1f}"
        lines.append(
            f"{r.rank:>4}  {r.name:<20} {rating:<26} {r.games:>5} {r.mean_points:>8.1f} "
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
