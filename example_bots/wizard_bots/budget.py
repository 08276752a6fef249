"""How much work one decision of a search bot may do, and when it must stop.

A :class:`Budget` is made at the start of a decision from the bot's effort
settings and the view's ``time_left`` (the seconds the referee still allows
for this decision). It has two parts:

- *work*: a fixed number of sampled deals (``samples``), which makes play
  reproducible (the same seed gives the same decisions whatever the machine's
  speed), or unlimited when the bot thinks for a time instead;
- *time*: a deadline on the bot's clock, the sooner of ``think_time`` seconds
  (time mode) and ``share`` of the referee's ``time_left`` less ``margin``
  (both modes: a fixed-work search on a slow or loaded machine stops early
  rather than overrun the referee's deadline; with the example tournament's
  move times that never happens, and the bot counts it when it does).

The clock is injected (``time.perf_counter`` in use), so tests drive it.

>>> ticks = iter(range(100))
>>> b = Budget.start(lambda: float(next(ticks)), think_time=3.0, samples=None, time_left=None)
>>> b.seconds, b.out_of_time(), b.out_of_time(), b.out_of_time()
(3.0, False, False, True)
>>> Budget.start(lambda: 0.0, think_time=None, samples=8, time_left=10.0).deadline
4.95
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Budget", "Clock"]

Clock = Callable[[], float]

#: Share of the referee's time left that one decision may use.
TIME_SHARE = 0.5
#: Seconds kept back from that share (transport, the bot's own overhead).
TIME_MARGIN = 0.05


@dataclass
class Budget:
    """The limits of one decision (see the module's doc)."""

    clock: Clock
    began: float
    """The clock when the decision started."""
    deals: int | None
    """Sampled deals to evaluate (None: as many as time allows)."""
    seconds: float
    """Seconds this decision may take (``inf``: no limit)."""

    @classmethod
    def start(
        cls,
        clock: Clock,
        *,
        think_time: float | None,
        samples: int | None,
        time_left: float | None,
        share: float = TIME_SHARE,
        margin: float = TIME_MARGIN,
        scale: float = 1.0,
    ) -> Budget:
        """The budget of a decision starting now. ``scale`` multiplies the
        work (deals, or think time) for decisions that deserve more (bids),
        never the referee's limit."""
        seconds = math.inf if think_time is None else think_time * scale
        if time_left is not None:
            seconds = min(seconds, share * time_left - margin)
        deals = None if samples is None else max(1, round(samples * scale))
        return cls(clock, clock(), deals, max(0.0, seconds))

    @property
    def deadline(self) -> float:
        """The clock time by which the decision must be made."""
        return self.began + self.seconds

    @property
    def timed(self) -> bool:
        """Whether the clock limits this decision."""
        return self.seconds != math.inf

    def out_of_time(self) -> bool:
        """Whether the deadline has passed (reads the clock)."""
        return self.timed and self.clock() >= self.deadline

    def elapsed(self) -> float:
        return self.clock() - self.began
