"""The rules core's speed against OpenSpiel's C++ ``oh_hell``, from one Python loop.

Both sides play random legal games from the same kind of Python loop and are
timed by this process's CPU time (a shared machine's waiting is not counted):

- the core: full 4-player games of Wizard (15 rounds; ``Game.deal``,
  ``Game.legal_actions``, ``Game.apply``), ``bench_rules.play_random_game``;
- OpenSpiel: ``oh_hell`` with ``players=4``, ``num_tricks_fixed=10`` (one
  10-trick deal a game), chance outcomes sampled (every chance node of
  ``oh_hell`` is uniform: ``rng.choice`` of ``chance_outcomes()``; this is
  checked once before timing) and player actions chosen uniformly from
  ``legal_actions()``.

Only player decisions are counted (a bid, a card, or for the core also a trump
choice after a turned Wizard); OpenSpiel's chance nodes (the deal, card by
card) are timed but not counted. One *pair* times one window of each; pairs
alternate which side goes first (to cancel drift on a shared machine), and
the printed ratio is the median of the pairs' ratios (core / OpenSpiel).

    pip install open-spiel   # in the bench's environment; not an extra of the project
    python bench/bench_openspiel.py [--seconds 3] [--pairs 3] [--seed 1]

Without open-spiel installed it says so and prints the core's figure alone.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rules import play_random_game

PLAYERS = 4
TRICKS = 10


def load_oh_hell() -> Any | None:
    """OpenSpiel's ``oh_hell`` game object, or None without open-spiel."""
    try:
        pyspiel = importlib.import_module("pyspiel")  # (untyped: no stubs)
    except ImportError:
        return None
    return pyspiel.load_game("oh_hell", {"players": PLAYERS, "num_tricks_fixed": TRICKS})


def play_oh_hell(game: Any, rng: random.Random) -> int:
    """One random game of ``oh_hell``; return the player decisions made."""
    state = game.new_initial_state()
    choice = rng.choice
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(choice(state.chance_outcomes())[0])
        else:
            state.apply_action(choice(state.legal_actions()))
            decisions += 1
    return decisions


def check_uniform_chance(game: Any, rng: random.Random) -> None:
    """Raise unless every chance node of a game is uniform (so sampling with
    ``rng.choice`` is sampling the game's chance outcomes)."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            probs = [p for _, p in state.chance_outcomes()]
            if max(probs) - min(probs) > 1e-9:
                raise RuntimeError("oh_hell has a non-uniform chance node")
            state.apply_action(rng.choice(state.chance_outcomes())[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))


def rate(play: Callable[[], int], seconds: float) -> tuple[float, int]:
    """Play games for ``seconds`` of process CPU time: (decisions per
    CPU-second, games)."""
    games = decisions = 0
    start = time.process_time()
    end = start + seconds
    while time.process_time() < end:
        decisions += play()
        games += 1
    return decisions / (time.process_time() - start), games


def load_text() -> str:
    if not hasattr(os, "getloadavg"):
        return "load average unknown"
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per window")
    ap.add_argument("--pairs", type=int, default=3, help="alternated pairs of windows")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    core_rng = random.Random(args.seed)
    spiel_rng = random.Random(args.seed + 1)
    oh_hell = load_oh_hell()
    print(f"{load_text()} at the start; {os.cpu_count()} cpus")

    def core() -> int:
        return play_random_game(PLAYERS, core_rng)

    if oh_hell is None:
        print("open-spiel is not installed (pip install open-spiel): the core's figure alone")
        for k in range(args.pairs):
            r, games = rate(core, args.seconds)
            print(f"window {k + 1}: core {r:,.0f} decisions/CPU-s ({games} games)")
        print(f"{load_text()} at the end")
        return 0

    check_uniform_chance(oh_hell, random.Random(0))

    def spiel() -> int:
        return play_oh_hell(oh_hell, spiel_rng)

    print(f"{'pair':>4} {'first':>9} {'core dec/CPU-s':>15} {'oh_hell dec/CPU-s':>18} {'ratio':>6}")
    ratios = []
    for k in range(args.pairs):
        core_first = k % 2 == 0
        if core_first:
            c, _ = rate(core, args.seconds)
            s, _ = rate(spiel, args.seconds)
        else:
            s, _ = rate(spiel, args.seconds)
            c, _ = rate(core, args.seconds)
        ratios.append(c / s)
        first = "core" if core_first else "oh_hell"
        print(f"{k + 1:>4} {first:>9} {c:>15,.0f} {s:>18,.0f} {c / s:>6.3f}")
    print(f"median ratio core / oh_hell over {len(ratios)} pairs: {statistics.median(ratios):.3f}")
    print(f"{load_text()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
