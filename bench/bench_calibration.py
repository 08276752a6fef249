"""Coverage of the leaderboard's printed 95% intervals on simulated fields
of known strength (wizard_referee/tournament/calibrate.py: Plackett-Luce
games, the tournament's plan and seatings, the leaderboard's own rating
code; no gRPC), and the CPU time it took.

For each case (entrants x deal sets) it plays ``--tournaments`` independent
tournaments and prints the share of bots' rating intervals that held the
true rating, and of the intervals of the difference with the next bot that
held the true difference, each with its standard error (over tournaments:
the intervals of one tournament are not independent). 500 tournaments
resolve a coverage of 95% to about +-1 point (2 standard errors), finer
with several intervals per tournament.

    nice -n 10 python bench/bench_calibration.py [--entrants 4 8 16] [--deal-sets 10 20 40]
        [--tournaments 500] [--bootstrap 1000] [--seed 0] [--narrow 1.0] [--unwidened]

``--unwidened`` measures the bootstrap's own percentile intervals, without
the small-sample widening of ratings/intervals.py; ``--narrow 0.7`` shrinks
every printed interval by 30% (the planted fault of tests/test_calibration.py).
"""

from __future__ import annotations

import argparse
import sys

from wizard_referee.ratings import intervals
from wizard_referee.tournament.calibrate import Case, measure, plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--deal-sets", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--tournaments", type=int, default=500)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--narrow", type=float, default=1.0)
    parser.add_argument("--unwidened", action="store_true")
    args = parser.parse_args(argv)
    if args.unwidened:
        intervals.widening = lambda sets: 1.0
    print(
        "| bots | deal sets | sets per bot | games | tournaments | rating intervals holding"
        " the truth | neighbour intervals holding the truth | CPU s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    total = 0.0
    for entrants in args.entrants:
        for deals in args.deal_sets:
            case = Case(entrants=entrants, deal_sets=deals)
            cov = measure(
                case, args.tournaments, bootstrap=args.bootstrap, seed=args.seed, narrow=args.narrow
            )
            total += cov.cpu_seconds
            cells = []
            for which in ("ratings", "neighbours"):
                share, se, n = cov.rate(which)
                cells.append(f"{share:.1%} ± {se:.1%} ({n})")
            games = len(plan(case))
            print(
                f"| {entrants} | {deals} | {case.sets_per_bot()} | {games} | {args.tournaments} "
                f"| {cells[0]} | {cells[1]} | {cov.cpu_seconds:.0f} |",
                flush=True,
            )
    print(f"\ntotal CPU {total:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
