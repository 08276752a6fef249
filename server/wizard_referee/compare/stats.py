"""The statistics of a comparison: paired differences, an anytime-valid
confidence sequence for their mean, and the rule that stops a comparison
as soon as its answer is known.

A comparison yields one **paired difference** per deal: ``x = score_A -
score_B``, A's final points in its game of the deal minus B's in B's game of
the same deal (same cards, seat and opponents). The question is about ``mu``,
the mean of ``x``, in **points per game**.

**Bounded differences.** The rules bound a game's total
(:func:`wizard_arena.rules.score_range`: from ``-10 * sum(s)`` to ``sum(20 +
10 * s)`` over the round sizes ``s``), so every difference lies in ``[-R,
R]`` with ``R`` the width of that range: 2,700 points at 4 players, 4,600 at
3, 1,800 at 5, 1,300 at 6. That bound is the only assumption about the shape
of the differences: exact zeros (two bots that play most deals alike), skew
and heavy tails are all allowed.

**Betting confidence sequence** (Waudby-Smith and Ramdas 2023, "Estimating
means of bounded random variables by betting"). For a candidate mean ``m``, a
gambler who bets that ``mu > m`` multiplies its capital by ``1 + l_i (x_i -
m)`` at deal ``i``; one who bets that ``mu < m`` by ``1 - l_i (x_i - m)``.
The stakes ``l_i`` are chosen before deal ``i`` is seen (from earlier deals
only) and never exceed :data:`BET_CAP` of what the worst possible deal could
take (``l_i <= BET_CAP / (m + R)`` upwards, ``BET_CAP / (R - m)`` downwards),
so the capital stays positive. Where ``mu <= m`` the upward capital is a
nonnegative supermartingale with expectation at most 1, and by Ville's
inequality it ever reaches ``1 / alpha`` with chance at most ``alpha``,
however long the comparison runs and whenever it stops. So:

- "``mu > m``" is claimed once the upward capital at ``m`` reaches ``1 /
  alpha``; all such claims, for every ``m`` and at every deal, are wrong
  together with chance at most ``alpha`` (the capital falls as ``m`` rises,
  so a wrong claim at any ``m`` means the capital at the true mean passed
  ``1 / alpha``);
- "``mu < m``" likewise with the downward capital and ``1 / beta``.

The **lower end** of the sequence is the largest ``m`` with "``mu > m``"
claimed, the **upper end** the smallest with "``mu < m``" claimed; together
they are an interval that holds the mean with chance at least ``1 - alpha -
beta`` at every deal at once.

**The stakes.** Upwards ``l_i = max(h1 - h0, mean - h0) / v_i``, downwards
``l_i = max(h1 - h0, h1 - mean) / v_i``, capped as above, where ``mean`` is
the mean of the earlier differences and ``v_i`` their spread: the sum of the
squared deviations of each earlier difference from the mean before it, plus
one imaginary deal of spread :data:`PRIOR_SPREAD` ``* R`` (for the deals
question :data:`DEALS_PRIOR_SPREAD` ``* R``), over the number
of deals (the imaginary one included). Where the differences are roughly
normal this is the bet that makes the capital grow fastest when the true
mean lies ``h1 - h0`` beyond the threshold (as the likelihood ratio of a
sequential probability ratio test would), or as far as the data so far
suggest when that is more; the cap binds where the spread is small against
the bound. For the deals question ``mean`` counts :data:`DEALS_PRIOR_DEALS`
imaginary deals at ``(h0 + h1) / 2`` besides the real ones. A stake does
not depend on ``m`` (but for the cap), so the capital falls as ``m`` rises
and the claims form an interval. The stakes set only how fast the answer
comes: the error rates hold for any stakes chosen from the past.

**The decision** (:class:`Design`): stop with "A is stronger than B" (by more
than ``h0``) once "``mu > h0``" is claimed, with "A is not stronger than B by
``h1`` or more" once "``mu < h1``" is claimed, undecided at the cap on
games. The non-inferiority form (``margin D``) is ``h0 = -D``, ``h1 = 0``:
"A is not weaker than B by ``D`` or more" against "A is weaker than B".

**The deals question** (``Design(question="deals")``) runs the same
sequence on each deal's sign: +1 where A's total is above B's, -1 where it
is below, 0 for equal totals (a tie counts for neither bot, and deals played
identically are ties). The mean is ``P(A outscores B) - P(B outscores A)``,
"net deals", bounded by 1; ``h0``, ``h1`` and ``margin`` are shares of the
deals (default ``h1`` 0.1: A outscores B on 10% of the deals more than the
reverse).

**Assumption.** The deals' differences share one mean: the candidate's seat
and the opponents' order change from deal to deal (:mod:`.plan`), and their
effects on the difference average out over each cycle of seatings; where
one bot's edge over the other depends strongly on the seat, the guarantee
is approximate.

>>> design = Design(h0=0, h1=20)
>>> cs = ConfidenceSequence(2700, design)
>>> for x in (300, -100, 500, 200, 100, 400, 0, 600, 300, 200):
...     cs.add(x)
>>> cs.n, cs.mean, round(cs.sd, 1)
(10, 250.0, 217.3)
>>> cs.decide() is None  # ten deals of 2,700 possible points each say little yet
True
>>> for x in (300, -100, 500, 200, 100, 400, 0, 600, 300, 200) * 3:
...     cs.add(x)
>>> cs.decide()
<Verdict.ABOVE_H0: 'above_h0'>
>>> round(cs.lower(), 1) > 0 and cs.upper() > cs.mean
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from wizard_arena.rules import Rules, score_range
from wizard_referee.ratings.student_t import t_quantile

__all__ = [
    "BET_CAP",
    "DEALS_PRIOR_DEALS",
    "DEALS_PRIOR_SPREAD",
    "DEFAULT_H1",
    "METHOD",
    "PRIOR_SPREAD",
    "QUESTIONS",
    "ConfidenceSequence",
    "Design",
    "Statement",
    "Verdict",
    "difference_bound",
]

#: The name of the method, stored with a comparison's plan.
METHOD = "betting confidence sequence"

#: A stake never exceeds this share of what the worst possible deal could take.
BET_CAP = 0.9

#: The spread of the imaginary first deal, as a share of the bound ``R``.
PRIOR_SPREAD = 0.25

#: The same for the deals question: a deal's outcome is -1, 0 or +1, so its
#: spread is close to the bound itself (1 without ties); a smaller imaginary
#: spread would stake nearly the cap on the first deals, and a first deal lost
#: at that stake costs as much as a few hundred deals at the threshold gain.
DEALS_PRIOR_SPREAD = 1.0

#: For the deals question the stakes take the mean of the earlier deals with
#: this many imaginary deals at the midpoint of the thresholds: early means
#: of -1/+1 outcomes stray far, and a stake several times the threshold gap
#: loses capital (bench_compare_oc: about 1,200 games at h0 and h1 with it,
#: 1,700 without).
DEALS_PRIOR_DEALS = 20

#: What a comparison can ask: ``points``, the mean of ``score_A - score_B``
#: (points per game); ``deals``, the mean of its sign (+1 where A outscored B
#: on the deal, -1 where B outscored A, 0 for equal totals): the share of
#: deals A outscores B on minus the share B outscores A on.
QUESTIONS = ("points", "deals")

#: The default ``h1`` of each question: 20 points per game; 10% of the deals.
DEFAULT_H1 = {"points": 20.0, "deals": 0.1}

#: Bisection for the ends of the sequence stops at this share of the bound.
_TOLERANCE = 1e-7


def difference_bound(rules: Rules) -> float:
    """The largest possible ``|score_A - score_B|`` in one deal under ``rules``.

    >>> difference_bound(Rules(players=4)), difference_bound(Rules(players=3))
    (2700.0, 4600.0)
    >>> difference_bound(Rules(players=5)), difference_bound(Rules(players=6))
    (1800.0, 1300.0)
    """
    low, high = score_range(rules)
    return float(high - low)


class Verdict(Enum):
    ABOVE_H0 = "above_h0"
    """``mu > h0`` claimed: A is stronger than B by more than ``h0``."""
    BELOW_H1 = "below_h1"
    """``mu < h1`` claimed: A is not stronger than B by ``h1`` or more."""
    UNDECIDED = "undecided"
    """Neither within the games allowed."""


def _points(m: float) -> str:
    return f"{abs(m):g} point{'' if abs(m) == 1 else 's'} per game"


def _share(m: float) -> str:
    return f"{100 * abs(m):g}% of the deals"


def above_text(m: float, question: str = "points") -> str:
    """What "``mu > m``" says of the bots.

    >>> above_text(0), above_text(15), above_text(-30)
    ('A scores more than B', 'A scores more than B by more than 15 points per game', \
'A is not weaker than B by 30 points per game or more')
    >>> above_text(0, "deals")
    'A outscores B on more deals than B outscores A'
    >>> above_text(0.1, "deals")
    'A outscores B on more deals than B outscores A, by more than 10% of the deals'
    >>> above_text(-0.05, "deals")
    'B does not outscore A on more deals than A outscores B by 5% of the deals or more'
    """
    if question == "deals":
        if m == 0:
            return "A outscores B on more deals than B outscores A"
        if m > 0:
            return f"A outscores B on more deals than B outscores A, by more than {_share(m)}"
        return f"B does not outscore A on more deals than A outscores B by {_share(m)} or more"
    if m == 0:
        return "A scores more than B"
    if m > 0:
        return f"A scores more than B by more than {_points(m)}"
    return f"A is not weaker than B by {_points(m)} or more"


def below_text(m: float, question: str = "points") -> str:
    """What "``mu < m``" says of the bots.

    >>> below_text(0), below_text(20), below_text(-30)
    ('A scores less than B', 'A is not stronger than B by 20 points per game or more', \
'A scores less than B by more than 30 points per game')
    >>> below_text(0, "deals")
    'B outscores A on more deals than A outscores B'
    >>> below_text(0.1, "deals")
    'A does not outscore B on more deals than B outscores A by 10% of the deals or more'
    >>> below_text(-0.1, "deals")
    'B outscores A on more deals than A outscores B, by more than 10% of the deals'
    """
    if question == "deals":
        if m == 0:
            return "B outscores A on more deals than A outscores B"
        if m > 0:
            return f"A does not outscore B on more deals than B outscores A by {_share(m)} or more"
        return f"B outscores A on more deals than A outscores B, by more than {_share(m)}"
    if m == 0:
        return "A scores less than B"
    if m > 0:
        return f"A is not stronger than B by {_points(m)} or more"
    return f"A scores less than B by more than {_points(m)}"


@dataclass(frozen=True)
class Design:
    """The question a sequential comparison answers: its two thresholds (points
    per game; with ``question="deals"`` shares of the deals, between -1 and 1)
    and error rates, or the non-inferiority form (``margin``)."""

    h0: float = 0.0
    h1: float = 20.0
    alpha: float = 0.05
    """The chance of ever claiming ``mu > m`` for an ``m`` at or above the true mean."""
    beta: float = 0.05
    """The chance of ever claiming ``mu < m`` for an ``m`` at or below the true mean."""
    margin: float | None = None
    """Non-inferiority: ``h0 = -margin``, ``h1 = 0`` (see :meth:`non_inferiority`)."""
    question: str = "points"
    """``points`` (the mean of A - B) or ``deals`` (the mean of its sign): :data:`QUESTIONS`."""

    def __post_init__(self) -> None:
        if self.question not in QUESTIONS:
            raise ValueError(
                f"the question is one of {', '.join(QUESTIONS)}, got {self.question!r}"
            )
        if not (math.isfinite(self.h0) and math.isfinite(self.h1) and self.h1 > self.h0):
            raise ValueError(f"the test needs h1 > h0, got {self.h0:g} and {self.h1:g}")
        for name, p in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < p < 0.5:
                raise ValueError(f"{name} must lie between 0 and 0.5, got {p:g}")
        if self.deals and not -1.0 < self.h0 < self.h1 < 1.0:
            raise ValueError(
                "the deals question's thresholds are shares of the deals between -1 and 1 "
                f"(0.1: 10% of the deals), got {self.h0:g} and {self.h1:g}"
            )
        if self.margin is not None and (self.h0, self.h1) != (-self.margin, 0.0):
            raise ValueError("a margin test has h0 = -margin and h1 = 0")

    @classmethod
    def non_inferiority(
        cls, margin: float, alpha: float = 0.05, beta: float = 0.05, question: str = "points"
    ) -> Design:
        """ "A is not weaker than B by ``margin`` points per game or more"
        (with ``question="deals"``: a share of the deals).

        >>> Design.non_inferiority(20)
        Design(h0=-20.0, h1=0.0, alpha=0.05, beta=0.05, margin=20.0, question='points')
        """
        if not (math.isfinite(margin) and margin > 0):
            what = "share of the deals" if question == "deals" else "number of points"
            raise ValueError(f"the margin must be a positive {what}, got {margin:g}")
        return cls(-float(margin), 0.0, alpha, beta, float(margin), question)

    @property
    def deals(self) -> bool:
        """Whether the question is the sign of each deal's difference."""
        return self.question == "deals"

    def bound(self, rules: Rules) -> float:
        """The largest possible value either way of one deal's outcome: the
        rules' :func:`difference_bound` for points, 1 for deals."""
        return 1.0 if self.deals else difference_bound(rules)

    def outcome(self, difference: float) -> float:
        """What a deal with ``score_A - score_B = difference`` adds to the sequence.

        >>> [Design(question="deals", h1=0.1).outcome(x) for x in (250, 0, -10)]
        [1.0, 0.0, -1.0]
        >>> Design().outcome(-10)
        -10.0
        """
        if self.deals:
            return float((difference > 0) - (difference < 0))
        return float(difference)

    def stake_mean(self, mean: Any, n: int) -> Any:
        """The mean the stakes take after ``n`` deals of mean ``mean`` (a number
        or a numpy array): itself for points; for deals, with
        :data:`DEALS_PRIOR_DEALS` imaginary deals at ``(h0 + h1) / 2``."""
        if not self.deals:
            return mean
        k = DEALS_PRIOR_DEALS
        return (mean * n + k * 0.5 * (self.h0 + self.h1)) / (n + k)

    @property
    def prior_spread(self) -> float:
        """The imaginary first deal's spread, as a share of the bound."""
        return DEALS_PRIOR_SPREAD if self.deals else PRIOR_SPREAD

    @property
    def measure(self) -> str:
        """The name of what the sequence is about, in a formula."""
        return "net deals" if self.deals else "A-B"

    @property
    def unit(self) -> str:
        return "of the deals" if self.deals else "points per game"

    def show(self, x: float) -> str:
        """A value of the measure (a signed share in percent for deals).

        >>> Design(question="deals", h1=0.1).show(0.125), Design().show(20)
        ('+12.5%', '+20')
        """
        return f"{100 * x:+.3g}%" if self.deals else f"{x:+g}"

    def asked(self) -> str:
        """The question in words."""
        if self.deals:
            return (
                "does A outscore B on more deals than B outscores A? (--question deals: each "
                "deal counts +1 where A outscored B, -1 where B outscored A, 0 for equal "
                "totals; net deals is their mean)"
            )
        return "does A score more points per game than B? (--question points)"

    def key(self) -> dict[str, Any]:
        """What a stored comparison's verdict depends on (must match to resume)."""
        return {
            "method": f"{METHOD} (stakes capped at {BET_CAP:g}, prior spread "
            f"{self.prior_spread:g}"
            + (f", stakes' mean from {DEALS_PRIOR_DEALS} deals more)" if self.deals else ")"),
            "h0": self.h0,
            "h1": self.h1,
            "alpha": self.alpha,
            "beta": self.beta,
            "margin": self.margin,
            "question": self.question,
        }

    def verdict_name(self, verdict: Verdict) -> str:
        """The verdict's short name (``--json``).

        >>> d = Design()
        >>> [d.verdict_name(v) for v in Verdict]
        ['stronger', 'not_stronger', 'undecided']
        >>> [Design.non_inferiority(10).verdict_name(v) for v in Verdict]
        ['not_inferior', 'weaker', 'undecided']
        """
        if verdict is Verdict.UNDECIDED:
            return "undecided"
        if self.margin is None:
            return "stronger" if verdict is Verdict.ABOVE_H0 else "not_stronger"
        return "not_inferior" if verdict is Verdict.ABOVE_H0 else "weaker"

    def verdict_text(self, verdict: Verdict) -> str:
        """The verdict in words.

        >>> d = Design()
        >>> d.verdict_text(Verdict.ABOVE_H0), d.verdict_text(Verdict.BELOW_H1)
        ('A is stronger than B', 'A is not stronger than B by 20 points per game or more')
        >>> Design.non_inferiority(10).verdict_text(Verdict.ABOVE_H0)
        'A is not weaker than B by 10 points per game or more'
        """
        if verdict is Verdict.ABOVE_H0:
            if self.h0 == 0 and not self.deals:
                return "A is stronger than B"
            return above_text(self.h0, self.question)
        if verdict is Verdict.BELOW_H1:
            return below_text(self.h1, self.question)
        return "undecided"

    def describe(self) -> str:
        """The decision rule in one line."""
        return (
            f"stop at '{self.verdict_text(Verdict.ABOVE_H0)}' ({self.measure} > "
            f"{self.show(self.h0)}, wrong with chance at most {self.alpha:g}) or "
            f"'{self.verdict_text(Verdict.BELOW_H1)}' ({self.measure} < {self.show(self.h1)}, "
            f"wrong with chance at most {self.beta:g})"
        )


@dataclass(frozen=True)
class Statement:
    """A claim the sequence supports, with the chance that it is wrong."""

    text: str
    error: float

    def __str__(self) -> str:
        return f"{self.text} (wrong with chance at most {self.error:g})"


class ConfidenceSequence:
    """The confidence sequence for the mean of differences in ``[-bound,
    bound]``, with stakes tuned to ``design`` and its decisions.

    :meth:`add` is constant time (the capital at ``h0`` and ``h1`` is kept
    running); :meth:`lower`, :meth:`upper` and :meth:`above` / :meth:`below`
    at another point go over every deal (a bisection for the ends: about
    50 passes)."""

    def __init__(self, bound: float, design: Design) -> None:
        if not (math.isfinite(bound) and bound > 0):
            raise ValueError(f"the bound on the differences must be positive, got {bound:g}")
        for m in (design.h0, design.h1):
            if not -bound < m < bound:
                raise ValueError(
                    f"the threshold {m:+g} lies outside the possible differences "
                    f"(at most {bound:g} points per game either way)"
                )
        self.bound = float(bound)
        self.design = design
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0
        self._spread = (design.prior_spread * self.bound) ** 2
        """The imaginary deal's squared spread plus each deal's squared
        deviation from the mean before it."""
        self._xs: list[float] = []
        self._up_stakes: list[float] = []
        """Each deal's upward stake before the cap."""
        self._down_stakes: list[float] = []
        """Each deal's downward stake before the cap."""
        self._up_h0 = 0.0
        self._down_h1 = 0.0
        self._cap_up_h0 = BET_CAP / (design.h0 + self.bound)
        self._cap_down_h1 = BET_CAP / (self.bound - design.h1)
        self._log_alpha = math.log(1.0 / design.alpha)
        self._log_beta = math.log(1.0 / design.beta)

    def __repr__(self) -> str:
        return f"<ConfidenceSequence n={self.n} mean={self.mean:+.1f} bound={self.bound:g}>"

    # -- data ----------------------------------------------------------------------

    def add(self, x: float) -> None:
        """One more deal's difference."""
        x = float(x)
        if not -self.bound <= x <= self.bound:
            raise ValueError(
                f"a difference of {x:+g} points lies outside the rules' bound of "
                f"{self.bound:g} either way"
            )
        d = self.design
        v = self._spread / (self.n + 1)
        mean = d.stake_mean(self.mean, self.n)
        up = max(d.h1 - d.h0, mean - d.h0) / v
        down = max(d.h1 - d.h0, d.h1 - mean) / v
        self._xs.append(x)
        self._up_stakes.append(up)
        self._down_stakes.append(down)
        self._up_h0 += math.log1p(min(up, self._cap_up_h0) * (x - d.h0))
        self._down_h1 += math.log1p(-min(down, self._cap_down_h1) * (x - d.h1))
        self._spread += (x - self.mean) ** 2
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)

    @property
    def sd(self) -> float:
        """Sample standard deviation (divided by n - 1); 0 for fewer than 2 deals."""
        return math.sqrt(self._m2 / (self.n - 1)) if self.n > 1 else 0.0

    # -- claims --------------------------------------------------------------------

    def _log_up(self, m: float) -> float:
        cap = BET_CAP / (m + self.bound)
        log1p = math.log1p
        return sum(
            log1p((s if s < cap else cap) * (x - m))
            for x, s in zip(self._xs, self._up_stakes, strict=True)
        )

    def _log_down(self, m: float) -> float:
        cap = BET_CAP / (self.bound - m)
        log1p = math.log1p
        return sum(
            log1p(-(s if s < cap else cap) * (x - m))
            for x, s in zip(self._xs, self._down_stakes, strict=True)
        )

    def above(self, m: float) -> bool:
        """Whether "``mu > m``" is claimed (wrong with chance at most alpha)."""
        if m == self.design.h0:
            return self._up_h0 >= self._log_alpha
        if m <= -self.bound:
            return False
        return m < self.bound and self._log_up(m) >= self._log_alpha

    def below(self, m: float) -> bool:
        """Whether "``mu < m``" is claimed (wrong with chance at most beta)."""
        if m == self.design.h1:
            return self._down_h1 >= self._log_beta
        if m >= self.bound:
            return False
        return m > -self.bound and self._log_down(m) >= self._log_beta

    def decide(self) -> Verdict | None:
        """The design's verdict once a threshold is crossed, else None (when
        both are crossed at once, ``ABOVE_H0``; :meth:`statements` has both)."""
        if self._up_h0 >= self._log_alpha:
            return Verdict.ABOVE_H0
        if self._down_h1 >= self._log_beta:
            return Verdict.BELOW_H1
        return None

    def lower(self) -> float:
        """The lower end: the largest ``m`` with "``mu > m``" claimed, to
        within a ten-millionth of the bound (``-bound`` while none is)."""
        lo, hi = -self.bound, self.bound
        if self.above(self.design.h0):
            lo = self.design.h0
        elif self.n and not self.above(-self.bound * (1 - _TOLERANCE)):
            return -self.bound
        while hi - lo > _TOLERANCE * self.bound:
            mid = 0.5 * (lo + hi)
            if mid > -self.bound and self._log_up(mid) >= self._log_alpha:
                lo = mid
            else:
                hi = mid
        return lo

    def upper(self) -> float:
        """The upper end: the smallest ``m`` with "``mu < m``" claimed, to
        within a ten-millionth of the bound (``bound`` while none is)."""
        lo, hi = -self.bound, self.bound
        if self.below(self.design.h1):
            hi = self.design.h1
        elif self.n and not self.below(self.bound * (1 - _TOLERANCE)):
            return self.bound
        while hi - lo > _TOLERANCE * self.bound:
            mid = 0.5 * (lo + hi)
            if mid < self.bound and self._log_down(mid) >= self._log_beta:
                hi = mid
            else:
                lo = mid
        return hi

    def statements(self) -> list[Statement]:
        """Every claim of the design's kind the sequence supports now: about
        0 and about the design's thresholds, each with its error."""
        d = self.design
        out: list[Statement] = []
        points = sorted({0.0, d.h0, d.h1})
        for m in points:
            if self.above(m):
                out.append(Statement(above_text(m, d.question), d.alpha))
        for m in reversed(points):
            if self.below(m):
                out.append(Statement(below_text(m, d.question), d.beta))
        return out

    def t_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The two-sided Student-t interval of the mean (nan for n < 2): valid
        for a fixed number of roughly normal differences, not after a
        sequential stop or for differences that are mostly exact zeros."""
        if self.n < 2:
            return (math.nan, math.nan)
        half = t_quantile(self.n - 1, 0.5 + level / 2) * self.sd / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)
