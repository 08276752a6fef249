"""How many games ``wizard-arena compare`` needs, with duplicate deals and
without, and how long 100 games take.

Plays ``--deals`` deals of a comparison of A (default the Monte Carlo bot,
4 samples per decision) with B (default the heuristic bot) against the
default opponents (the example bots), in-process with ``--parallel`` workers
(default: the number of cores), three games per deal:

- A's game and B's game of the deal, as ``compare`` plays them (duplicate
  replacement: same cards, seat, opponents and opponent seeds);
- B's game of an independent deal (its own cards and opponent seeds), as
  ``compare --no-duplicate`` plays it.

That gives the paired differences of both designs on the same A games.
Both designs estimate the same difference A - B; what differs is the spread
of the differences. So the number of games each design needs is the average
stopping time of the very test ``compare`` runs
(:mod:`wizard_referee.compare.stats`; default bounds 0 and 20 points per
game, alpha = beta = 0.05) over ``--simulations`` sequences drawn with
replacement from the design's observed differences, each shifted to the
mean of both designs (so that only the spread tells them apart); and, for
reference, from the differences as observed. The same resampling of the
duplicate design's differences as observed gives the games each question
takes: ``--question points`` (the mean of A - B) and ``--question deals``
(the mean of its sign, bounds 0 and ``--deals-h1``). The wall time per 100 games is
that of the duplicate design's games (A's and B's, half each), with the
mean CPU time of one game in a worker (what it would be on idle cores).

    python bench/bench_compare.py [--deals 100] [--parallel N] [--simulations 2000]
        [--deals-h1 0.1] [--no-independent] [--save FILE | --load FILE]

``--save FILE`` keeps the candidate's totals by game (JSON); ``--load FILE``
reads them instead of playing (the figures again without the games), from
such a file or from a comparison's database (``compare --database``, its
deals counted from the first up to the first one not finished).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import random
import statistics
import time
from collections.abc import Sequence

from wizard_arena.rules import Rules
from wizard_referee.compare.local_play import GamePool
from wizard_referee.compare.plan import (
    DEFAULT_OPPONENTS,
    SIDES,
    ComparePlan,
    PlannedGame,
    parse_bot,
)
from wizard_referee.compare.stats import (
    DEFAULT_H1,
    ConfidenceSequence,
    Design,
    Verdict,
    difference_bound,
)
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import ResultsStore


def play(
    plan: ComparePlan, games: list[PlannedGame], parallel: int
) -> tuple[dict[str, int], list[float]]:
    """The candidate's total in each game, by game id, and the CPU seconds
    of each game in its worker (``plan`` gives the pool its bots)."""
    done: queue.Queue[tuple[PlannedGame, GameRecord | None, BaseException | None]]
    done = queue.Queue()
    pool = GamePool(plan, parallel)
    try:
        for g in games:
            pool.submit(g, lambda g, r: done.put((g, r, None)), lambda g, e: done.put((g, None, e)))
        out = {}
        seconds = []
        for _ in games:
            g, record, error = done.get()
            if record is None:
                raise RuntimeError(f"{g.spec.id}: {error}")
            out[g.spec.id] = record.totals[g.candidate_seat]
            seconds.append(float(record.tags["cpu_s"]))
        return out, seconds
    finally:
        pool.close()


def load(path: str) -> tuple[dict[str, int], dict[str, int]]:
    """The candidate's totals by game id (and the independent design's, if
    kept) from ``--save``'s file or a comparison's database."""
    if not path.endswith((".sqlite", ".db")):
        with open(path) as f:
            kept = json.load(f)
        return kept["paired"], kept["independent"]
    paired = {}
    with ResultsStore(path, create=False) as store:
        for spec, seats, _ in store.finished_games():
            side = SIDES[spec.rotation]
            total = next((s.total for s in seats if s.entrant == side), None)
            if total is not None:
                paired[spec.id] = total
    return paired, {}


def stopping(
    diffs: Sequence[float], design: Design, bound: float, runs: int, rng: random.Random
) -> tuple[list[int], float]:
    """Games (two per deal) the test took in each simulated run, and the
    share of runs that ended "A is stronger"."""
    games = []
    stronger = 0
    for _ in range(runs):
        cs = ConfidenceSequence(bound, design)
        verdict = None
        while verdict is None and cs.n < 100_000:
            cs.add(rng.choice(diffs))
            verdict = cs.decide()
        games.append(2 * cs.n)
        stronger += verdict is Verdict.ABOVE_H0
    return games, stronger / runs


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--a", default="wizard_bots.montecarlo:MonteCarloBot(samples=4)")
    ap.add_argument("--b", default="wizard_bots.heuristic:HeuristicBot")
    ap.add_argument(
        "--opponent",
        action="append",
        default=[],
        help="an opponent (repeat; default the example bots, as compare takes them)",
    )
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--simulations", type=int, default=2000)
    ap.add_argument("--h0", type=float, default=0.0)
    ap.add_argument("--h1", type=float, default=20.0)
    ap.add_argument("--deals-h1", type=float, default=DEFAULT_H1["deals"])
    ap.add_argument(
        "--no-independent",
        dest="independent",
        action="store_false",
        help="skip the independent design's games (a third fewer games)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", metavar="FILE", help="keep the totals by game (JSON)")
    ap.add_argument("--load", metavar="FILE", help="read the totals instead of playing")
    args = ap.parse_args()
    given = args.opponent or list(DEFAULT_OPPONENTS)
    opponents = tuple(parse_bot(given[k % len(given)]) for k in range(args.players - 1))
    shared = dict(
        a=parse_bot(args.a),
        b=parse_bot(args.b),
        opponents=opponents,
        rules=Rules(players=args.players),
        seed=args.seed,
        secret=f"bench {args.seed}",
    )
    dup = ComparePlan(**shared, duplicate=True)
    ind = ComparePlan(**shared, duplicate=False)
    deals = range(args.deals)
    print(
        f"A = {args.a}, B = {args.b}, against {', '.join(o.text for o in opponents)}; "
        f"{args.deals} deals, {args.parallel} at once on {os.cpu_count()} cores"
    )
    if args.load:
        paired, other = load(args.load)
        deals = range(min(args.deals, next(k for k in range(10**9) if f"d{k}-B" not in paired)))
        print(f"read {2 * len(deals)} games ({len(deals)} deals) from {args.load}")
    else:
        start = time.perf_counter()
        paired, seconds = play(dup, dup.games(deals), args.parallel)
        wall = time.perf_counter() - start
        print(
            f"wall time: {100 * wall / (2 * args.deals):.1f} s per 100 games "
            f"({2 * args.deals} games of the duplicate design in {wall:.0f} s; "
            f"one game {statistics.fmean(seconds):.2f} CPU-s in its worker, so at least "
            f"{100 * statistics.fmean(seconds) / args.parallel:.0f} s per 100 games "
            f"on {args.parallel} idle cores)",
            flush=True,
        )
        other = {}
        if args.independent:
            other, _ = play(ind, [ind.game(k, "B") for k in deals], args.parallel)
        if args.save:
            with open(args.save, "w") as f:
                json.dump({"paired": paired, "independent": other}, f)
    a = [paired[f"d{k}-A"] for k in deals]
    designs = {"duplicate": [x - paired[f"d{k}-B"] for k, x in zip(deals, a, strict=True)]}
    if other:
        designs["independent"] = [x - other[f"d{k}-B"] for k, x in zip(deals, a, strict=True)]
    design = Design(args.h0, args.h1, 0.05, 0.05)
    bound = difference_bound(dup.rules)
    questions(designs["duplicate"], design, bound, args.deals_h1, args.simulations, args.seed)
    if "independent" not in designs:
        return
    ratio = report(designs, design, bound, args.simulations, args.seed)
    rho = statistics.correlation(a, [paired[f"d{k}-B"] for k in deals])
    print(
        f"variance of the duplicate differences: {ratio:.2f} of the independent ones "
        f"(correlation of A's and B's scores on a deal: {rho:+.2f})"
    )


def questions(
    diffs: list[int], points: Design, bound: float, deals_h1: float, simulations: int, seed: int
) -> None:
    """The games each question's test takes on the duplicate differences as
    observed (resampled), and how often it ends "A is stronger"."""
    deals = Design(0.0, deals_h1, 0.05, 0.05, question="deals")
    signs = [deals.outcome(x) for x in diffs]
    ahead, behind = signs.count(1.0), signs.count(-1.0)
    print(
        f"deals: A ahead on {ahead}, B ahead on {behind}, {len(signs) - ahead - behind} tied; "
        f"net {100 * statistics.fmean(signs):+.1f}% of the deals; "
        f"A-B {statistics.fmean(diffs):+.1f} points per game; {simulations} resampled runs each"
    )
    for name, xs, d, b in (
        (f"points (h1 {points.h1:g})", [float(x) for x in diffs], points, bound),
        (f"deals (h1 {deals_h1:g})", signs, deals, 1.0),
    ):
        games, share = stopping(xs, d, b, simulations, random.Random(seed))
        ordered = sorted(games)
        print(
            f"  --question {name:<16}: games to a decision mean {statistics.fmean(games):5.0f}, "
            f"median {statistics.median(games):5.0f}, 95th percentile "
            f"{ordered[int(0.95 * (len(ordered) - 1))]:5.0f}; "
            f"'A is stronger' in {share:.1%}"
        )


def report(
    designs: dict[str, list[int]], design: Design, bound: float, simulations: int, seed: int
) -> float:
    """Each design's differences and the games its test takes; the ratio of
    the variances (duplicate to independent)."""
    common = statistics.fmean(statistics.fmean(d) for d in designs.values())
    print(
        f"test h0 {design.h0:g}, h1 {design.h1:g} points per game, alpha = beta = 0.05; "
        f"{simulations} runs on each design's differences, shifted to the common "
        f"mean {common:+.1f} (as observed in brackets)"
    )
    sds = {}
    for name, diffs in designs.items():
        s = ConfidenceSequence(bound, design)
        for x in diffs:
            s.add(x)
        sds[name] = s.sd
        low, high = s.t_interval()
        shifted = [x - s.mean + common for x in diffs]
        games, share = stopping(shifted, design, bound, simulations, random.Random(seed))
        raw, raw_share = stopping(diffs, design, bound, simulations, random.Random(seed))
        print(
            f"{name:>11}: A-B {s.mean:+6.1f} points per game (95% {low:+.1f} to {high:+.1f}), "
            f"sd {s.sd:5.1f}; games to a decision: mean {statistics.fmean(games):5.0f} "
            f"({statistics.fmean(raw):.0f}), median {statistics.median(games):5.0f} "
            f"({statistics.median(raw):.0f}); 'A is stronger' in {share:.1%} ({raw_share:.1%})"
        )
    ratio = (sds["duplicate"] / sds["independent"]) ** 2
    if not math.isfinite(ratio):
        raise SystemExit("no variance measured")
    return ratio


if __name__ == "__main__":
    main()
