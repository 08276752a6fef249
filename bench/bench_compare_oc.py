"""Operating characteristics of ``wizard-arena compare``'s sequential test,
by simulation: how often each verdict comes, and after how many games, when
the paired differences have a known mean and shape.

The test is :mod:`wizard_referee.compare.stats` (a betting confidence
sequence), run here vectorised over ``--runs`` simulated comparisons with
numpy; ``tests/test_compare.py`` checks that this vectorised form reaches
the same verdicts at the same deals as the module itself.

Shapes of the paired differences (points per game), each with spread
``--sd`` (default 200) and clipped to the rules' bound (2,700 at 4 players):

- ``normal``: normal;
- ``zero5``, ``zero10``, ``zero20``: 5%, 10% or 20% of deals differ at all
  (normal around ``mean / share``, spread ``--sd``), the rest exactly 0, as
  two versions of a bot that differ only in rare situations;
- ``t3``: Student's t with 3 degrees of freedom (heavy tails);
- ``skewed``: a shifted exponential (skewness 2).

True means: ``-h1``, ``h0``, ``(h0 + h1) / 2``, ``h1`` and ``2 h1`` (the
defaults: -20, 0, 10, 20, 40). An error is "A is stronger" (``A-B > h0``
shown) where the true mean is at most ``h0``, and "A is not stronger by h1"
(``A-B < h1`` shown) where it is at least ``h1``; each rate is printed with
its upper 99% Clopper-Pearson bound, which must not exceed alpha (beta).
For reference the normal SPRT (Wald's test on a normal likelihood, the
variance estimated, floored at 1e-6, at least 10 deals) runs on every shape
at ``h0`` and ``h1``: its error rates, and on the normal shape its expected
games, which this test's must stay within 2.2 times of. "undecided" is the
share of runs that reach ``--max-games`` (default: the command's).

With ``--question deals`` the test is that of ``compare --question deals``:
each deal adds the sign of its difference (+1, -1, 0 for a tie), bounded by
1, thresholds ``--h0`` (0) and ``--h1`` (0.1) as shares of the deals. The
differences are drawn as points (shapes as real play gives them) and the
test sees their signs; the true means are net shares (the chance that A
outscores B minus the chance that B outscores A: ``-h1``, ``h0``, ``(h0 + h1)
/ 2``, ``h1``, ``2 h1``), each reached exactly by shifting the shape (the
shift, as the mean difference in points it makes, is printed: on the skewed
shape a net share of 0 is a positive mean in points). The shapes:

- ``normal``, ``t3``, ``skewed``: as above, never a tie;
- ``ties10``, ``ties40``: 10% or 40% of deals tie (equal totals, as deals
  played identically do), the rest normal.

    python bench/bench_compare_oc.py [--runs 10000] [--sd 200] [--players 4] [--json]
    python bench/bench_compare_oc.py --question deals [--runs 10000]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from wizard_arena.rules import Rules
from wizard_referee.compare.cmd_compare import DEFAULT_MAX_GAMES
from wizard_referee.compare.stats import (
    BET_CAP,
    DEFAULT_H1,
    QUESTIONS,
    Design,
)

Draw = Callable[[int, np.ndarray], np.ndarray]
"""``draw(deal, runs)``: the differences of deal ``deal`` (0, 1, ...) in the
given runs (indices)."""

SHAPES = ("normal", "zero5", "zero10", "zero20", "t3", "skewed")
DEALS_SHAPES = ("normal", "t3", "skewed", "ties10", "ties40")


@dataclass
class Result:
    verdicts: np.ndarray
    """Per run: 1 "A-B > h0" shown, -1 "A-B < h1" shown, 0 undecided."""
    deals: np.ndarray
    """Per run: the deal at which it stopped (the cap if undecided)."""


def simulate(draw: Draw, design: Design, bound: float, runs: int, max_deals: int) -> Result:
    """The test of :mod:`wizard_referee.compare.stats` over ``runs``
    comparisons at once (the same arithmetic as ``ConfidenceSequence.add``
    and ``decide``), stopping each at its verdict or at ``max_deals``."""
    h0, h1 = design.h0, design.h1
    gap = h1 - h0
    log_alpha, log_beta = math.log(1 / design.alpha), math.log(1 / design.beta)
    cap_up, cap_down = BET_CAP / (h0 + bound), BET_CAP / (bound - h1)
    active = np.arange(runs)
    mean = np.zeros(runs)
    spread = np.full(runs, (design.prior_spread * bound) ** 2)
    up = np.zeros(runs)
    down = np.zeros(runs)
    verdicts = np.zeros(runs, dtype=np.int8)
    deals = np.full(runs, max_deals)
    for t in range(max_deals):
        x = draw(t, active)
        m, v = mean[active], spread[active] / (t + 1)
        ms = design.stake_mean(m, t)
        stake_up = np.minimum(np.maximum(gap, ms - h0) / v, cap_up)
        stake_down = np.minimum(np.maximum(gap, h1 - ms) / v, cap_down)
        u = up[active] + np.log1p(stake_up * (x - h0))
        d = down[active] + np.log1p(-stake_down * (x - h1))
        up[active], down[active] = u, d
        spread[active] += (x - m) ** 2
        mean[active] = m + (x - m) / (t + 1)
        above, below = u >= log_alpha, d >= log_beta
        active = _stop(active, above, below, verdicts, deals, t + 1)
        if active.size == 0:
            break
    return Result(verdicts, deals)


def _stop(
    active: np.ndarray,
    above: np.ndarray,
    below: np.ndarray,
    verdicts: np.ndarray,
    deals: np.ndarray,
    deal: int,
) -> np.ndarray:
    """Record the verdict and deal of the active runs that stopped at ``deal``
    (``above``: "A-B > h0" shown; else ``below``); the runs still active."""
    stopped = above | below
    if not stopped.any():
        return active
    idx = active[stopped]
    verdicts[idx] = np.where(above[stopped], 1, -1)
    deals[idx] = deal
    left: np.ndarray = active[~stopped]
    return left


def simulate_sprt(draw: Draw, h0: float, h1: float, runs: int, max_deals: int) -> Result:
    """The normal SPRT, for reference: Wald's SPRT on normal differences with
    the variance estimated (times 1 + 4/n, floored at 1e-6), alpha = beta =
    0.05, never before 10 deals."""
    upper = math.log(0.95 / 0.05)
    active = np.arange(runs)
    total = np.zeros(runs)
    squares = np.zeros(runs)
    verdicts = np.zeros(runs, dtype=np.int8)
    deals = np.full(runs, max_deals)
    for t in range(max_deals):
        x = draw(t, active)
        total[active] += x
        squares[active] += x * x
        n = t + 1
        if n < 10:
            continue
        s, q = total[active], squares[active]
        m = s / n
        var = np.maximum((q - n * m * m) / (n - 1) * (1 + 4 / n), 1e-6)
        llr = n * (h1 - h0) * (2 * m - h0 - h1) / (2 * var)
        above, below = llr >= upper, llr <= -upper
        active = _stop(active, above, below, verdicts, deals, n)
        if active.size == 0:
            break
    return Result(verdicts, deals)


def drawer(shape: str, mean: float, sd: float, bound: float, rng: np.random.Generator) -> Draw:
    """Differences of the given shape, mean and spread, clipped to the bound."""

    def draw(_deal: int, runs: np.ndarray) -> np.ndarray:
        k = runs.size
        if shape == "normal":
            x = rng.normal(mean, sd, k)
        elif shape.startswith("zero"):
            share = int(shape[4:]) / 100
            x = np.where(rng.random(k) < share, rng.normal(mean / share, sd, k), 0.0)
        elif shape == "t3":
            x = mean + rng.standard_t(3, k) * sd / math.sqrt(3)
        elif shape == "skewed":
            x = mean + sd * (rng.exponential(1.0, k) - 1.0)
        else:
            raise ValueError(f"unknown shape {shape!r}: one of {', '.join(SHAPES)}")
        return np.clip(x, -bound, bound)

    return draw


def _ahead(shape: str, shift: float, sd: float) -> float:
    """The chance that a difference of the shape (untied), shifted by
    ``shift`` points, is above 0 (none is exactly 0)."""
    z = shift / sd
    if shape in ("normal", "ties10", "ties40"):
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
    if shape == "t3":  # Student's t with 3 degrees of freedom, scaled to spread sd
        t = z * math.sqrt(3.0)
        u = t / math.sqrt(3.0)
        return 0.5 + (u / (1.0 + u * u) + math.atan(u)) / math.pi
    if shape == "skewed":  # sd * (exponential - 1) > -shift
        return 1.0 if z >= 1.0 else math.exp(z - 1.0)
    raise ValueError(f"unknown shape {shape!r}: one of {', '.join(DEALS_SHAPES)}")


def _tie_share(shape: str) -> float:
    return int(shape[4:]) / 100 if shape.startswith("ties") else 0.0


def deals_shift(shape: str, net: float, sd: float) -> float:
    """The shift in points that makes the net share of the shape ``net``
    (bisection on the exact distribution functions).

    >>> abs(deals_shift("normal", 0.0, 200.0)) < 1e-9, round(deals_shift("skewed", 0.0, 200.0), 1)
    (True, 61.4)
    >>> round(deals_shift("ties40", 0.3, 200.0), 1)
    134.9
    """
    untied = 1.0 - _tie_share(shape)
    if not abs(net) < untied:
        raise ValueError(f"{shape}: a net share of {net:g} is beyond {untied:g}")
    lo, hi = -20.0 * sd, 20.0 * sd
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if untied * (2.0 * _ahead(shape, mid, sd) - 1.0) < net:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def deals_drawer(shape: str, net: float, sd: float, rng: np.random.Generator) -> Draw:
    """The signs of differences of the given shape shifted to the net share
    ``net`` (the chance that A outscores B minus the chance that B does)."""
    shift = deals_shift(shape, net, sd)
    ties = _tie_share(shape)
    base = "normal" if ties else shape

    def draw(_deal: int, runs: np.ndarray) -> np.ndarray:
        k = runs.size
        if base == "normal":
            x = rng.normal(shift, sd, k)
        elif base == "t3":
            x = shift + rng.standard_t(3, k) * sd / math.sqrt(3)
        else:
            x = shift + sd * (rng.exponential(1.0, k) - 1.0)
        if ties:
            x = np.where(rng.random(k) < ties, 0.0, x)
        signs: np.ndarray = np.sign(x)
        return signs

    return draw


def upper_bound(errors: int, runs: int, level: float = 0.99) -> float:
    """The one-sided upper ``level`` Clopper-Pearson bound of a rate of
    ``errors`` in ``runs`` (bisection on the binomial distribution function).

    >>> round(upper_bound(0, 10000), 5), round(upper_bound(500, 10000), 4)
    (0.00046, 0.0553)
    """
    if errors >= runs:
        return 1.0

    def cdf(p: float) -> float:
        if p <= 0:
            return 1.0
        logs = [
            math.lgamma(runs + 1)
            - math.lgamma(k + 1)
            - math.lgamma(runs - k + 1)
            + k * math.log(p)
            + (runs - k) * math.log1p(-p)
            for k in range(errors + 1)
        ]
        top = max(logs)
        return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))

    lo, hi = errors / runs, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if cdf(mid) > 1 - level:
            lo = mid
        else:
            hi = mid
    return hi


def case_row(
    shape: str, mean: float, result: Result, design: Design, runs: int
) -> dict[str, object]:
    above = int((result.verdicts == 1).sum())
    below = int((result.verdicts == -1).sum())
    row: dict[str, object] = {
        "shape": shape,
        "mean": mean,
        "above_h0": above / runs,
        "below_h1": below / runs,
        "undecided": float((result.verdicts == 0).mean()),
        "games_mean": 2 * float(result.deals.mean()),
        "games_p95": 2 * float(np.percentile(result.deals, 95)),
    }
    if mean <= design.h0:
        row.update(error=above / runs, error_upper99=upper_bound(above, runs), nominal=design.alpha)
    elif mean >= design.h1:
        row.update(error=below / runs, error_upper99=upper_bound(below, runs), nominal=design.beta)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--sd", type=float, default=200.0)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--h0", type=float, default=0.0)
    ap.add_argument(
        "--h1", type=float, help="default 20 (points per game), 0.1 with --question deals"
    )
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--max-games", type=int, default=DEFAULT_MAX_GAMES)
    ap.add_argument("--question", choices=QUESTIONS, default="points")
    ap.add_argument("--shapes", help="default: " + ", ".join(SHAPES) + "; with --question "
                    "deals " + ", ".join(DEALS_SHAPES))  # fmt: skip
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    deals = args.question == "deals"
    h1 = DEFAULT_H1[args.question] if args.h1 is None else args.h1
    design = Design(args.h0, h1, args.alpha, args.beta, question=args.question)
    bound = design.bound(Rules(players=args.players))
    shapes = (args.shapes or ",".join(DEALS_SHAPES if deals else SHAPES)).split(",")

    def draw_for(shape: str, mean: float) -> Draw:
        if deals:
            return deals_drawer(shape, mean, args.sd, rng)
        return drawer(shape, mean, args.sd, bound, rng)

    max_deals = args.max_games // 2
    means = sorted({-design.h1, design.h0, (design.h0 + design.h1) / 2, design.h1, 2 * design.h1})
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    rows = []
    for shape in shapes:
        for mean in means:
            result = simulate(draw_for(shape, mean), design, bound, args.runs, max_deals)
            row = case_row(shape, mean, result, design, args.runs)
            if deals:
                row["points_mean"] = (1 - _tie_share(shape)) * deals_shift(shape, mean, args.sd)
            rows.append(row)
    sprt: dict[float, float] = {}
    sprt_errors: dict[str, list[float]] = {}
    for shape in shapes:
        for mean, wrong in ((design.h0, 1), (design.h1, -1)):
            res = simulate_sprt(draw_for(shape, mean), design.h0, design.h1, args.runs, max_deals)
            sprt_errors.setdefault(shape, []).append(float((res.verdicts == wrong).mean()))
            if shape == "normal":
                sprt[mean] = 2 * float(res.deals.mean())
    cpu = time.process_time() - started
    errors_ok = all(r["error_upper99"] <= r["nominal"] for r in rows if "error" in r)  # type: ignore[operator]
    normal = {r["mean"]: r for r in rows if r["shape"] == "normal"}
    ratios = {m: float(normal[m]["games_mean"]) / sprt[m] for m in sprt if m in normal}  # type: ignore[arg-type]
    undecided = max(
        float(r["undecided"])  # type: ignore[arg-type]
        for r in rows
        if r["mean"] in (design.h0, design.h1)
    )
    summary = {
        "runs": args.runs,
        "sd": args.sd,
        "players": args.players,
        "bound": bound,
        "max_games": args.max_games,
        "design": design.key(),
        "cpu_s": round(cpu, 1),
        "sprt_games_mean": sprt,
        "games_ratio_to_sprt": ratios,
        "errors_within_nominal": errors_ok,
        "sprt_errors_at_h0_h1": sprt_errors,
        "undecided_at_h0_h1_max": undecided,
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return 0
    print(
        f"{args.runs} runs per case, sd {args.sd:g}, {args.players} players (bound {bound:g}), "
        f"h0 {design.h0:+g}, h1 {design.h1:+g}, alpha {design.alpha:g}, beta {design.beta:g}, "
        f"cap {args.max_games} games, --question {args.question}"
        + (
            " (means: net shares of the deals; pts: the mean difference in points they make)"
            if deals
            else ""
        )
    )
    print(
        f"{'shape':<8} {'mean':>6} {'pts' if deals else '':>6} {'>h0':>7} {'<h1':>7} "
        f"{'undec.':>7} {'games':>7} {'p95':>6}  {'error (99% upper)':>18}"
    )
    for r in rows:
        err = f"{r['error']:.4f} ({r['error_upper99']:.4f})" if "error" in r else ""
        pts = f"{r['points_mean']:+6.1f}" if "points_mean" in r else ""
        print(
            f"{r['shape']:<8} {r['mean']:>+6g} {pts:>6} {r['above_h0']:>7.4f} "
            f"{r['below_h1']:>7.4f} {r['undecided']:>7.4f} {r['games_mean']:>7.0f} "
            f"{r['games_p95']:>6.0f}  {err:>18}"
        )
    for shape, (at_h0, at_h1) in sprt_errors.items():
        print(
            f"normal SPRT, {shape}: 'A is stronger' at h0 {at_h0:.4f}, 'no difference' at h1 "
            f"{at_h1:.4f} (nominal {design.alpha:g} and {design.beta:g})"
        )
    for m, g in sprt.items():
        print(
            f"normal SPRT, normal shape, mean {m:+g}: {g:.0f} games on average; this test "
            f"{ratios[m]:.2f} times that"
        )
    print(
        f"every error rate within nominal by its upper 99% bound: {'yes' if errors_ok else 'NO'}; "
        f"undecided at h0 or h1 at most {undecided:.4f}; CPU {cpu:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
