"""Ratings speed: Bradley-Terry fit and bootstrap on a synthetic pool, and
the whole leaderboard of a results store that size.

Builds a pool of bots with spread-out hidden strengths playing random tables of
3-6 players (Wizard-like scores, multiples of 10, ties possible), then prints
the point-fit time, the bootstrap time and the incremental Elo time, on one
core (this process only). Then it writes those games to a results store (a
tournament's SQLite file, each game its own duplicate set, per-round bids,
tricks and points as a tournament stores them) and times the leaderboard a
finished tournament prints: reading the store, the statistics, the fit and
the bootstrap intervals, all of it.

    python bench/bench_ratings.py [--bots 20] [--games 10000] [--bootstrap 1000] [--seed 1]
                                  [--no-store]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from wizard_arena.rules import Rules
from wizard_referee.ratings.models import GameResult, bradley_terry, elo
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.leaderboard import leaderboard
from wizard_referee.tournament.store import GameSpec, ResultsStore


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


def write_store(path: Path, games: list[GameResult], rng: random.Random) -> None:
    """``games`` as a tournament's results store, each game its own duplicate set."""
    names = sorted({p for g in games for p in g.players})
    specs = [
        GameSpec(f"t{k}-d0-r0", k, k, 0, 0, f"1:t{k}:d0", g.players) for k, g in enumerate(games)
    ]
    with ResultsStore(path) as store:
        store.db.execute("PRAGMA synchronous=OFF")  # building the file only
        store.create("bench", {}, [(n, "command", "bot") for n in names], specs, {})
        for spec, g in zip(specs, games, strict=True):
            n = len(g.players)
            rounds = 60 // n
            per_round = []
            for _ in range(rounds):
                bids = [rng.randint(0, 3) for _ in range(n)]
                tricks = [b if rng.random() < 0.6 else rng.randint(0, 3) for b in bids]
                points = [
                    20 + 10 * t if b == t else -10 * abs(b - t)
                    for b, t in zip(bids, tricks, strict=True)
                ]
                per_round.append([bids, tricks, points, points])
            totals = [int(x) for x in g.scores]
            ranks = [1 + sum(t > x for t in totals) for x in totals]
            record = GameRecord(
                spec.id,
                Rules(players=n).to_dict(),
                list(g.players),
                spec.seed,
                0,
                0.0,
                finished_at=1.0,
                status="finished",
                results=per_round,
                totals=totals,
                ranks=ranks,
                faults=[{} for _ in range(n)],
                fault_details=[{} for _ in range(n)],
            )
            store.save_game(spec, record)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--bots", type=int, default=20)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-store", action="store_true", help="skip the leaderboard of a store")
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

    if args.no_store:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        write_store(path, games, random.Random(args.seed))
        size = path.stat().st_size
        with ResultsStore(path, create=False) as store:
            start = time.perf_counter()
            read = sum(1 for _ in store.finished_games())
            t_read = time.perf_counter() - start
            start = time.perf_counter()
            board = leaderboard(store, bootstrap=args.bootstrap, seed=args.seed)
            t_board = time.perf_counter() - start
        print(f"store:      {read} games, {size / 1e6:.1f} MB")
        print(f"read:       {t_read:8.3f} s  (the finished games and their seat results)")
        print(
            f"leaderboard:{t_board:8.3f} s  (all of it: reading, statistics, fit, "
            f"{args.bootstrap} resamples)"
        )
        assert board.rows[0].name == top.name


if __name__ == "__main__":
    main()
