"""``wizard-arena ratings RESULTS.jsonl``: rate players from game results (JSON lines).

One game per line: ``{"players": ["a", "b", ...], "scores": [120, 80, ...]}``;
other keys are allowed (``duplicate_set`` groups games for the bootstrap), blank
lines are skipped, and a malformed line stops the command with ``FILE:LINE:`` and
the reason (exit status 2). ``-`` reads standard input.

The default method is a Bradley-Terry fit with bootstrap 95% intervals; ``--method
elo`` gives provisional incremental Elo (``low``/``high`` are null in ``--json``).
With ``--json`` the output is a list of ``{"name", "rating", "low", "high",
"games"}`` objects, best first, and notes go to standard error; ``--csv``
prints the same rows as CSV. For Bradley-Terry each row also has ``group``,
the comparison with the next row (``vs_next``, ``vs_next_low``,
``vs_next_high``, ``los``: the rating difference, its 95% interval and the
likelihood of superiority, null across groups) and ``note``, the leaderboard's
vocabulary. A player in fewer than 10 deals (``duplicate_set``s; a game outside any
counts as one) gets no interval (:mod:`.intervals`): ``(no interval)``, as
on a tournament's leaderboard, and a note says why;
results that split the players into groups only an order connects are rated
group by group, and the notes say so (:mod:`.models`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from typing import Any, TextIO

from wizard_referee.ratings.intervals import MIN_SETS, printed_intervals, sets_per_player
from wizard_referee.ratings.models import (
    GameResult,
    Neighbour,
    RatingResult,
    ResultFormatError,
    bradley_terry,
    elo,
    game_from_dict,
)

PROG = "wizard-arena ratings"


class InputError(Exception):
    """Unusable input or options; the message is printed as is, exit status 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="RESULTS.jsonl", help="game results, one JSON object a line"
    )
    parser.add_argument(
        "--method",
        choices=("bt", "elo"),
        default="bt",
        help="bt: Bradley-Terry with 95%% intervals (default); elo: provisional incremental Elo",
    )
    parser.add_argument("--k", type=float, default=None, help="Elo K factor (default 32)")
    parser.add_argument(
        "--initial",
        action="extend",
        nargs="+",
        default=[],
        metavar="NAME=RATING",
        help="Elo starting rating for a player (default 1500); repeatable",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    out.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        metavar="N",
        help="bt: bootstrap resamples for the intervals (default 1000, 0 for none)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="bt: bootstrap random seed (default 0)"
    )


def _read(path: str, stream: TextIO) -> list[GameResult]:
    games = []
    for lineno, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from None
        try:
            games.append(game_from_dict(obj))
        except ResultFormatError as exc:
            raise InputError(f"{path}:{lineno}: {exc}") from None
    return games


def load_results(paths: list[str]) -> list[GameResult]:
    """All games in ``paths`` (``-`` is standard input), in file order."""
    games: list[GameResult] = []
    for path in paths:
        if path == "-":
            games += _read("<stdin>", sys.stdin)
            continue
        try:
            with open(path, encoding="utf-8") as f:
                games += _read(path, f)
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return games


def _parse_initial(items: list[str]) -> dict[str, float]:
    out = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            rating = float(value)
        except ValueError:
            rating = float("nan")
        if not sep or not name or rating != rating or rating in (float("inf"), float("-inf")):
            raise InputError(f"--initial expects NAME=RATING (a number), got {item!r}")
        out[name] = rating
    return out


def _check_options(args: argparse.Namespace) -> None:
    if args.method == "bt":
        for flag, given in (("--k", args.k is not None), ("--initial", bool(args.initial))):
            if given:
                raise InputError(f"{flag} applies only to --method elo")
        if args.bootstrap is not None and args.bootstrap < 0:
            raise InputError("--bootstrap must be 0 or more")
    else:
        for flag, value in (("--bootstrap", args.bootstrap), ("--seed", args.seed)):
            if value is not None:
                raise InputError(f"{flag} applies only to --method bt (Elo has no intervals)")
        if args.k is not None and not args.k > 0:
            raise InputError("--k must be a positive number")


def _interval(low: float | None, high: float | None) -> str:
    """A 95% interval as the tournament's leaderboard writes it."""
    return "(no interval)" if low is None or high is None else f"({low:.0f}-{high:.0f})"


def rows(result: RatingResult, notes: dict[str, str]) -> list[dict[str, Any]]:
    """The ``--json`` and ``--csv`` rows, best first. Bradley-Terry rows add
    the group, the comparison with the next row and the note."""
    if result.method != "bt":
        return [{k: v for k, v in p.as_dict().items() if k != "group"} for p in result.players]
    below = {n.upper: n for n in result.neighbours}
    out = []
    for p in result.players:
        n = below.get(p.name)
        out.append(
            {
                **p.as_dict(),
                "vs_next": n.difference if n else None,
                "vs_next_low": n.low if n else None,
                "vs_next_high": n.high if n else None,
                "los": n.los if n else None,
                "note": notes.get(p.name, ""),
            }
        )
    return out


def _vs_next(n: Neighbour | None) -> tuple[str, str]:
    if n is None:
        return "", ""
    if not n.same_group:
        return "order only", ""
    cell = "-" if n.difference is None else f"{n.difference:+.1f}"
    if n.low is not None and n.high is not None:
        cell += f" ({n.low:+.1f} to {n.high:+.1f})"
    return cell, "-" if n.los is None else f"{n.los:.0%}"


def format_table(result: RatingResult, intervals: bool | None = None) -> str:
    """The ratings as an aligned text table, best first, in the leaderboard's
    words: ``1535.1 (1504-1568)``, ``(no interval)`` for a player with too
    few deals. ``intervals`` (default: whether any was drawn): whether to
    show the interval (not for Elo, nor with ``--bootstrap 0``). Bradley-Terry
    adds the comparison with the next row and, with several groups, a line
    ``-- group 2 of 2 (order only between groups) --`` opening each."""
    if intervals is None:
        intervals = result.method == "bt" and result.bootstrap > 0
    label = "rating (95% interval)" if intervals else "rating"
    if result.provisional:
        label = "Elo (provisional)"
    bt = result.method == "bt"
    head = ["rank", "name", label, "games"]
    table = [head + (["vs next (95% interval)", "LOS"] if bt else [])]
    below = {n.upper: n for n in result.neighbours}
    for rank, p in enumerate(result.players, 1):
        rating = f"{p.rating:.1f}"
        if intervals:
            rating = f"{rating:>7} {_interval(p.low, p.high)}"
        row = [str(rank), p.name, rating, str(p.games)]
        table.append(row + (list(_vs_next(below.get(p.name))) if bt else []))
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    lines = []
    groups = len(result.groups)
    for k, row in enumerate(table):
        group = result.players[k - 1].group if k else 0
        if groups > 1 and k and (k == 1 or group != result.players[k - 2].group):
            lines.append(f"  -- group {group} of {groups} (order only between groups) --")
        pairs = enumerate(zip(row, widths, strict=True))
        cells = [cell.ljust(w) if c in (1, 2, 4) else cell.rjust(w) for c, (cell, w) in pairs]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_csv(data: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if data:
        w = csv.DictWriter(buf, fieldnames=list(data[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(data)
    return buf.getvalue()


def run(args: argparse.Namespace) -> int:
    try:
        _check_options(args)
        initial = _parse_initial(args.initial)
        games = load_results(args.files)
        if not games:
            raise InputError(f"no game results in {', '.join(args.files)}")
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    per_player: dict[str, str] = {}
    if args.method == "elo":
        k = 32.0 if args.k is None else args.k
        result = elo(games, k=k, initial=initial)
    else:
        boots = 1000 if args.bootstrap is None else args.bootstrap
        if not any(n >= MIN_SETS for n in sets_per_player(games).values()):
            boots = 0  # nobody gets an interval: no resampling
        result = bradley_terry(games, bootstrap=boots, seed=args.seed or 0)
        result, per_player = printed_intervals(
            result, games, unit="deals", withhold=args.bootstrap != 0
        )
    notes = list(result.notes)
    if result.method == "bt":
        what = (
            f"95% intervals from re-rating {result.bootstrap} random redraws of the deals"
            " (duplicate_set; the bootstrap)"
            if result.bootstrap
            else "no intervals"
        )
        notes.insert(
            0,
            f"Bradley-Terry ratings from {len(games)} games (average 1500"
            f"{' in each group' if len(result.groups) > 1 else ''}; 400 points apart"
            f" means winning 10 comparisons for every 1 lost); {what}",
        )
    if args.json or args.csv:
        data = rows(result, per_player)
        if args.json:
            print(json.dumps(data, indent=2))
        else:
            print(format_csv(data), end="")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    else:
        print(format_table(result, intervals=args.method == "bt" and args.bootstrap != 0))
        for note in notes:
            print(f"note: {note}")
    return 0
