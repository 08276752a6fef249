"""Small statistics shared by the server's rooms and the benchmarks.

A leaf module: it imports nothing of ours, and any room may import it (the
ratings room included).

>>> percentile([3.0, 1.0, 2.0, 4.0], 0.5)
2.5
>>> percentile([], 0.5)
nan
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["percentile"]


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-quantile (``q`` in [0, 1]) of ``values``, interpolating
    linearly between the two nearest ranks (the "inclusive" method of
    :func:`statistics.quantiles`); NaN when there are no values."""
    s = sorted(values)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)
