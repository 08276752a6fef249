"""Ratings speed: Bradley-Terry fit and bootstrap on a synthetic pool.

Builds a pool of bots with spread-out hidden strengths playing random tables of
3-6 players (Wizard-like scores, multiples of 10, ties possible), then prints
the point-fit time, the bootstrap time and the incremental Elo time, on one
core (this process only).

    python bench/bench_ratings.py [--bots 20] [--games 10000] [--bootstrap 1000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from wizard_referee.ratings.models import GameResult, bradley_terry, elo


def synthetic_games(bots: int, games: int, rng: random.Random) -> list[GameResult]:
    """Random tables of 3-6 (at most ``bots``); higher hidden strength scores more on average."""
    names = [f"bot{k:03d}" for k in range(bots)]
    strength = {name: rng.gauss(0.0, 1.0) for name in names}
    out = []
    for _ in range(games):
        table = rng.sample(names, rng.randint(min(3, bots), min(6, bots)))
        scores = [10 * round(4 * strength[p] + rng.gauss(0.0, 8.0)) for p in table]
        out.append(GameResult(tuple(table), tuple(scores)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--bots", type=int, default=20)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    games = synthetic_games(args.bots, args.games, random.Random(args.seed))
    pairs = sum(len(g.players) * (len(g.players) - 1) // 2 for g in games)
    print(f"{args.bots} bots, {args.games} games (tables of 3-6), {pairs} pairwise comparisons")

    start = time.perf_counter()
    fit = bradley_terry(games, bootstrap=0)
    t_fit = time.perf_counter() - start
    print(f"fit:        {t_fit:8.3f} s  ({fit.iterations} Newton iterations)")

    boot = fit
    if args.bootstrap > 0:
        start = time.perf_counter()
        boot = bradley_terry(games, bootstrap=args.bootstrap, seed=args.seed)
        t_boot = time.perf_counter() - start - t_fit  # the call refits the point estimate too
        print(
            f"bootstrap:  {t_boot:8.3f} s  ({args.bootstrap} resamples, "
            f"{1000 * t_boot / args.bootstrap:.2f} ms each)"
        )

    start = time.perf_counter()
    elo(games)
    print(f"elo:        {time.perf_counter() - start:8.3f} s")

    top = boot.players[0]
    print(
        f"top: {top.name} {top.rating:.1f} [{top.low:.1f}, {top.high:.1f}]"
        if top.low is not None and top.high is not None
        else f"top: {top.name} {top.rating:.1f}"
    )


if __name__ == "__main__":
    main()
