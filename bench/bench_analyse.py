"""How fast ``wizard-arena analyse`` grades whole games, per core and on
every core, and the distribution of the losses it finds.

Plays ``--games`` games of ``--players`` (4 by default: 15 rounds) in this
process with the example bots (``--bots``, one a seat), then grades every
decision of every game with the evaluator (``--evaluator``, learned by
default): first in this process, one game after another (CPU seconds per
game: the figure per core), then over ``--jobs`` worker processes (wall
seconds for all the games: every core). With ``--distribution`` it prints
each bot's losses by kind (bid, card) at a few quantiles: the figures the
grades' thresholds were set from (docs/analysis.md).

    python bench/bench_analyse.py
    python bench/bench_analyse.py --evaluator montecarlo --games 2 --distribution
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from wizard_arena.bot import Bot
from wizard_arena.loader import parse_arg
from wizard_arena.rules import Rules
from wizard_referee.analysis.grade import Graded
from wizard_referee.analysis.run import grade_many, resolve
from wizard_referee.referee.record import GameRecord

BOTS = {
    "random": "wizard_bots.random_bot:RandomBot",
    "heuristic": "wizard_bots.heuristic:HeuristicBot",
    "montecarlo": "wizard_bots.montecarlo:MonteCarloBot",
    "learned": "wizard_bots.learned:LearnedBot",
}
QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.99)


def make_bot(name: str, game: int) -> Bot:
    from wizard_arena.loader import load_bot

    kwargs: dict[str, Any] = {}
    if name == "random":
        kwargs = {"seed": game}
    elif name == "montecarlo":
        kwargs = {"samples": 16, "seed": game}
    bot = load_bot(BOTS[name], kwargs)
    assert isinstance(bot, Bot)
    return bot


def play(names: list[str], players: int, game: int) -> GameRecord:
    """One game played in-process, as a stored game's record."""
    from wizard_arena.local import play_local
    from wizard_referee.compare.local_play import local_record

    seats = [names[(game + s) % len(names)] for s in range(players)]
    labels = [f"{n}{s}" if seats.count(n) > 1 else n for s, n in enumerate(seats)]
    rules = Rules(players=players)
    result = play_local(
        [make_bot(n, game) for n in seats], rules, seed=game, names=labels, record=True
    )
    return local_record(result, f"g{game}", game, finished=1.0)


def quantiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    out = {"mean": round(statistics.fmean(values), 2)} if values else {}
    for q in QUANTILES:
        if values:
            out[f"q{round(q * 100)}"] = round(values[min(len(values) - 1, int(q * len(values)))], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", default="random,heuristic,montecarlo,learned")
    parser.add_argument("--evaluator", default="learned")
    parser.add_argument("--evaluator-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--distribution", action="store_true")
    args = parser.parse_args()
    names = args.bots.split(",")
    records = [play(names, args.players, g) for g in range(args.games)]
    evaluator = resolve(args.evaluator, dict(parse_arg(a) for a in args.evaluator_arg))
    cpu = time.process_time()
    wall = time.perf_counter()
    graded: list[Graded] = []
    for _, gs in grade_many([(r, None) for r in records], evaluator, jobs=1):
        graded.extend(gs)
    per_game_cpu = (time.process_time() - cpu) / len(records)
    per_game_wall = (time.perf_counter() - wall) / len(records)
    figures: dict[str, Any] = {
        "evaluator": evaluator[0].rpartition(":")[2],
        "kwargs": evaluator[1],
        "games": len(records),
        "rounds": len(records[0].rounds),
        "decisions_graded": len(graded),
        "cpu_s_per_game": round(per_game_cpu, 3),
        "wall_s_per_game_one_process": round(per_game_wall, 3),
    }
    if args.jobs > 1:
        wall = time.perf_counter()
        every = [
            g
            for _, gs in grade_many([(r, None) for r in records], evaluator, args.jobs)
            for g in gs
        ]
        assert every == graded, "grades differ between one process and the workers"
        figures["jobs"] = args.jobs
        figures["wall_s_all_games_on_jobs"] = round(time.perf_counter() - wall, 3)
    print(json.dumps(figures))
    if args.distribution:
        bots = sorted({g.name.rstrip("0123456789") for g in graded})
        for bot in bots:
            for kind in ("bid", "card"):
                losses = [g.loss for g in graded if g.kind == kind and g.name.startswith(bot)]
                print(json.dumps({"bot": bot, "kind": kind, "n": len(losses), **quantiles(losses)}))
        for kind in ("bid", "card"):
            losses = [g.loss for g in graded if g.kind == kind]
            print(json.dumps({"bot": "all", "kind": kind, "n": len(losses), **quantiles(losses)}))


if __name__ == "__main__":
    main()
