"""``wizard-arena play``: one local game among example bots, scoreboard printed."""

from __future__ import annotations

import argparse
import sys

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_arena.local import play_local


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_rules_arguments(parser, players_help="table size, 3-6 (default 4)")
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument("--rounds", action="store_true", help="print every round's result")


def run(args: argparse.Namespace) -> int:
    from wizard_bots.random_bot import RandomBot

    try:
        rules = rules_from_args(args)
    except ValueError as e:
        print(f"error: rules: {e}", file=sys.stderr)
        return 2
    bots = [
        RandomBot(seed=None if args.seed is None else args.seed * 100 + s)
        for s in range(rules.players)
    ]
    names = [f"random-{s}" for s in range(rules.players)]
    result = play_local(bots, rules, seed=args.seed, names=names)
    print(f"Wizard, {rules.describe()}, {rules.rounds} rounds")
    if args.rounds:
        print("round " + " ".join(f"{n:>14}" for n in names))
        for r in result.results:
            cells = " ".join(
                f"{b}/{t} {p:+4d} {tot:5d}".rjust(14)
                for b, t, p, tot in zip(r.bids, r.tricks, r.points, r.totals, strict=True)
            )
            print(f"{r.round:>5} {cells}")
    print(f"{'rank':>4}  {'seat':>4}  {'bot':<12} {'points':>7}")
    for seat in sorted(range(rules.players), key=lambda s: result.ranks[s]):
        print(f"{result.ranks[seat]:>4}  {seat:>4}  {names[seat]:<12} {result.totals[seat]:>7}")
    return 0
