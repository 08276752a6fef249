"""``wizard-arena compare A B``: is bot A stronger than bot B?

A and B play the same deals from the same seat against the same opponents
(duplicate replacement), and an anytime-valid confidence sequence for the
mean difference stops the comparison as soon as the answer is known
(:mod:`.stats`); ``--margin D`` asks whether A is not weaker than B by D
points per game or more; ``--games N`` plays a fixed number instead. See
docs/compare.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_referee.compare.comparison import CompareError, Comparison, Outcome, Progress
from wizard_referee.compare.plan import DEFAULT_OPPONENTS, BotSpec, ComparePlan, parse_bot
from wizard_referee.compare.stats import DEFAULT_H1, QUESTIONS, Design, Verdict
from wizard_referee.referee.grpc_setup import prepare_referee_transport
from wizard_referee.sandbox.cli import add_sandbox_arguments, limits_from_args
from wizard_referee.storage import beside_store, database_target, shown
from wizard_referee.tournament.config_keys import add_executor_arguments

__all__ = ["DEFAULT_MAX_GAMES", "add_arguments", "run"]

#: The cap on games of a sequential comparison: "undecided" at most 5% of the
#: time where the true difference is h0 or h1, for differences of spread 200
#: points per game at 4 players (bench/bench_compare_oc.py, docs/statistics.md).
DEFAULT_MAX_GAMES = 6000


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
    _add_sandbox_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument(
        "--why",
        action="store_true",
        help="end the report with how much of A - B comes from bidding and how much from "
        "play: each decision of the candidate seat graded by the learned evaluator "
        "(wizard-arena analyse; needs numpy: the rl extra)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def _add_test_arguments(parser: argparse.ArgumentParser) -> None:
    t = parser.add_argument_group("the test")
    t.add_argument(
        "--question",
        choices=QUESTIONS,
        default="points",
        help="points (default): does A score more points per game than B? deals: does A "
        "outscore B on more deals than B outscores A (ties count for neither)? With deals, "
        "--h0, --h1 and --margin are shares of the deals (0.1: 10%%; default --h1 0.1)",
    )
    t.add_argument(
        "--h0",
        type=float,
        metavar="POINTS",
        help="stop with 'A is stronger' once A-B > H0 points per game is shown (default 0)",
    )
    t.add_argument(
        "--h1",
        type=float,
        metavar="POINTS",
        help="stop with 'A is not stronger by H1 or more' once A-B < H1 is shown (default 20)",
    )
    t.add_argument(
        "--margin",
        type=float,
        metavar="POINTS",
        help="non-inferiority instead: stop with 'A is not weaker than B by POINTS or more' "
        "(A-B > -POINTS shown) or 'A scores less than B' (A-B < 0 shown)",
    )
    t.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="chance that a claim 'A-B > x' is ever wrong (the lower end; default 0.05)",
    )
    t.add_argument(
        "--beta",
        type=float,
        default=0.05,
        help="chance that a claim 'A-B < x' is ever wrong (the upper end; default 0.05)",
    )
    t.add_argument(
        "--max-games",
        type=int,
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help=f"stop undecided after N games (default {DEFAULT_MAX_GAMES})",
    )
    t.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="no stopping rule: play N games (N/2 deals) and print what they show",
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
        metavar="N",
        help="games at once on this machine (default: the number of cores); with "
        "--executor ray each Ray worker plays one game at a time: give --workers instead",
    )
    r.add_argument(
        "--database",
        type=database_target,
        default="compare.sqlite",
        metavar="PATH|URL",
        help="results store: an SQLite file (default compare.sqlite) or a postgresql:// URL",
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
    add_executor_arguments(
        r,
        workers_help="Ray workers, each playing one game at a time (default: as many as the "
        "cluster's CPUs hold)",
    )
    r.add_argument(
        "--bot-seed-secret",
        metavar="TEXT",
        help="secret of the bots' per-game seeds (default: random, kept in the "
        "database); give one to make the comparison reproducible",
    )


def _add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    c = parser.add_argument_group(
        "confinement (bots over the referee; as a tournament's sandbox and limit keys)"
    )
    add_sandbox_arguments(c, "the bots (each a process over the referee; classes too)")
    c.add_argument(
        "--folder",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="bot NAME's own folder (A, B, or an opponent's name as in the logs): where its "
        "command runs and, confined, all it sees of your files, read-only; without one a "
        "bot runs in the current folder (confined: in an empty /tmp of its own)",
    )


def _confining(args: argparse.Namespace, plan: ComparePlan) -> Any:
    """The bots' confinement from the flags (a referee_play.Confining); ValueError
    for a --folder of no bot."""
    from wizard_referee.compare.referee_play import Confining

    folders: dict[str, str] = {}
    for text in args.folder:
        name, sep, path = text.partition("=")
        if not sep or not path:
            raise ValueError(f"--folder takes NAME=PATH, not {text!r}")
        if name not in plan.names:
            raise ValueError(
                f"--folder {text}: no bot is called {name!r} (the bots: {', '.join(plan.names)})"
            )
        folders[name] = path
    return Confining(
        args.sandbox, limits_from_args(args), folders, args.database, args.output_limit
    )


def _opponents(texts: list[str], players: int) -> tuple[BotSpec, ...]:
    given = texts or list(DEFAULT_OPPONENTS)
    if len(given) > players - 1:
        raise ValueError(
            f"{len(given)} opponents for {players - 1} seats: give --players {len(given) + 1}"
        )
    return tuple(parse_bot(given[k % len(given)]) for k in range(players - 1))


def _design(args: argparse.Namespace) -> Design:
    if args.margin is not None:
        if args.h0 is not None or args.h1 is not None:
            raise ValueError(
                "--margin sets the thresholds itself (-MARGIN and 0): leave out --h0 and --h1"
            )
        return Design.non_inferiority(args.margin, args.alpha, args.beta, args.question)
    h0 = 0.0 if args.h0 is None else args.h0
    h1 = DEFAULT_H1[args.question] if args.h1 is None else args.h1
    if h1 <= h0:
        default = " (the default)" if args.h1 is None else ""
        default = " (the default --h0)" if args.h0 is None else default
        given = f"--h0 {h0:g} and --h1 {h1:g}{default}"
        raise ValueError(f"the test needs --h1 above --h0, got {given}")
    return Design(h0, h1, args.alpha, args.beta, question=args.question)


def _settings(args: argparse.Namespace) -> tuple[ComparePlan, int, Design, bool]:
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
    if args.parallel is not None and args.parallel < 1:
        raise ValueError("--parallel must be at least 1")
    design = _design(args)
    bound = design.bound(rules)
    possible = f"(at most {design.show(bound)[1:]} {design.unit} either way)"
    if design.margin is not None and design.margin >= bound:
        raise ValueError(
            f"--margin {design.margin:g} is beyond the possible differences under these rules "
            + possible
        )
    for name, m in (("--h0", design.h0), ("--h1", design.h1)):
        if not -bound < m < bound:
            raise ValueError(
                f"{name} {m:+g} lies outside the possible differences under these rules " + possible
            )
    if args.games is not None:
        if args.games < 4:
            raise ValueError("--games must be at least 4 (two deals)")
        return plan, (args.games + 1) // 2, design, False
    if args.max_games < 2:
        raise ValueError("--max-games must be at least 2")
    return plan, (args.max_games + 1) // 2, design, True


def run(args: argparse.Namespace) -> int:
    from wizard_arena.loader import SpecError
    from wizard_referee.compare.comparison import open_comparison

    try:
        plan, deals, design, sequential = _settings(args)
        # confined bots run as processes over the referee, classes too
        over_referee = args.referee or args.sandbox != "none" or bool(args.folder)
        in_process = not over_referee and all(b.is_class for b in (plan.a, plan.b, *plan.opponents))
        _check_executor(args, in_process)
        if not in_process:
            prepare_referee_transport()  # before the referee (and grpc) load
        confining = _confining(args, plan)
        _check_bots(plan, in_process, confining)
        comparison = open_comparison(
            plan,
            args.database,
            deals,
            design,
            sequential=sequential,
            resume=args.resume,
            secret=args.bot_seed_secret,
        )
    except (ValueError, SpecError, CompareError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    progress = Progress(comparison, None if args.quiet else sys.stderr)
    store = comparison.store
    # SIGTERM stops it as Ctrl-C does: the workers are stopped and their
    # semaphores released (killed outright, it left them to Python's
    # resource tracker, which warned of leaked semaphores)
    before = signal.signal(signal.SIGTERM, _interrupted)
    try:
        if not args.quiet:
            print(_header(comparison, _where(args, in_process)), file=sys.stderr)
        if not comparison.done:
            _play(comparison, in_process, args, progress, confining)
        progress.end()
    except CompareError as e:
        # a comparison that could not start leaves nothing behind (as a tournament)
        if not args.resume and store.close_and_remove_if_unplayed():
            e = CompareError(f"{e} (nothing was played: {store.where} was not kept)")
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: the finished games are kept in {store.where}; continue with "
            "the same command and --resume",
            file=sys.stderr,
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, before)  # (the verb may run inside another program)
        store.close()
    _report(comparison.outcome(), args, _why(args) if args.why else None)
    return 0


def _why(args: argparse.Namespace) -> dict[str, Any] | str:
    """The comparison's A - B split into bidding and play (``--why``), or
    why it cannot be given."""
    try:
        from wizard_referee.analysis.run import EvaluatorError, comparison_split
    except ImportError as e:
        return f"the split needs the analysis's extras: {e}"
    jobs = args.parallel or os.cpu_count() or 1
    try:
        split = comparison_split(args.database, "learned", jobs)
    except (EvaluatorError, ImportError) as e:
        return f"the learned evaluator cannot be loaded: {e}"
    return split if split is not None else "no deal has both its games finished"


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _check_bots(plan: ComparePlan, in_process: bool, confining: Any) -> None:
    """ValueError, SpecError or CompareError for a bot that cannot play, before
    the comparison's database is created."""
    from wizard_arena.loader import load_class
    from wizard_referee.compare.local_play import check_bot

    for bot in (plan.a, plan.b, *plan.opponents):
        if bot.is_class:
            if in_process:
                check_bot(bot)
            else:
                assert bot.target is not None
                load_class(bot.target)
    if not in_process:
        from wizard_referee.compare.referee_play import problems

        found = problems(plan, confining)
        if found:
            raise CompareError("; ".join(found))


#: executor name -> the module that plays a comparison with it (loaded when chosen)
EXECUTORS = {"ray": "wizard_referee.cluster.compare_play"}


def _check_executor(args: argparse.Namespace, in_process: bool) -> None:
    """ValueError for an executor that cannot play this comparison."""
    if (args.executor or "local") == "local":
        return
    if not in_process:
        raise ValueError(
            "--executor ray plays Python bot classes in-process on the cluster's workers; "
            "bots given as commands (or --referee, --sandbox, --folder) play over a referee "
            "on this machine: leave out --executor"
        )
    if args.parallel is not None:
        raise ValueError(
            "--parallel sets the games at once on this machine; with --executor ray each Ray "
            "worker plays one game at a time: give --workers N instead"
        )
    import importlib

    from wizard_arena.extras import MissingExtraError

    try:
        module = importlib.import_module(EXECUTORS[args.executor])
    except MissingExtraError as e:
        if e.extra != "ray":
            raise
        raise ValueError(
            "--executor ray needs Ray, an optional extra: pip install 'wizard-arena[ray]'"
        ) from None
    problems = module.problems(args.ray_address or "")
    if problems:
        raise ValueError("; ".join(problems))


def _play(
    comparison: Comparison,
    in_process: bool,
    args: argparse.Namespace,
    progress: Progress,
    confining: Any,
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

        play_in_process(comparison, _parallel(args), progress)
        return
    from wizard_referee.compare.referee_play import play_over_referee
    from wizard_referee.hosting.interrupt import run_interruptible
    from wizard_referee.referee.logs import configure_logging, log_file

    log = log_file(beside_store(comparison.store.target, ".logs") / "runner.log")
    configure_logging("warning", "json", log)
    try:
        run_interruptible(
            lambda: play_over_referee(
                comparison,
                _parallel(args),
                progress,
                move_time=args.move_time,
                confining=confining,
            )
        )
    finally:
        log.close()


def _parallel(args: argparse.Namespace) -> int:
    return int(args.parallel or os.cpu_count() or 1)


def _where(args: argparse.Namespace, in_process: bool) -> str:
    """Where the games are played, as the header says it."""
    if (args.executor or "local") == "ray":
        address = args.ray_address
        cluster = f"the Ray cluster at {address}" if address else "Ray started here"
        workers = f"{args.workers} workers" if args.workers else "a worker per CPU of the cluster"
        return f"in-process on {cluster}, {workers}, one game at a time each"
    how = "in-process" if in_process else "over the referee"
    if args.sandbox == "bwrap":
        how += f", confined ({limits_from_args(args).describe()} each)"
    elif not in_process:
        how += ", unconfined (as this user: --sandbox bwrap confines the bots)"
    return f"{how}, {_parallel(args)} at once"


def _header(c: Comparison, where: str) -> str:
    p = c.plan
    lines = [
        f"compare A = {p.a.text}",
        f"   with B = {p.b.text}",
        f"  against {', '.join(o.text for o in p.opponents)}",
        f"  {p.rules.describe()}, {'duplicate deals' if p.duplicate else 'independent deals'}, "
        f"{where}",
    ]
    d = c.design
    if d.deals:
        lines.append(f"  question: {d.asked()}")
    if c.sequential:
        lines.append(f"  test: {d.describe()}")
    else:
        lines.append(f"  {2 * c.deals} games ({c.deals} deals)")
    if d.deals:
        lines.append("  a confidence sequence for net deals, valid whenever the comparison stops")
    else:
        lines.append(
            f"  a confidence sequence for A-B, valid whenever the comparison stops; A-B lies "
            f"within {c.cs.bound:g} points per game either way under these rules"
        )
    if c.played:
        lines.append(f"  {c.played} games already in {c.store.where}")
    return "\n".join(lines)


def _report(
    outcome: Outcome, args: argparse.Namespace, why: dict[str, Any] | str | None = None
) -> None:
    if args.json:
        out: dict[str, Any] = outcome.as_dict()
        out["database"] = shown(args.database)
        if why is not None:
            out["why"] = why
        print(json.dumps(out, indent=2))
        return
    d = outcome.design
    if d.deals:
        print(f"asked: {d.asked()}")
    if outcome.sequential:
        if outcome.verdict is Verdict.ABOVE_H0:
            print(
                f"{outcome.text} after {outcome.games} games: {d.measure} > {d.show(d.h0)} "
                f"{d.unit} (wrong with chance at most {d.alpha:g})"
            )
        elif outcome.verdict is Verdict.BELOW_H1:
            print(
                f"{outcome.text} after {outcome.games} games: {d.measure} < {d.show(d.h1)} "
                f"{d.unit} (wrong with chance at most {d.beta:g})"
            )
        else:
            print(
                f"undecided after {outcome.games} games: the sequence holds both "
                f"{d.show(d.h0)} and {d.show(d.h1)} (raise --max-games and add --resume to go on)"
            )
    if outcome.deals == 0:
        print(f"{outcome.games} games: too few for an estimate")
    else:
        low, high = outcome.t_interval
        if d.deals:
            _report_deals(outcome)
        else:
            print(
                f"mean difference A - B: {outcome.mean:+.1f} points per game "
                f"(sd {outcome.sd:.1f}, {outcome.deals} deals, {outcome.games} games)"
            )
        print(
            f"confidence sequence: {outcome.interval_text()} (its lower end wrong with chance "
            f"at most {d.alpha:g}, its upper end at most {d.beta:g}, whenever it stops)"
        )
        if not outcome.sequential and outcome.deals >= 2 and not d.deals:
            print(
                f"Student's t 95% interval: {low:+.1f} to {high:+.1f} (a fixed number of deals; "
                "it assumes roughly normal differences)"
            )
        statements = outcome.statements
        if statements:
            print("what the deals show:")
            for st in statements:
                print(f"  {st}")
        else:
            print("what the deals show: nothing yet about 0 or the thresholds")
        same = outcome.identical
        print(
            f"{same} of {outcome.deals} deals played identically"
            + (
                " (A and B made the same move at every turn: only the bound limits what "
                "they could differ by)"
                if same == outcome.deals
                else ""
            )
        )
    print(
        f"results in {shown(args.database)} (a game: wizard-arena replay d0-A --database "
        f"{shown(args.database)})"
    )
    if why is None:
        print(
            f"why: wizard-arena analyse --database {shown(args.database)} (how much of A - B "
            "comes from bidding, how much from play; or compare --why)"
        )
    elif isinstance(why, str):
        print(f"why: {why}")
    else:
        from wizard_referee.analysis.summary import split_lines

        print("why (each decision graded by the learned evaluator; wizard-arena analyse):")
        for line in split_lines(why):
            print(f"  {line}")


def _report_deals(outcome: Outcome) -> None:
    """The tally of a deals question: who outscored whom, the ties, and the
    mean difference in points (which was not asked)."""
    print(
        f"A outscored B on {outcome.a_ahead} deals, B outscored A on {outcome.b_ahead}, "
        f"{outcome.ties} tied (equal totals: they count for neither): net deals "
        f"{100 * outcome.mean:+.1f}% ({outcome.deals} deals, {outcome.games} games)"
    )
    print(
        f"mean difference A - B: {outcome.points_mean:+.1f} points per game (not what was "
        "asked: --question points tests it)"
    )
