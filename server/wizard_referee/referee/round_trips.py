"""A bot's network round trip, as the referee estimates it for its credit.

Pure bookkeeping (no I/O, no clock): :class:`RoundTrips` keeps what is
measured of one connection and says what it is credited on a deadline
(docs/protocol.md, "Fair clocks: the network credit"):

- the round trips of its recent clock probes (:data:`WINDOW` of them), of
  which the estimate is a low percentile (the :data:`QUANTILE` by the lower
  nearest rank), once :data:`MIN_SAMPLES` are in (until then, the warm-up,
  the kernel's measure alone where it is known: a bot seated before its
  probes are in gets no timeout a near bot would not have); a bot can make a
  probe's round trip longer (by answering late), never shorter than the
  network's, and a few slow ones (a busy moment) do not move a low
  percentile;
- bounded above by the kernel's own measure of the connection
  (``tcpi_min_rtt`` of the server's socket) plus :data:`KERNEL_SLACK` for
  what the probe crosses above TCP (gRPC's thread, the bot's client), where
  it is known (not behind a proxy): a bot that delays its replies gains no
  credit there;
- and by the fastest request-to-action time of its recent decisions
  (:data:`DECISIONS` of them): no answer can come back faster than the round
  trip, so an estimate above it was inflated by late replies.

Never the bot's own report of its thinking. A resumed session is a new
connection, with a new :class:`RoundTrips` (its samples start afresh).

>>> trips = RoundTrips()
>>> trips.credit(0.5)  # no probe back yet, and the kernel's measure not known
0.0
>>> for rtt in (0.31, 0.30, 0.45, 0.32):
...     trips.probed(rtt)
>>> trips.estimate(), trips.credit(0.5), trips.credit(0.25), trips.credit(0.0)
(0.3, 0.3, 0.25, 0.0)
>>> trips.kernel_rtt = 0.15  # the kernel saw 150 ms: the probes were held back
>>> trips.estimate()
0.16
>>> trips.answered(0.12)  # an answer came back in 120 ms
>>> trips.estimate()
0.12
"""

from __future__ import annotations

import math
from collections import deque

__all__ = [
    "DECISIONS",
    "KERNEL_SLACK",
    "MIN_SAMPLES",
    "QUANTILE",
    "STEP",
    "WINDOW",
    "RoundTrips",
    "low_quantile",
]

WINDOW = 16
"""The most recent probe round trips the estimate is taken from."""
MIN_SAMPLES = 4
"""Probe round trips measured before any credit is given."""
QUANTILE = 0.25
"""The estimate: this quantile of the window's round trips, by the lower
nearest rank (the 1st of 4, the 4th of 16)."""
KERNEL_SLACK = 0.010
"""Seconds a probe's round trip may exceed the kernel's ``tcpi_min_rtt``:
what a probe crosses above TCP on both ends (the server's gRPC thread and
its hand-over to trio, the bot's client library and its reading thread)."""
DECISIONS = 16
"""The most recent answered decisions whose fastest request-to-action time
bounds the estimate."""
STEP = 0.010
"""The credit is a whole number of these (rounded down): a bot on the
referee's machine, whose round trip is a millisecond or less, gets none.
Finer credits, varying from one decision to the next by less than a table
takes between decisions, made the table's alarm move earlier on most
decisions of bots that answer at once (its cost per decision is what the
alarm saves: :mod:`.alarm`)."""


def low_quantile(values: list[float], q: float = QUANTILE) -> float:
    """The ``q``-quantile of ``values`` by the lower nearest rank: the
    ``ceil(q * n)``-th smallest (at least the first).

    >>> low_quantile([0.4, 0.1, 0.3, 0.2]), low_quantile([0.5] * 3 + [0.1] * 13)
    (0.1, 0.1)
    >>> low_quantile([float(i) for i in range(16)])
    3.0
    """
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


class RoundTrips:
    """What is measured of one connection's round trip (seconds)."""

    __slots__ = ("_answers", "_low", "_probes", "kernel_rtt")

    def __init__(self) -> None:
        self._probes: deque[float] = deque(maxlen=WINDOW)
        self._low: float | None = None
        """The window's quantile, kept until the next probe (asked per decision)."""
        self._answers: deque[float] = deque(maxlen=DECISIONS)
        self.kernel_rtt: float | None = None
        """The kernel's ``tcpi_min_rtt`` of the connection, when known."""

    @property
    def samples(self) -> int:
        """Probe round trips in the window."""
        return len(self._probes)

    def probed(self, rtt: float) -> None:
        """A probe came back ``rtt`` seconds after it was sent."""
        self._probes.append(max(0.0, rtt))
        self._low = None

    def answered(self, took: float) -> None:
        """A decision was answered ``took`` seconds after its request was sent."""
        self._answers.append(max(0.0, took))

    def estimate(self) -> float | None:
        """The round trip credited (before the cap). Until :data:`MIN_SAMPLES`
        probes came back (the warm-up) it is the kernel's measure alone, without
        the slack (None where the kernel does not measure)."""
        if len(self._probes) < MIN_SAMPLES:
            rtt = self.kernel_rtt
        else:
            if self._low is None:
                self._low = low_quantile(list(self._probes))
            rtt = self._low
            if self.kernel_rtt is not None:
                rtt = min(rtt, self.kernel_rtt + KERNEL_SLACK)
        if rtt is None:
            return None
        if self._answers:
            rtt = min(rtt, min(self._answers))
        return rtt

    def credit(self, cap: float) -> float:
        """The credit on a deadline: the estimate, at most ``cap`` (0: no
        credit), rounded down to :data:`STEP`."""
        rtt = self.estimate()
        if rtt is None or cap <= 0:
            return 0.0
        steps = math.floor(min(rtt, cap) / STEP + 1e-9)
        return steps * round(STEP * 1000) / 1000
