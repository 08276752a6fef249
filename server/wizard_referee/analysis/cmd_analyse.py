"""``wizard-arena analyse``: every bid and card of stored games graded by a
reference evaluator of the seat's own view, per decision and per bot
(docs/analysis.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from wizard_arena.loader import parse_arg
from wizard_arena.rules import RuleError
from wizard_referee.analysis.grade import THRESHOLDS, Graded
from wizard_referee.analysis.run import EVALUATORS, EvaluatorError, grade_many, resolve
from wizard_referee.analysis.summary import bot_summaries, compare_split, mean_text, split_lines
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import ResultsStore, StoreError, open_existing


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "game_id",
        nargs="?",
        help="one recorded game (a unique prefix is enough); without it, every finished game "
        "(of --bot, if given; a comparison's: the candidate seat's decisions)",
    )
    parser.add_argument(
        "--database",
        "-d",
        default="tournament.sqlite",
        metavar="PATH|URL",
        help="results store of a tournament or a comparison: an SQLite file (default "
        "tournament.sqlite) or a postgresql:// URL",
    )
    parser.add_argument("--bot", metavar="NAME", help="grade this entrant's decisions only")
    parser.add_argument(
        "--evaluator",
        default="montecarlo",
        metavar="NAME|MODULE:CLASS",
        help=f"what values each legal action: {', '.join(EVALUATORS)} (default montecarlo, "
        "the reference) or a class with bid_values(view) and action_values(view)",
    )
    parser.add_argument(
        "--evaluator-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a keyword argument of the evaluator (repeatable; e.g. samples=64)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=0,
        metavar="N",
        help="worker processes (default 0: one per core)",
    )
    parser.add_argument("--limit", type=int, metavar="N", help="at most N games")
    parser.add_argument(
        "--decisions",
        action="store_true",
        help="print every graded decision (the default for one game)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _pick(store: ResultsStore, args: argparse.Namespace) -> list[tuple[GameRecord, Any]] | str:
    """The records to grade with the seats to grade in each, or why none."""
    if args.game_id:
        ids = store.find_game_ids(args.game_id) or store.games_told(args.game_id)
        exact = [i for i in ids if i == args.game_id]
        ids = exact or ids
        if not ids:
            return f"no recorded game {args.game_id!r} in {store.where}"
        if len(ids) > 1:
            return f"{args.game_id!r} matches {len(ids)} games: {', '.join(ids[:10])}"
        record = store.record(ids[0])
        assert record is not None
        records = [record]
    elif args.bot:
        records = list(store.records_of(args.bot))
        if not records:
            return f"no finished game of {args.bot!r} in {store.where}"
    else:
        records = [r for spec in store.games("finished") if (r := store.record(spec.id))]
        if not records:
            return f"no finished game in {store.where}"
    if args.limit is not None:
        records = records[: args.limit]
    out: list[tuple[GameRecord, Any]] = []
    for r in records:
        if args.bot:
            seats: tuple[int, ...] | None = tuple(s for s, n in enumerate(r.names) if n == args.bot)
        elif r.tags.get("compare") and not args.game_id:
            seats = (int(r.tags["candidate_seat"]),)
        else:
            seats = None
        out.append((r, seats))
    return out


def decision_line(g: Graded) -> str:
    mark = f" {g.grade}" if g.grade else ""
    best = f" (best {g.best})" if g.best != g.chosen else ""
    fault = f" [{g.fault}]" if g.fault else ""
    return (
        f"  {g.game_id} round {g.round:>2} {g.name:<14} {g.kind:<4} {g.chosen:>3}{best:<11} "
        f"loss {g.loss:6.2f}{mark}{fault}"
    )


def summary_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, s in summaries.items():
        lines.append(
            f"{name}: {s['games']} game(s), loss per game {mean_text(s['per_game'])}, "
            f"bid accuracy {mean_text(s['bid_accuracy'])}"
        )
        for kind in ("bid", "card"):
            k = s[kind]
            counts = ", ".join(f"{v} {g}" for g, v in k["grades"].items())
            lines.append(
                f"  mean loss per {kind}: {mean_text(k['mean_loss'])} over {k['mean_loss']['n']} "
                f"({counts})"
            )
            sizes = "  ".join(f"{c}:{v['mean']:.1f}" for c, v in k["by_size"].items())
            lines.append(f"    by round size: {sizes}")
            if len(k["by_variant"]) > 1:
                for variant, v in k["by_variant"].items():
                    lines.append(f"    {variant}: {mean_text(v)}")
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        kwargs = dict(parse_arg(a) for a in args.evaluator_arg)
        evaluator = resolve(args.evaluator, kwargs)
    except (ValueError, EvaluatorError) as e:
        print(f"error: evaluator {args.evaluator}: {e}", file=sys.stderr)
        return 2
    try:
        store = open_existing(args.database)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with store:
        picked = _pick(store, args)
    if isinstance(picked, str):
        print(f"error: {picked}", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, len(picked))
    done: list[tuple[GameRecord, Sequence[Graded]]] = []
    try:
        for record, graded in grade_many(picked, evaluator, jobs):
            done.append((record, graded))
    except (RuleError, ValueError) as e:
        print(f"error: a game cannot be replayed: {e}", file=sys.stderr)
        return 1
    summaries = bot_summaries(done, [args.bot] if args.bot else None)
    split = None if args.game_id else compare_split(done)
    show = args.decisions or bool(args.game_id)
    if args.json:
        out: dict[str, Any] = {
            "evaluator": {"spec": evaluator[0], "kwargs": evaluator[1]},
            "thresholds": dict(THRESHOLDS),
            "bots": summaries,
        }
        if split is not None:
            out["compare"] = split
        if show:
            out["decisions"] = [g.as_dict() for _, gs in done for g in gs]
        print(json.dumps(out, indent=1))
        return 0
    lines = [f"{len(done)} game(s) graded by {evaluator[0]} {evaluator[1] or ''}".rstrip()]
    if show:
        for _, gs in done:
            lines.extend(decision_line(g) for g in gs)
    lines.extend(summary_lines(summaries))
    if split is not None:
        lines.extend(split_lines(split))
    print("\n".join(lines))
    return 0
