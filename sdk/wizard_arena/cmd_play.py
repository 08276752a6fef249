"""``wizard-arena play``: one local game, no network, the scoreboard printed.

``wizard-arena play [SPEC ...]``: the bots named by ``SPEC`` (``MODULE:CLASS``
or ``path/to/file.py:CLASS``, as for ``wizard-arena bot``) take the first
seats, in order; the example bots fill the others (:data:`EXAMPLE_MIX`:
heuristic, Monte Carlo with a fixed 4 samples per decision, random, and
round again). The game is played in-process by
:func:`wizard_arena.local.play_local`, under any rule variant; with
``--seed`` the deal and every bot's per-game seed follow from it, so the
same command prints the same game.

Exit status: 0; 4 when a bot faulted (raised, or returned an action that is
not legal: the referee's default action was played for it), as for
``wizard-arena bot``; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_arena.local import Fault, play_local

__all__ = ["EXAMPLE_MIX", "add_arguments", "run"]

#: The bots that fill the seats no SPEC names, in seat order (then again).
EXAMPLE_MIX: tuple[tuple[str, dict[str, Any]], ...] = (
    ("wizard_bots.heuristic:HeuristicBot", {}),
    ("wizard_bots.montecarlo:MonteCarloBot", {"samples": 4}),
    ("wizard_bots.random_bot:RandomBot", {}),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "bots",
        nargs="*",
        metavar="MODULE:CLASS",
        help="bot classes for the first seats (module.path:Class or path/to/file.py:Class); "
        "the example bots (heuristic, montecarlo, random) fill the rest",
    )
    add_rules_arguments(parser, players_help="table size, 3-6 (default 4)")
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument("--rounds", action="store_true", help="print every round's result")


def _names(bots: list[Any]) -> list[str]:
    """Display names by seat: each bot's ``name`` (else its class name),
    numbered when several bots share one."""
    base = []
    for bot in bots:
        own = getattr(bot, "name", "")
        base.append(str(own) if own and own != "bot" else type(bot).__name__)
    return [f"{n}-{base[:i].count(n) + 1}" if base.count(n) > 1 else n for i, n in enumerate(base)]


def _seat_bots(specs: list[str], players: int) -> list[Any]:
    """The bots by seat; SpecError (from the bot loader) or ValueError says why not."""
    from wizard_arena.bot import Bot
    from wizard_arena.loader import load_bot

    if len(specs) > players:
        raise ValueError(
            f"{len(specs)} bots for {players} seats: give --players {len(specs)} (at most 6)"
        )
    bots = [load_bot(spec) for spec in specs]
    for spec, bot in zip(specs, bots, strict=True):
        if not isinstance(bot, Bot):
            raise ValueError(
                f"{spec}: play runs wizard_arena.bot.Bot classes in this process; "
                "an AsyncBot plays on a server (wizard-arena serve, wizard-arena bot)"
            )
    for k in range(players - len(specs)):
        spec, kwargs = EXAMPLE_MIX[k % len(EXAMPLE_MIX)]
        bots.append(load_bot(spec, kwargs))
    return bots


def run(args: argparse.Namespace) -> int:
    from wizard_arena.loader import SpecError

    try:
        rules = rules_from_args(args)
    except ValueError as e:
        print(f"error: rules: {e}", file=sys.stderr)
        return 2
    try:
        bots = _seat_bots(list(args.bots), rules.players)
    except (SpecError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    names = _names(bots)
    result = play_local(bots, rules, seed=args.seed, names=names)
    print(f"Wizard, {rules.describe()}, {rules.rounds} rounds")
    width = max(12, *(len(n) for n in names))
    if args.rounds:
        print("round " + " ".join(f"{n:>{max(14, len(n))}}" for n in names))
        for r in result.results:
            cells = " ".join(
                f"{b}/{t} {p:+4d} {tot:5d}".rjust(max(14, len(n)))
                for b, t, p, tot, n in zip(r.bids, r.tricks, r.points, r.totals, names, strict=True)
            )
            print(f"{r.round:>5} {cells}")
    print(f"{'rank':>4}  {'seat':>4}  {'bot':<{width}} {'points':>7}")
    for seat in sorted(range(rules.players), key=lambda s: result.ranks[s]):
        print(
            f"{result.ranks[seat]:>4}  {seat:>4}  {names[seat]:<{width}} {result.totals[seat]:>7}"
        )
    return _print_faults(result.faults, names)


def _print_faults(faults: Sequence[Fault], names: Sequence[str]) -> int:
    """Each distinct fault once (with how often it came again); 4 when a bot
    faulted (it raised or answered illegally), as ``wizard-arena bot``."""
    seen: dict[tuple[int, str, str], list[Fault]] = {}
    for f in faults:
        seen.setdefault((f.seat, f.code, f.detail), []).append(f)
    for (seat, code, detail), same in seen.items():
        first = same[0]
        again = f" (and {len(same) - 1} more like it)" if len(same) > 1 else ""
        print(f"fault: seat {seat} ({names[seat]}), round {first.round}: {code}: {detail}{again}")
    if faults:
        print(
            f"{len(faults)} decision(s) were played by the referee for a faulted bot "
            "(exit status 4)",
            file=sys.stderr,
        )
        return 4
    return 0
