"""The learned bot's card play: its training curve, and its CPU per decision
against its teacher's on the very same positions.

Prints, from a weights file (default the committed one), the training
curve kept in it (per epoch of each fit: the training loss, and on the
held-out teacher decisions the loss, the agreement with the teacher and the
regret in points; the heuristic bot's agreement and regret on the same
decisions), and then times decisions: positions are collected from seeded
games of four heuristic bots (every card decision with a choice, and every
bid), and each position is decided by ``LearnedBot`` and by
``MonteCarloBot(samples=4)`` (a fresh bot per position, seeded), processor
time per decision.

    python bench/bench_learned.py                       # the committed weights, 8 games
    python bench/bench_learned.py --weights my.npz --games 2
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from wizard_arena import Bot, Card, SeatView, Suit
from wizard_arena.local import play_local
from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.learned import LearnedBot
from wizard_bots.learned.model import WEIGHTS
from wizard_bots.montecarlo import MonteCarloBot


class Recorder(Bot):
    """The heuristic bot, keeping the views of its decisions."""

    name = "recorder"

    def __init__(self) -> None:
        self.inner = HeuristicBot()
        self.plays: list[SeatView] = []
        self.bids: list[SeatView] = []

    def bid(self, view: SeatView) -> int:
        self.bids.append(view)
        return self.inner.bid(view)

    def play(self, view: SeatView) -> Card:
        if len(set(view.legal_cards)) > 1:
            self.plays.append(view)
        return self.inner.play(view)

    def choose_trump(self, view: SeatView) -> Suit:
        return self.inner.choose_trump(view)


def positions(games: int, seed: int) -> tuple[list[SeatView], list[SeatView]]:
    plays: list[SeatView] = []
    bids: list[SeatView] = []
    for g in range(games):
        recorders = [Recorder() for _ in range(4)]
        play_local(recorders, Rules(players=4), seed=seed + g, hooks=False)
        for r in recorders:
            plays += r.plays
            bids += r.bids
    return plays, bids


def cpu_ms(decide: Callable[[SeatView, int], object], views: list[SeatView]) -> list[float]:
    out = []
    for i, view in enumerate(views):
        t = time.process_time()
        decide(view, i)
        out.append((time.process_time() - t) * 1000)
    return out


def print_curve(path: Path) -> None:
    with np.load(path) as data:
        if "play_curve_agreement" not in data:
            print(f"{path}: no training curve")
            return
        print(f"weights {path}")
        print(f"command: {data['command']}")
        if "seconds" in data:
            print(
                f"training took {float(data['seconds']) / 60:.1f} min wall, "
                f"{float(data['cpu_seconds']) / 60:.1f} CPU-min"
            )
        print(
            f"card decisions learned from: {int(data['play_decisions'])}, "
            f"held out: {int(data['play_heldout_decisions'])}"
        )
        print(
            f"heuristic on the held-out decisions: agreement "
            f"{float(data['play_heuristic_agreement']) * 100:.1f}%, regret "
            f"{float(data['play_heuristic_regret']):.2f} points"
        )
        print("stage epoch  train loss  held-out loss  agreement %  regret (points)")
        stage = data["play_curve_stage"]
        epoch = 0
        for i in range(len(stage)):
            epoch = epoch + 1 if i and stage[i] == stage[i - 1] else 1
            print(
                f"{int(stage[i]):5d} {epoch:5d}  {float(data['play_curve_train_loss'][i]):10.4f}"
                f"  {float(data['play_curve_heldout_loss'][i]):13.4f}"
                f"  {float(data['play_curve_agreement'][i]) * 100:11.1f}"
                f"  {float(data['play_curve_regret'][i]):15.2f}"
            )
        margins = ", ".join(f"{float(m):+.1f}" for m in data["play_league_margin"])
        print(f"league iterations, learner's points a game over its opponents: {margins}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", type=Path, default=WEIGHTS, help="weights file (.npz)")
    ap.add_argument("--games", type=int, default=8, help="heuristic games giving the positions")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first game")
    ap.add_argument(
        "--limit", type=int, help="time only the first N positions of each kind (a smoke run)"
    )
    args = ap.parse_args(argv)
    print_curve(args.weights)
    plays, bids = positions(args.games, args.seed)
    if args.limit is not None:
        plays, bids = plays[: args.limit], bids[: args.limit]
    learned = LearnedBot(weights=args.weights)

    def teacher(view: SeatView, i: int) -> MonteCarloBot:
        return MonteCarloBot(samples=4, seed=args.seed * 100_000 + i)

    rows = [
        ("card", "learned", cpu_ms(lambda v, i: learned.play(v), plays)),
        ("card", "montecarlo(4)", cpu_ms(lambda v, i: teacher(v, i).play(v), plays)),
        ("bid", "learned", cpu_ms(lambda v, i: learned.bid(v), bids)),
        ("bid", "montecarlo(4)", cpu_ms(lambda v, i: teacher(v, i).bid(v), bids)),
    ]
    print(
        f"processor ms per decision, {args.games} games' positions ({len(plays)} card, "
        f"{len(bids)} bid decisions)"
    )
    print("decision  bot              mean    median     p95")
    means = {}
    for kind, bot, ms in rows:
        p95 = sorted(ms)[max(0, int(0.95 * len(ms)) - 1)]
        means[kind, bot] = statistics.fmean(ms)
        print(
            f"{kind:8s}  {bot:14s} {means[kind, bot]:7.3f} {statistics.median(ms):9.3f} {p95:7.3f}"
        )
    for kind in ("card", "bid"):
        ratio = means[kind, "montecarlo(4)"] / means[kind, "learned"]
        print(f"{kind}: montecarlo(4) / learned = {ratio:.1f}")
    both = len(plays) * means["card", "learned"] + len(bids) * means["bid", "learned"]
    mc = len(plays) * means["card", "montecarlo(4)"] + len(bids) * means["bid", "montecarlo(4)"]
    print(f"all decisions above: montecarlo(4) / learned = {mc / both:.1f}")
    print(f"Python {platform.python_version()}, load average {_load():.1f}")
    return 0


def _load() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return float("nan")


if __name__ == "__main__":
    sys.exit(main())
