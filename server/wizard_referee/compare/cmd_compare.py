"""``wizard-arena compare A B``: is bot A stronger than bot B?

A and B play the same deals from the same seat against the same opponents
(duplicate replacement), and a sequential test stops as soon as the answer
is known (:mod:`.stats`); ``--games N`` plays a fixed number instead and
prints the mean difference with its 95% interval. See docs/tournament.md,
"Comparing two bots".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_referee.compare.plan import DEFAULT_OPPONENTS, BotSpec, ComparePlan, parse_bot
from wizard_referee.compare.session import CompareError, Comparison, Outcome, Progress
from wizard_referee.compare.stats import Bounds, Verdict
from wizard_referee.tournament.cmd_tournament import add_executor_arguments

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    bot_help = (
        "MODULE:CLASS or path/to/file.py:CLASS, optionally with constructor arguments "
        "as in 'pkg.mod:Bot(depth=2)'; anything else is a command line started like a "
        "tournament entrant's ({server}, {token} and {name} replaced)"
    )
    parser.add_argument("a", metavar="A", help="the candidate: " + bot_help)
    parser.add_argument("b", metavar="B", help="the baseline (same forms)")
    parser.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="BOT",
        help="an opponent (repeat for each seat; fewer are repeated in turn); default the "
        "example bots: " + ", ".join(DEFAULT_OPPONENTS),
    )
    add_rules_arguments(parser, players_help="table size, 3-6 (default 4)")
    _add_test_arguments(parser)
    _add_running_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def _add_test_arguments(parser: argparse.ArgumentParser) -> None:
    t = parser.add_argument_group("the test")
    t.add_argument(
        "--h0",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="H0: A is better by this many points per game (default 0)",
    )
    t.add_argument(
        "--h1",
        type=float,
        default=20.0,
        metavar="POINTS",
        help="H1: A is better by this many points per game (default 20)",
    )
    t.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="chance of 'A is stronger' when H0 holds (default 0.05)",
    )
    t.add_argument(
        "--beta",
        type=float,
        default=0.05,
        help="chance of 'no difference' when H1 holds (default 0.05)",
    )
    t.add_argument(
        "--max-games",
        type=int,
        default=4000,
        metavar="N",
        help="stop undecided after N games (default 4000)",
    )
    t.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="no sequential test: play N games (N/2 deals) and print the mean "
        "difference with its 95%% interval",
    )
    t.add_argument(
        "--no-duplicate",
        dest="duplicate",
        action="store_false",
        help="B plays other deals than A (to measure what duplicates are worth)",
    )


def _add_running_arguments(parser: argparse.ArgumentParser) -> None:
    r = parser.add_argument_group("running")
    r.add_argument("--seed", type=int, default=1, help="deal seed (default 1)")
    r.add_argument(
        "--parallel",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="games at once (default: the number of cores)",
    )
    r.add_argument(
        "--database",
        default="compare.sqlite",
        metavar="PATH",
        help="results database (default compare.sqlite)",
    )
    r.add_argument(
        "--resume", action="store_true", help="continue (or re-read) a comparison from its database"
    )
    r.add_argument(
        "--referee",
        action="store_true",
        help="play over the referee even when every bot is a Python class",
    )
    r.add_argument(
        "--move-time",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="deadline per decision over the referee (default 1)",
    )
    add_executor_arguments(r)
    r.add_argument(
        "--bot-seed-secret",
        metavar="TEXT",
        help="secret of the bots' per-game seeds (default: random, kept in the "
        "database); give one to make the comparison reproducible",
    )


def _opponents(texts: list[str], players: int) -> tuple[BotSpec, ...]:
    given = texts or list(DEFAULT_OPPONENTS)
    if len(given) > players - 1:
        raise ValueError(
            f"{len(given)} opponents for {players - 1} seats: give --players {len(given) + 1}"
        )
    return tuple(parse_bot(given[k % len(given)]) for k in range(players - 1))


def _settings(args: argparse.Namespace) -> tuple[ComparePlan, int, Bounds | None]:
    """The plan, the deals to plan and the test; ValueError says what is wrong."""
    rules = rules_from_args(args)
    plan = ComparePlan(
        parse_bot(args.a),
        parse_bot(args.b),
        _opponents(args.opponent, rules.players),
        rules,
        seed=args.seed,
        duplicate=args.duplicate,
    )
    if args.parallel < 1:
        raise ValueError("--parallel must be at least 1")
    if args.games is not None:
        if args.games < 4:
            raise ValueError("--games must be at least 4 (two deals)")
        return plan, (args.games + 1) // 2, None
    if args.max_games < 2:
        raise ValueError("--max-games must be at least 2")
    bounds = Bounds(args.h0, args.h1, args.alpha, args.beta)
    return plan, (args.max_games + 1) // 2, bounds


def run(args: argparse.Namespace) -> int:
    from wizard_arena.client.cmd_bot import SpecError
    from wizard_referee.compare.session import open_comparison

    try:
        plan, deals, bounds = _settings(args)
        in_process = not args.referee and all(b.is_class for b in (plan.a, plan.b, *plan.opponents))
        _check_executor(args, in_process)
        _check_bots(plan, in_process)
        comparison = open_comparison(
            plan,
            Path(args.database),
            deals,
            bounds,
            resume=args.resume,
            secret=args.bot_seed_secret,
        )
    except (ValueError, SpecError, CompareError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    progress = Progress(comparison, None if args.quiet else sys.stderr)
    try:
        with comparison.store:
            if not args.quiet:
                print(_header(comparison, in_process, args.parallel), file=sys.stderr)
            if not comparison.done:
                _play(comparison, in_process, args, progress)
            progress.end()
    except CompareError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: the finished games are kept in {args.database}; continue with "
            "the same command and --resume",
            file=sys.stderr,
        )
        return 130
    _report(comparison.outcome(), bounds, args)
    return 0


def _check_bots(plan: ComparePlan, in_process: bool) -> None:
    from wizard_referee.compare.local_play import check_bot

    for bot in (plan.a, plan.b, *plan.opponents):
        if bot.is_class:
            if in_process:
                check_bot(bot)
            else:
                from wizard_arena.client.cmd_bot import load_class

                assert bot.target is not None
                load_class(bot.target)


#: executor name -> the module that plays a comparison with it (loaded when chosen)
EXECUTORS = {"ray": "wizard_referee.cluster.compare_play"}


def _check_executor(args: argparse.Namespace, in_process: bool) -> None:
    """ValueError for an executor that cannot play this comparison."""
    if (args.executor or "local") == "local":
        return
    if not in_process:
        raise ValueError(
            "--executor ray plays Python bot classes in-process on the cluster's workers; "
            "bots given as commands (or --referee) play over a referee on this machine: "
            "leave out --executor"
        )
    import importlib

    try:
        importlib.import_module(EXECUTORS[args.executor])
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "ray":
            raise
        raise ValueError(
            "--executor ray needs Ray, an optional extra: pip install 'wizard-arena[ray]'"
        ) from None


def _play(
    comparison: Comparison, in_process: bool, args: argparse.Namespace, progress: Progress
) -> None:
    if (args.executor or "local") != "local":
        import importlib

        module = importlib.import_module(EXECUTORS[args.executor])
        module.play_compare(
            comparison, progress, workers=args.workers or 0, address=args.ray_address or ""
        )
        return
    if in_process:
        from wizard_referee.compare.local_play import play_in_process

        play_in_process(comparison, args.parallel, progress)
        return
    import trio

    from wizard_referee.compare.referee_play import play_over_referee
    from wizard_referee.referee.logs import configure_logging, log_file

    log = log_file(Path(str(comparison.store.path) + ".logs") / "runner.log")
    configure_logging("warning", "json", log)
    try:
        trio.run(
            lambda: play_over_referee(comparison, args.parallel, progress, move_time=args.move_time)
        )
    finally:
        log.close()


def _header(c: Comparison, in_process: bool, parallel: int) -> str:
    p = c.plan
    lines = [
        f"compare A = {p.a.text}",
        f"   with B = {p.b.text}",
        f"  against {', '.join(o.text for o in p.opponents)}",
        f"  {p.rules.describe()}, {'duplicate deals' if p.duplicate else 'independent deals'}, "
        f"{'in-process' if in_process else 'over the referee'}, {parallel} at once",
    ]
    if c.bounds is not None:
        b = c.bounds
        lines.append(
            f"  SPRT H0: A-B = {b.mu0:+g}, H1: A-B = {b.mu1:+g} points per game, "
            f"alpha {b.alpha:g}, beta {b.beta:g}: LLR bounds {b.lower:+.2f} and {b.upper:+.2f}"
        )
    else:
        lines.append(f"  {2 * c.deals} games ({c.deals} deals)")
    if c.played:
        lines.append(f"  {c.played} games already in {c.store.path}")
    return "\n".join(lines)


def _report(outcome: Outcome, bounds: Bounds | None, args: argparse.Namespace) -> None:
    if args.json:
        out: dict[str, Any] = outcome.as_dict(bounds)
        out["database"] = args.database
        print(json.dumps(out, indent=2))
        return
    s = outcome.stats
    low, high = s.interval()
    estimate = (
        f"mean difference A - B: {s.mean:+.1f} points per game, 95% interval "
        f"{low:+.1f} to {high:+.1f} ({s.n} deals, {outcome.games} games)"
        if s.n >= 2
        else f"{outcome.games} games: too few for an estimate"
    )
    if bounds is None:
        print(estimate)
        if s.n >= 2:
            if low > 0:
                print("A is stronger: the 95% interval lies above 0")
            elif high < 0:
                print("B is stronger: the 95% interval lies below 0")
            else:
                print(
                    f"no difference shown: the 95% interval contains 0 after {outcome.games} games"
                )
    else:
        llr = outcome.llr or 0.0
        if outcome.verdict is Verdict.STRONGER:
            print(
                f"A is stronger: LLR {llr:+.2f} reached {bounds.upper:+.2f} after "
                f"{outcome.games} games (A scores at least about {bounds.mu1:g} points per "
                f"game more than B; wrong with chance at most about {bounds.alpha:g})"
            )
        elif outcome.verdict is Verdict.NO_DIFFERENCE:
            print(
                f"no difference: LLR {llr:+.2f} reached {bounds.lower:+.2f} after "
                f"{outcome.games} games (A is not {bounds.mu1:g} points per game better than "
                f"B; wrong with chance at most about {bounds.beta:g})"
            )
        else:
            print(
                f"undecided after {outcome.games} games: LLR {llr:+.2f} stayed between "
                f"{bounds.lower:+.2f} and {bounds.upper:+.2f} (raise --max-games and --resume)"
            )
        print(
            estimate + ("; the interval is approximate after a sequential test" if s.n >= 2 else "")
        )
    print(
        f"results in {args.database} (a game: wizard-arena replay d0-A --database {args.database})"
    )
