"""``wizard-arena demo``: the whole arena in about a minute.

Starts a referee server on loopback, launches the example bots as real gRPC
clients (subprocesses), runs a small round robin with duplicate deals and
prints the leaderboard.

Short games (rounds of 1, 3, 5, 7 and 9 cards) keep it short while every bot
plays enough deals for a 95% interval (10 or more): at tables of 3, 4 deals at
each of the 4 tables, 6 seatings each (96 games; each bot plays 12 deals); at
a table of 4, 10 deals of 12 seatings (120 games).

The demo starts only the example bots (this project's own code, from the
installed ``wizard_bots`` package), unconfined, so it has no ``--sandbox``:
bots someone else wrote run confined under ``tournament``, ``compare`` and
``check`` with ``--sandbox bwrap`` (docs/untrusted-bots.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError

# The referee, trio, grpc and the ratings (numpy) are imported when the demo runs.

DEMO_BOTS: list[tuple[str, str, list[str]]] = [
    ("random", "wizard_bots.random_bot:RandomBot", []),
    ("heuristic", "wizard_bots.heuristic:HeuristicBot", []),
    ("montecarlo", "wizard_bots.montecarlo:MonteCarloBot", ["--arg", "samples=4"]),
    ("random-2", "wizard_bots.random_bot:RandomBot", []),
]


DEMO_ROUND_SIZES = (1, 3, 5, 7, 9)
"""Cards dealt in each round of a demo game (a short game)."""
DEMO_DEALS = {3: 4, 4: 10}
"""Deals per table by table size: enough for every bot to get an interval."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "The demo starts only the example bots, unconfined (no --sandbox): confine bots "
        "someone else wrote with tournament, compare or check --sandbox bwrap "
        "(docs/untrusted-bots.md)."
    )
    parser.add_argument(
        "--deal-sets",
        type=int,
        default=None,
        help="deals per table (default 4 at tables of 3, 10 at a table of 4)",
    )
    parser.add_argument(
        "--players", type=int, default=3, choices=range(3, 5), help="table size (default 3)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=2026,
        help="seed of the plan and every deal (the same seed: the same games)",
    )
    parser.add_argument("--database", help="keep the results in this SQLite file")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def demo_config(database: str, players: int, deal_sets: int | None, seed: int) -> TournamentConfig:
    entrants: list[dict[str, Any]] = []
    for name, target, extra in DEMO_BOTS:
        entrants.append(
            {
                "name": name,
                "command": [
                    sys.executable,
                    "-m",
                    "wizard_arena.cli",
                    "bot",
                    target,
                    "--server",
                    "{server}",
                    "--name",
                    "{name}",
                    "--quiet",
                    *extra,
                ],
            }
        )
    return TournamentConfig.from_dict(
        {
            "tournament": {
                "name": "demo",
                "players": players,
                "deal_sets": DEMO_DEALS[players] if deal_sets is None else deal_sets,
                "round_sizes": list(DEMO_ROUND_SIZES),
                "move_time": 2.0,
                "seed": seed,
                # reproducible: the same seed gives the same leaderboard (a real
                # competition leaves the secret out: a random one is drawn)
                "bot_seed_secret": f"wizard-arena demo {seed}",
                "parallel": 2,
                "database": database,
            },
            "entrant": entrants,
        }
    )


def run(args: argparse.Namespace) -> int:
    if args.database and Path(args.database).exists():
        print(
            f"error: {args.database} exists: the demo writes a new database; "
            "give another path, or remove that file",
            file=sys.stderr,
        )
        return 2
    from wizard_referee.referee.logs import configure_logging, log_file
    from wizard_referee.tournament.executors import log_dir

    with tempfile.TemporaryDirectory(prefix="wizard-demo-") as tmp:
        database = args.database or str(Path(tmp) / "demo.sqlite")
        config = demo_config(database, args.players, args.deal_sets, args.seed)
        with log_file(log_dir(config) / "runner.log") as stream:
            configure_logging("warning", "json", stream)
            return _run(args, config)


def _run(args: argparse.Namespace, config: TournamentConfig) -> int:
    from wizard_referee.referee.grpc_setup import prepare_referee_transport

    prepare_referee_transport()  # before the referee loads grpc
    from wizard_referee.hosting.interrupt import run_interruptible
    from wizard_referee.tournament.runner import (
        format_leaderboard,
        leaderboard,
        plan_games,
        run_tournament,
    )

    games = len(plan_games(config))
    print(
        f"Wizard Arena demo: {len(config.entrants)} example bots "
        f"({', '.join(e.name for e in config.entrants)}) connect over gRPC to a referee on "
        f"127.0.0.1 and play a round robin of {games} short games (rounds of "
        f"{', '.join(map(str, DEMO_ROUND_SIZES))} cards) at tables of {config.players} "
        "with duplicate deals (every bot holds every hand and sits beside every other "
        "equally often).",
        flush=True,
    )
    try:
        store = run_interruptible(
            lambda: run_tournament(
                config,
                progress_stream=None if args.quiet else sys.stderr,
                results_note=None if args.database else TEMPORARY,
            )
        )
    except TournamentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with store:
        board = leaderboard(store)
    print()
    print(format_leaderboard(board, f"Leaderboard ({board.games} games):"))
    print()
    print("\n".join(LEGEND))
    print()
    print("\n".join(closing_lines(args.database)))
    return 0


TEMPORARY = "results in a temporary folder, removed at the end (--database FILE keeps them)"
"""Where the results go, on the first progress line, without ``--database``."""


#: What the leaderboard's columns say, printed under it.
LEGEND = (
    "rating: Bradley-Terry, 1500 the average, with its 95% interval (from re-rating",
    "  the results with the deals drawn again); vs next: this bot's rating minus the",
    "  next one's, with its 95% interval; LOS: the likelihood of superiority, the",
    "  chance that this bot is better than the next one; won: the share of its games",
    "  it finished first in; bid acc: the share of its bids it made exactly",
    "  (docs/statistics.md says more)",
)


def closing_lines(database: str | None) -> list[str]:
    """The demo's last lines: where the results are (or how to keep them), next steps.

    >>> closing_lines(None)[:2]  # doctest: +NORMALIZE_WHITESPACE
    ['The results were in a temporary folder, removed now; to keep them:',
     '  wizard-arena demo --database demo.sqlite']
    """
    if database is None:
        kept = [
            "The results were in a temporary folder, removed now; to keep them:",
            "  wizard-arena demo --database demo.sqlite",
        ]
    else:
        kept = [
            f"The results are kept in {database}; a game, trick by trick:",
            f"  wizard-arena replay GAME_ID --database {database}",
        ]
    return [
        *kept,
        "Next steps:",
        "  wizard-arena serve --port 50051        # a server for your own bots",
        "  wizard-arena bot my_bot.py:MyBot --server 127.0.0.1:50051",
        "  wizard-arena tournament my.toml        # see docs/tournament.md",
    ]
