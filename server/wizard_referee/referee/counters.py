"""The referee's running counts, for metrics (the web room exports them to
Prometheus): decisions and their latency, faults by code, messages in and
out, refused connections. Plain integers and a small histogram, so counting
costs the tables next to nothing; one :class:`ArenaCounters` per arena (two
servers in one process never mix their counts).

>>> h = Histogram((0.01, 0.1))
>>> for v in (0.005, 0.05, 0.5):
...     h.observe(v)
>>> h.cumulative(), h.count, round(h.sum, 3)
([1, 2, 3], 3, 0.555)
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["LATENCY_BUCKETS", "REFUSED_REASONS", "ArenaCounters", "Histogram"]

#: Upper bounds (seconds) of the latency histograms' buckets.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip


class Histogram:
    """Counts of observations by bucket (``bounds``: upper bounds, ascending;
    one more bucket past the last), their sum and number."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[int]:
        """Observations at most each bound, then all (Prometheus' ``le`` buckets)."""
        out, total = [], 0
        for c in self.counts:
            total += c
            out.append(total)
        return out


#: Every reason a stream is refused for (``ArenaCounters.refused``): the
#: metrics show each from the start, at 0 until it happens.
REFUSED_REASONS = (
    "server full",
    "token",
    "version",
    "resume token",
    "rule options",
    "sessions per token",
    "hello timeout",
    "first message not a hello",
    "greeting limit",
    "auth backoff",
)


@dataclass
class ArenaCounters:
    decisions: int = 0
    """Decisions made at the tables (by the bots, or by the referee for a faulted seat)."""
    bot_seconds: Histogram = field(default_factory=Histogram)
    """A bot's time to a legal answer: the request sent to the answer applied."""
    referee_seconds: Histogram = field(default_factory=Histogram)
    """The referee's own time between a decision applied (or a deal) and the
    next request sent: the latency it adds to a game."""
    faults: Counter[str] = field(default_factory=Counter)
    """By fault code."""
    messages_in: int = 0
    """Messages received from bots on their streams."""
    messages_out: int = 0
    """Messages sent to bots on their streams."""
    refused: Counter[str] = field(default_factory=Counter)
    """Streams refused, by reason (server full, access token, version, ...)."""
