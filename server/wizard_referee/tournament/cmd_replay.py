"""``wizard-arena replay GAME_ID --database DB``: print a recorded game trick by trick."""

from __future__ import annotations

import argparse
import sys

from wizard_arena.rules import Game, RuleError, Rules
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.storage import database_target
from wizard_referee.tournament.replay import RoundBegins, describe, draw_line, walk
from wizard_referee.tournament.store import StoreError, open_existing


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game_id", help="game id (a unique prefix is enough)")
    parser.add_argument(
        "--database",
        "-d",
        type=database_target,
        default="tournament.sqlite",
        metavar="PATH|URL",
        help="results store: an SQLite file (default tournament.sqlite) or a postgresql:// URL",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="re-run the game through the rules core and report differences",
    )


def render(record: GameRecord) -> str:
    """The game as text: the draw for the first dealer (if any), deals, trump
    (and its changes with tricksy or tricksy_suited), bids, every trick with
    its winner, scores, the decisions the referee made for a faulted bot.
    The cards of a blind first round, played by the rules themselves after
    the last bid, are shown as such. The steps are :func:`.replay.walk`'s."""
    rules = Rules.from_dict(record.rules)
    names = record.names
    n = rules.players
    lines = [
        f"game {record.game_id}: {rules.describe()}, status {record.status}",
        "seats: " + ", ".join(f"{s}={n}" for s, n in enumerate(names)),
    ]
    if record.tags:
        lines.append("tags: " + ", ".join(f"{k}={v}" for k, v in sorted(record.tags.items())))
    draw = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards()).draw
    if draw:
        lines.append(draw_line(draw, names, record.first_dealer))
    for step, game in walk(record):
        if isinstance(step, RoundBegins):
            lines.append("")
        lines.extend(describe(step, game, names))
    if record.status == "finished":
        lines.append("")
        lines.append(
            "final: "
            + ", ".join(f"{names[s]} {record.totals[s]} (rank {record.ranks[s]})" for s in range(n))
        )
    for s, faults in enumerate(record.faults):
        if faults:
            lines.append(
                f"faults {names[s]}: "
                + ", ".join(f"{code} x{count}" for code, count in sorted(faults.items()))
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        store = open_existing(args.database)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with store:
        # a planned id (or its prefix), or the opaque id its bots were told
        ids = store.find_game_ids(args.game_id) or store.games_told(args.game_id)
        exact = [i for i in ids if i == args.game_id]
        if exact:
            ids = exact
        if not ids:
            print(f"error: no recorded game {args.game_id!r} in {store.where}", file=sys.stderr)
            return 2
        if len(ids) > 1:
            print(
                f"error: {args.game_id!r} matches {len(ids)} games: {', '.join(ids[:10])}",
                file=sys.stderr,
            )
            return 2
        record = store.record(ids[0])
    assert record is not None
    if args.verify:
        problems = verify_record(record)
        for p in problems:
            print(f"DIFFERENCE: {p}")
        print(
            f"{record.game_id}: "
            + ("verified, no difference" if not problems else f"{len(problems)} difference(s)")
        )
        return 1 if problems else 0
    try:
        text = render(record)
    except (RuleError, ValueError) as e:
        print(
            f"error: {record.game_id} cannot be replayed: {e} (--verify lists the differences)",
            file=sys.stderr,
        )
        return 1
    print(text)
    return 0
