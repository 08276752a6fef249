"""``wizard-arena tournament CONFIG.toml``: run (or resume) a round-robin tournament."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from wizard_arena.cli.rules_options import (
    BID_RESTRICTION_HELP,
    ROUND_SIZES_HELP,
    VARIANT_FLAGS,
    parse_round_sizes,
)
from wizard_arena.cli.web_options import WebOptions, add_web_arguments, port_number
from wizard_arena.rules import BidRestriction
from wizard_referee.sandbox import SANDBOXES
from wizard_referee.storage import StorageError, database_target, shown
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError, add_executor_arguments
from wizard_referee.tournament.seating import SEATINGS

# The referee, trio, grpc and the ratings (numpy) are imported when the
# tournament runs: --help, a bad file or a bad option answer without them.
if TYPE_CHECKING:
    import trio

    from wizard_referee.referee.arena import Arena


def overrides_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The ``[tournament]`` values given on the command line (None: not given).
    ValueError for a malformed ``--round-sizes``."""
    out: dict[str, Any] = {
        "players": args.players,
        "deal_sets": args.deal_sets,
        "seating": args.seating,
        "move_time": args.move_time,
        "lag_credit_cap": args.lag_credit_cap,
        "bid_restriction": args.bid_restriction,
        "seed": args.seed,
        "parallel": args.parallel,
        "database": args.database,
        "port": args.port,
        "exclude_faulted": args.exclude_faulted,
        "executor": args.executor,
        "workers": args.workers,
        "ray_address": args.ray_address,
        "sandbox": args.sandbox,
    }
    for flag in VARIANT_FLAGS:
        key = flag.replace("-", "_")
        out[key] = getattr(args, key)
    if args.round_sizes is not None:
        out["round_sizes"] = list(parse_round_sizes(args.round_sizes))
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="tournament file (TOML); see docs/tournament.md")
    o = parser.add_argument_group("overrides (replace the file's [tournament] values)")
    o.add_argument("--players", type=int, choices=range(3, 7), metavar="N", help="table size")
    o.add_argument("--deal-sets", type=int, metavar="N", help="deals per table")
    o.add_argument(
        "--seating",
        choices=SEATINGS,
        help="the seatings of each deal: balanced (every seat and every neighbour "
        "equally often; k(k-1) games per deal at tables of k) or cyclic (every seat; "
        "k games per deal); default balanced",
    )
    o.add_argument("--move-time", type=float, metavar="SECONDS", help="deadline per decision")
    o.add_argument(
        "--lag-credit-cap",
        type=float,
        metavar="SECONDS",
        help="most network credit a decision gets: each bot's measured round trip is added "
        "to its deadlines, up to this (default 0.5; 0: none)",
    )
    o.add_argument(
        "--bid-restriction", choices=[b.value for b in BidRestriction], help=BID_RESTRICTION_HELP
    )
    o.add_argument("--seed", type=int, help="seed of the plan (tables, seatings) and every deal")
    o.add_argument("--parallel", type=int, metavar="N", help="tables played at once")
    o.add_argument(
        "--database",
        type=database_target,
        metavar="PATH|URL",
        help="results store: an SQLite file, or a postgresql:// URL (pip install "
        "'wizard-arena[postgres]')",
    )
    o.add_argument("--port", type=port_number, help="server port (default: any free port)")
    add_executor_arguments(o)
    o.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        help="how command entrants run: bwrap (each confined: its own uid, folder and "
        "limits, no network; needs bubblewrap) or none (as this user; the default)",
    )
    v = parser.add_argument_group(
        "rule variant overrides (replace the file's keys; --no-X turns a variant off)"
    )
    for flag, help_text in VARIANT_FLAGS.items():
        v.add_argument(f"--{flag}", action=argparse.BooleanOptionalAction, help=help_text)
    v.add_argument("--round-sizes", metavar="N,N,...", help=ROUND_SIZES_HELP)
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted tournament from its database"
    )
    parser.add_argument(
        "--exclude-faulted",
        action="store_true",
        default=None,
        help="keep games with faults out of the ratings",
    )
    parser.add_argument("--method", choices=["bt", "elo"], default="bt", help="rating method")
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "--json", action="store_true", help="print the leaderboard as JSON (notes on stderr)"
    )
    out.add_argument("--csv", action="store_true", help="print the leaderboard as CSV")
    parser.add_argument(
        "--export-results",
        metavar="FILE",
        help="also write one JSON line per finished game (players, scores, "
        "game_id, duplicate_set), the input of 'wizard-arena ratings'; after the "
        "run: wizard-arena export --database DB",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        help="the runner's log, JSON lines (default DATABASE.logs/runner.log; "
        "'-' for standard error)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="default warning (info: every session and decision)",
    )
    add_web_arguments(parser)


def _open_log(path: str | None, config: TournamentConfig) -> TextIO:
    """The runner's log: a file (the progress display keeps standard error)."""
    from wizard_referee.referee.logs import log_file
    from wizard_referee.tournament.executors import log_dir

    if path == "-":
        return sys.stderr
    return log_file(Path(path) if path else log_dir(config) / "runner.log")


def run(args: argparse.Namespace) -> int:
    try:
        config = TournamentConfig.from_toml(args.config, **overrides_from_args(args))
        log_stream = _open_log(args.log_file, config)
    except (TournamentError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from wizard_referee.referee.logs import configure_logging

    try:
        configure_logging(
            args.log_level, "auto" if log_stream is sys.stderr else "json", log_stream
        )
        return _run(args, config)
    finally:
        if log_stream is not sys.stderr:
            log_stream.close()


def resume_command(args: argparse.Namespace) -> str:
    """The command that resumes this run: as typed (every override kept, so
    the plan matches), with ``--resume``."""
    typed = list(getattr(args, "command_line", None) or ["tournament", args.config])
    if "--resume" not in typed:
        typed.append("--resume")
    return "wizard-arena " + shlex.join(typed)


def _web_starter(
    args: argparse.Namespace, config: TournamentConfig
) -> Callable[[Arena, trio.Nursery], Awaitable[None]] | None:
    """What starts the web pages beside the referee (``--web``), or None.
    TournamentError when they cannot be served."""
    web = WebOptions.from_args(args)
    if not web.wanted:
        return None
    if config.executor != "local":
        raise TournamentError(
            f"--web shows the tables of the local executor's referee; with executor "
            f'"{config.executor}" the games are played on the workers: follow the results '
            f"with: wizard-arena web --database {shown(config.database)}"
        )
    from wizard_referee.referee.listen import web_line, web_problem

    problem = web_problem(web, config.port)
    if problem is not None:
        raise TournamentError(problem)
    from wizard_referee.web.serve import start_web

    async def on_arena(arena: Arena, nursery: trio.Nursery) -> None:
        for url in await start_web(nursery, web, arena, database=config.database):
            print(web_line(url), file=sys.stderr, flush=True)

    return on_arena


def _kept(config: TournamentConfig) -> bool:
    """Whether an interrupted run left a store to resume."""
    from wizard_referee.tournament.store import StoreError, store_exists

    try:
        return store_exists(config.database)
    except StoreError:
        return False


def _run(args: argparse.Namespace, config: TournamentConfig) -> int:
    from wizard_referee.referee.grpc_setup import prepare_referee_transport

    prepare_referee_transport()  # before the referee loads grpc
    from wizard_referee.hosting.interrupt import run_interruptible
    from wizard_referee.referee.arena import freeze_startup_objects
    from wizard_referee.tournament.executors import log_dir
    from wizard_referee.tournament.runner import (
        format_leaderboard,
        leaderboard,
        leaderboard_csv,
        run_tournament,
    )
    from wizard_referee.tournament.seating import stored_seating

    progress = None if args.quiet else sys.stderr
    try:
        on_arena = _web_starter(args, config)
        freeze_startup_objects()  # the modules loaded so far live until exit
        store = run_interruptible(
            lambda: run_tournament(
                config, resume=args.resume, progress_stream=progress, on_arena=on_arena
            )
        )
    except (TournamentError, StorageError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if _kept(config):
            print(
                f"\ninterrupted: the finished games are kept in {shown(config.database)}; "
                f"continue with: {resume_command(args)}",
                file=sys.stderr,
            )
        else:
            print("\ninterrupted before any game finished: nothing kept", file=sys.stderr)
        return 130
    with store:
        failed = store.counts().get("failed", 0)
        seating = stored_seating((store.tournament_config() or {}).get("plan") or {})
        board = leaderboard(store, method=args.method, exclude_faulted=config.exclude_faulted)
        if args.export_results:
            from wizard_referee.tournament.store import export_games

            with open(args.export_results, "w", encoding="utf-8") as out:
                export_games(store, out)
    if args.json or args.csv:
        if args.json:
            print(json.dumps([r.as_dict() for r in board.rows], indent=2))
        else:
            print(leaderboard_csv(board), end="")
        for note in board.notes:  # the table prints them; here they go beside it
            print(f"note: {note}", file=sys.stderr)
    else:
        header = (
            f"{config.name}: {config.rules.describe()}, {config.deal_sets} deal set(s), "
            f"seating {seating}, {board.games} games, move time {config.move_time:g} s"
        )
        print(format_leaderboard(board, header))
    if progress is not None:
        print(
            f"results in {shown(config.database)} (a game: wizard-arena replay GAME_ID "
            f"--database {shown(config.database)}); logs in {log_dir(config)}/",
            file=sys.stderr,
        )
    if failed:
        print(
            f"error: {failed} game(s) could not be played (their Ray workers were lost); "
            f"play them with: {resume_command(args)}",
            file=sys.stderr,
        )
        return 1
    return 0
