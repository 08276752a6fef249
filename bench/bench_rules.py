"""Rules-engine throughput: random legal full games for 3-6 players.

Prints decisions/s (a decision is one bid, trump choice or card played) and
games/s per table size, on one core (this process only), by wall-clock time
and by the process's CPU time (the CPU figure is the one to quote on a
shared, loaded machine: it does not count time spent waiting for a core).

    python bench/bench_rules.py [--seconds 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from wizard_arena.rules import Game, Phase, Rules


def play_random_game(players: int, rng: random.Random) -> int:
    """Play one full game choosing uniformly among legal actions; return decisions made."""
    game = Game(Rules(players=players), rng=rng)
    choice = rng.choice
    decisions = 0
    deal = game.deal
    apply = game.apply
    legal = game.legal_actions
    while True:
        phase = game.phase
        if phase is Phase.DEAL:
            deal()
            continue
        if phase is Phase.GAME_OVER:
            return decisions
        apply(game.to_act, choice(legal()))  # type: ignore[arg-type]
        decisions += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="time per table size")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    total_d = 0
    total_t = 0.0
    total_cpu = 0.0
    print(f"{'players':>7} {'games':>7} {'games/s':>9} {'decisions/s':>12} {'dec/CPU-s':>12}")
    for players in (3, 4, 5, 6):
        games = decisions = 0
        start = time.perf_counter()
        cpu_start = time.process_time()
        end = start + args.seconds
        while time.perf_counter() < end:
            decisions += play_random_game(players, rng)
            games += 1
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        total_d += decisions
        total_t += elapsed
        total_cpu += cpu
        print(
            f"{players:>7} {games:>7} {games / elapsed:>9.1f} {decisions / elapsed:>12,.0f}"
            f" {decisions / cpu:>12,.0f}"
        )
    print(f"{'all':>7} {'':>7} {'':>9} {total_d / total_t:>12,.0f} {total_d / total_cpu:>12,.0f}")


if __name__ == "__main__":
    main()
