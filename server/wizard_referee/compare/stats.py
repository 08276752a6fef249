"""The statistics of a comparison: paired differences, their 95% interval and
the sequential probability ratio test (SPRT) that stops a comparison as soon
as its answer is known.

A comparison yields one **paired difference** per deal: ``x = score_A -
score_B``, A's final points in its game of the deal minus B's in B's game
of the same deal (same cards, seat and opponents). The test is about ``mu``,
the mean of ``x``, in **points per game**.

Fixed number of deals: the mean ``m`` of the ``n`` differences and its 95%
interval ``m -/+ t(0.975, n - 1) * s / sqrt(n)`` (Student's t, ``s`` the
sample standard deviation with ``n - 1``).

The SPRT (Wald 1945) weighs ``H0: mu = mu0`` against ``H1: mu = mu1``
(``mu1 > mu0``), with the error rates ``alpha`` (deciding H1 when H0 holds) and
``beta`` (deciding H0 when H1 holds). As fishtest does for chess engines, the
differences are taken as normal, with the variance estimated from the data;
after ``n`` differences with mean ``m`` and sample variance ``s^2`` (divided
by ``n - 1``) the log-likelihood ratio is

    LLR = sum_i [(x_i - mu0)^2 - (x_i - mu1)^2] / (2 v)
        = n (mu1 - mu0) (2 m - mu0 - mu1) / (2 v),    v = s^2 (1 + 4 / n)

The factor ``1 + 4/n`` widens the variance while it is estimated from few
differences (as Student's t is wider than the normal): without it, a test
that stops early on a variance that happens to be low errs more often than
alpha and beta say. The test stops with H1 ("A is stronger") once ``LLR >=
ln((1 - beta) / alpha)`` and with H0 ("no difference") once ``LLR <= ln(beta
/ (1 - alpha))``, never before :data:`MIN_PAIRS` differences. With alpha =
beta = 0.05 the bounds are -2.944 and +2.944. ``v`` is floored at
:data:`VARIANCE_FLOOR` (identical deterministic bots differ by exactly 0 on
every deal).

Simulated with normal differences (sd 100, bounds 0 and 20 points, 12,000
runs each) it decided wrongly 5.1% of the time at ``mu = mu0`` and 5.0% at
``mu = mu1``, after 138 differences on average; without the factor, 6.3%
and 5.9% (5.6% and 5.5% when it may stop only after 20). The generalized
likelihood ratio, each hypothesis with its own variance, keeps the rates
too but is slow to see a large difference: for a difference of two
standard deviations it needed 36 differences, this test 12 (its minimum is
10).
The normal approximation is the assumption: strongly skewed differences
(exponential ones in simulation) make the error rates drift far from
alpha and beta; game scores are sums over many rounds, much less skewed.

>>> b = Bounds(mu0=0, mu1=20, alpha=0.05, beta=0.05)
>>> round(b.lower, 3), round(b.upper, 3)
(-2.944, 2.944)
>>> s = PairedStats()
>>> for x in (30, -10, 50, 20, 10, 40, 0, 60, 30, 20):
...     s.add(x)
>>> s.n, s.mean, round(s.sd, 2)
(10, 25.0, 21.73)
>>> round(s.llr(b), 3)
4.538
>>> [round(v, 2) for v in s.interval()]
[9.45, 40.55]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "MIN_PAIRS",
    "SMALL_SAMPLE",
    "VARIANCE_FLOOR",
    "Bounds",
    "PairedStats",
    "Verdict",
    "t_quantile",
]

#: The SPRT decides nothing before this many paired differences (deals):
#: the variance is estimated from the data and must first be worth something.
MIN_PAIRS = 10

#: Floor of the estimated variance of the differences (points^2).
VARIANCE_FLOOR = 1e-6

#: The variance used is ``s^2 * (1 + SMALL_SAMPLE / n)``.
SMALL_SAMPLE = 4.0


class Verdict(Enum):
    STRONGER = "A is stronger"
    """H1 accepted: A scores at least about ``mu1`` points per game more."""
    NO_DIFFERENCE = "no difference"
    """H0 accepted: A is not ``mu1`` points per game better (it may be worse)."""
    UNDECIDED = "undecided"
    """Neither bound reached within the games allowed."""


@dataclass(frozen=True)
class Bounds:
    """The hypotheses (points per game) and error rates of an SPRT."""

    mu0: float = 0.0
    mu1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mu0) and math.isfinite(self.mu1) and self.mu1 > self.mu0):
            raise ValueError(f"the bounds need mu1 > mu0, got {self.mu0:g} and {self.mu1:g}")
        for name, p in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < p < 0.5:
                raise ValueError(f"{name} must lie between 0 and 0.5, got {p:g}")

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)


class PairedStats:
    """Running mean and variance of paired differences (Welford's method)."""

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)

    @property
    def variance(self) -> float:
        """Sample variance (divided by n - 1); 0 for fewer than 2 values."""
        return self._m2 / (self.n - 1) if self.n > 1 else 0.0

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The two-sided Student-t interval of the mean (nan for n < 2)."""
        if self.n < 2:
            return (math.nan, math.nan)
        half = t_quantile(self.n - 1, 0.5 + level / 2) * self.sd / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)

    def llr(self, b: Bounds) -> float:
        """The log-likelihood ratio of H1 against H0 (0 for n < 2)."""
        if self.n < 2:
            return 0.0
        v = max(self.variance * (1.0 + SMALL_SAMPLE / self.n), VARIANCE_FLOOR)
        return self.n * (b.mu1 - b.mu0) * (2.0 * self.mean - b.mu0 - b.mu1) / (2.0 * v)

    def verdict(self, b: Bounds) -> Verdict | None:
        """H1 or H0 once a bound is crossed (and at least :data:`MIN_PAIRS`), else None."""
        if self.n < MIN_PAIRS:
            return None
        llr = self.llr(b)
        if llr >= b.upper:
            return Verdict.STRONGER
        if llr <= b.lower:
            return Verdict.NO_DIFFERENCE
        return None


# --------------------------------------------------------------------------- Student's t


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300

    def guard(v: float) -> float:
        return v if abs(v) > tiny else tiny

    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 / guard(1.0 - qab * x / qap)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(ln + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(df: int, p: float = 0.975) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom,
    to about 1e-10 (bisection on the exact distribution function).

    >>> [round(t_quantile(df), 4) for df in (1, 2, 3, 10, 30, 1000)]
    [12.7062, 4.3027, 3.1824, 2.2281, 2.0423, 1.9623]
    """
    if df < 1:
        raise ValueError("t_quantile needs df >= 1")
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if p < 0.5:
        return -t_quantile(df, 1.0 - p)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)
