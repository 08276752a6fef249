"""The referee's Prometheus metrics (``/metrics``).

A collector reads the arena's plain counts
(:class:`~wizard_referee.referee.counters.ArenaCounters`, the number of
connections, sessions and tables) when Prometheus scrapes: the tables only
add to integers. Each server has a registry of its own (:func:`registry`),
so two servers (or two tests) in one process never mix their numbers.
docs/web.md lists every metric.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from wizard_arena.protocol.codes import FaultCode
from wizard_referee.referee.arena import Arena
from wizard_referee.referee.counters import REFUSED_REASONS, Histogram

__all__ = ["CONTENT_TYPE", "ArenaCollector", "registry", "scrape"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _histogram(name: str, doc: str, h: Histogram) -> HistogramMetricFamily:
    cumulative = h.cumulative()
    buckets = [(repr(b), c) for b, c in zip(h.bounds, cumulative, strict=False)]
    buckets.append(("+Inf", cumulative[-1]))
    return HistogramMetricFamily(name, doc, buckets=buckets, sum_value=h.sum)


class ArenaCollector(Collector):
    """The metrics of one arena, read when scraped (on its trio loop)."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    def collect(self) -> Iterator[Metric]:
        a, c = self.arena, self.arena.counters
        yield GaugeMetricFamily(
            "wizard_arena_connected_bots", "Open bot streams.", value=len(a.connections)
        )
        yield GaugeMetricFamily(
            "wizard_arena_sessions", "Greeted bot sessions (waiting or seated).", len(a.sessions)
        )
        yield GaugeMetricFamily(
            "wizard_arena_tables_running", "Games in progress.", a.active_tables
        )
        yield CounterMetricFamily(
            "wizard_arena_games_finished", "Games refereed to their end.", a.games_played
        )
        yield CounterMetricFamily(
            "wizard_arena_decisions", "Decisions made at the tables.", c.decisions
        )
        yield _histogram(
            "wizard_arena_bot_decision_seconds",
            "A bot's time to a legal answer (request sent to answer applied).",
            c.bot_seconds,
        )
        yield _histogram(
            "wizard_arena_referee_latency_seconds",
            "The referee's own time from a decision applied (or a deal) to the next request.",
            c.referee_seconds,
        )
        faults = CounterMetricFamily("wizard_arena_faults", "Faults by code.", labels=["code"])
        # every code from the start, at 0 until it happens (a rate needs a
        # series before its first increment)
        for code in sorted({*(f.value for f in FaultCode), *c.faults}):
            faults.add_metric([code], c.faults.get(code, 0))
        yield faults
        messages = CounterMetricFamily(
            "wizard_arena_messages", "Messages on the bots' streams.", labels=["direction"]
        )
        messages.add_metric(["in"], c.messages_in)
        messages.add_metric(["out"], c.messages_out)
        yield messages
        refused = CounterMetricFamily(
            "wizard_arena_refused_connections", "Bot streams refused, by reason.", labels=["reason"]
        )
        for reason in sorted({*REFUSED_REASONS, *c.refused}):
            refused.add_metric([reason], c.refused.get(reason, 0))
        yield refused


def registry(arena: Arena) -> CollectorRegistry:
    """A registry of its own with the arena's metrics."""
    reg = CollectorRegistry(auto_describe=True)
    reg.register(ArenaCollector(arena))
    return reg


def scrape(reg: CollectorRegistry) -> bytes:
    """The text exposition of ``reg`` (call on the arena's trio loop)."""
    return generate_latest(reg)
