"""``wizard-arena export --database DB [--out FILE]``: a tournament's finished
games as JSON lines, the input of ``wizard-arena ratings``.

One line per finished game: ``players`` and ``scores`` by seat, ``game_id``,
``duplicate_set`` (the deal, which groups games for the ratings' bootstrap),
``faulted`` and the shared columns added to the games since their first
version (:data:`wizard_referee.storage.ADDED`; null where a store predates
one). To standard output by default, so that
``wizard-arena export --database DB | wizard-arena ratings -`` re-rates a
tournament; ``--out FILE`` writes a file and says how many games it holds.
"""

from __future__ import annotations

import argparse
import sys

from wizard_referee.storage import database_target
from wizard_referee.tournament.store import StoreError, export_games, open_existing


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        "-d",
        type=database_target,
        default="tournament.sqlite",
        metavar="PATH|URL",
        help="results store: an SQLite file (default tournament.sqlite) or a postgresql:// URL",
    )
    parser.add_argument(
        "--out",
        "-o",
        metavar="FILE",
        default="-",
        help="write to FILE (default '-': standard output)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        store = open_existing(args.database)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with store:
        if args.out == "-":
            export_games(store, sys.stdout)
            return 0
        try:
            with open(args.out, "w", encoding="utf-8") as out:
                count = export_games(store, out)
        except OSError as e:
            print(f"error: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
            return 1
    print(
        f"wrote {count} game(s) to {args.out} (rate them: wizard-arena ratings {args.out})",
        file=sys.stderr,
    )
    return 0
