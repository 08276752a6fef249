"""The report of bench_server.py: each set's table, where the tail of the
added latency comes from, and the SUMMARY of the ratios the targets are set
in (docs/performance.md), per set and as the median of the sets.

Imported by bench_server.py (it lives beside it); nothing here measures.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from wizard_referee.stats import percentile

__all__ = ["report", "summary", "tail"]

#: The targets (issue #15), as (label, scenario, numerator kind, denominator
#: kind, figure, bound, "min"/"max").
TARGETS = (
    ("fast: lean throughput / floor-pingpong", "fast", "arena-lean", "floor-pingpong",
     "decisions_per_s", 0.5, "min"),
    ("think: lean p99 added / floor-table p99", "think", "arena-lean", "floor-table",
     "added_p99_ms", 2.0, "max"),
    ("think: all-events p99 added / floor-table p99", "think", "arena", "floor-table",
     "added_p99_ms", 2.5, "max"),
)  # fmt: skip
#: Further ratios printed for context (no target).
CONTEXT = (
    ("fast: all-events throughput / floor-pingpong", "fast", "arena", "floor-pingpong",
     "decisions_per_s"),
    ("fast: lean throughput / floor-table", "fast", "arena-lean", "floor-table",
     "decisions_per_s"),
    ("fast: all-events throughput / floor-table", "fast", "arena", "floor-table",
     "decisions_per_s"),
    # the lean floors (--kinds only): where the fast target's bound lies
    ("fast: floor-table-lean / floor-pingpong", "fast", "floor-table-lean", "floor-pingpong",
     "decisions_per_s"),
    ("fast: floor-bridge-lean / floor-pingpong", "fast", "floor-bridge-lean", "floor-pingpong",
     "decisions_per_s"),
    ("fast: lean throughput / floor-bridge-lean", "fast", "arena-lean", "floor-bridge-lean",
     "decisions_per_s"),
    ("think: lean p50 added / floor-table p50", "think", "arena-lean", "floor-table",
     "added_p50_ms"),
    ("think: all-events p50 added / floor-table p50", "think", "arena", "floor-table",
     "added_p50_ms"),
)  # fmt: skip


def tail(
    spans: Sequence[Sequence[Any]],
    collections: Sequence[Sequence[Any]],
    window: Sequence[float],
    p99_ms: float,
) -> dict[str, Any]:
    """Where the decisions at or above p99 waited: ``spans`` are the
    decisions (action sent, next request received, first of a new round),
    ``collections`` the server's garbage collections (generation, start,
    end, collected) on the same clock, ``window`` the measuring window."""
    t0, t1 = window
    inside = [c for c in collections if c[2] >= t0 and c[1] <= t1]
    full = [c for c in inside if c[0] == 2]

    def waited_full(a: float, b: float) -> bool:
        return any(c[1] < b and c[2] > a for c in full)

    worst = [s for s in spans if (s[1] - s[0]) * 1000 >= p99_ms]
    by_gc = [s for s in worst if waited_full(s[0], s[1])]
    new_round = [s for s in worst if s[2]]
    both = [s for s in by_gc if s[2]]
    rest = [s for s in spans if not waited_full(s[0], s[1])]
    no_new_round = [s for s in spans if not s[2]]

    def p99(xs: Sequence[Sequence[Any]]) -> float:
        return percentile([(s[1] - s[0]) for s in xs], 0.99) * 1000 if xs else 0.0

    full_ms = [(c[2] - c[1]) * 1000 for c in full]
    young_ms = [(c[2] - c[1]) * 1000 for c in inside if c[0] < 2]
    return {
        "tail_decisions": len(worst),
        "tail_waited_full_gc": len(by_gc),
        "tail_new_round": len(new_round),
        "tail_both": len(both),
        "new_round_share_all": sum(1 for s in spans if s[2]) / max(len(spans), 1),
        "full_gcs": len(full),
        "full_gc_ms": [round(x, 1) for x in full_ms],
        "young_gcs": len(young_ms),
        "young_gc_ms_total": round(sum(young_ms), 1),
        "young_gc_ms_max": round(max(young_ms, default=0.0), 2),
        "p99_without_full_gc_ms": p99(rest),
        "p99_without_new_round_ms": p99(no_new_round),
        "p99_new_round_only_ms": p99([s for s in spans if s[2]]),
    }


def report(results: list[dict[str, Any]]) -> None:
    """One set's table, each server's CPU by thread, and its tail."""
    number = results[0].get("set", 1) if results else 1
    head = (
        f"{'scenario':<8} {'server':<15} {'bots':>5} {'think':>6} {'dec/s':>8} "
        f"{'msgs/dec':>8} {'added p50':>10} {'added p99':>10} "
        f"{'srv CPU/dec':>12} {'srv CPU':>8} {'bots CPU':>9} {'load':>5}"
    )
    print(f"set {number}")
    print(head)
    print("-" * len(head))
    for r in results:
        print(
            f"{r['scenario']:<8} {r['kind']:<15} {r['bots']:>5} {r['think_ms']:>4.0f}ms "
            f"{r['decisions_per_s']:>8,.0f} {r['messages_per_decision']:>8.2f} "
            f"{r['added_p50_ms']:>8.2f}ms {r['added_p99_ms']:>8.2f}ms "
            f"{r['server_cpu_us_per_decision']:>10.0f}us "
            f"{r['server_cpu_util']:>7.0%} {r['client_cpu_util']:>8.0%} "
            f"{r['loadavg_1m']:>5.1f}"
        )
        threads = ", ".join(
            f"{name} {us}" for name, us in r.get("server_thread_cpu_us_per_decision", {}).items()
        )
        if threads:
            print(f"    server CPU by thread, us/decision: {threads}")
        t = r.get("tail")
        if t and t["tail_decisions"]:
            print(
                f"    tail (added >= p99, {t['tail_decisions']} decisions): "
                f"{t['tail_waited_full_gc']} waited through a full GC, "
                f"{t['tail_new_round']} start a new round ({t['tail_both']} both); "
                f"full GCs in the window: {t['full_gcs']} "
                f"({', '.join(f'{x:g}' for x in t['full_gc_ms']) or '-'} ms), "
                f"young: {t['young_gcs']} ({t['young_gc_ms_total']:g} ms, max "
                f"{t['young_gc_ms_max']:g}); p99 without the full-GC waits "
                f"{t['p99_without_full_gc_ms']:.2f} ms, without new rounds "
                f"{t['p99_without_new_round_ms']:.2f} ms"
            )
        for e in r["errors"]:
            print(f"    error: {e}")
    print()


def _ratio(results: list[dict[str, Any]], scenario: str, a: str, b: str, key: str) -> float | None:
    by = {(r["scenario"], r["kind"]): r for r in results}
    x, y = by.get((scenario, a)), by.get((scenario, b))
    if x is None or y is None or not y[key]:
        return None
    return float(x[key] / y[key])


def summary(sets: list[list[dict[str, Any]]]) -> None:
    """The SUMMARY block: each target's ratio per set, its median, met or not."""
    loads = [r["loadavg_1m"] for results in sets for r in results]
    print("=" * 78)
    print(
        f"SUMMARY: {len(sets)} set(s); 1-minute load average during the runs "
        f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} on "
        f"{_cores()} cores (figures from a busy machine are not the code's)"
    )
    print("=" * 78)
    for label, scenario, a, b, key, bound, kind in TARGETS:
        values = [_ratio(results, scenario, a, b, key) for results in sets]
        got = [v for v in values if v is not None]
        if not got:
            continue
        median = statistics.median(got)
        met = median >= bound if kind == "min" else median <= bound
        sign = ">=" if kind == "min" else "<="
        per_set = ", ".join(f"{v:.2f}" for v in got)
        print(
            f"{label:<48} median {median:5.2f}  (target {sign} {bound:g}: "
            f"{'met' if met else 'NOT met'}); sets: {per_set}"
        )
    for label, scenario, a, b, key in CONTEXT:
        got = [v for v in (_ratio(r, scenario, a, b, key) for r in sets) if v is not None]
        if got:
            per_set = ", ".join(f"{v:.2f}" for v in got)
            print(f"{label:<48} median {statistics.median(got):5.2f}  sets: {per_set}")
    for scenario in ("fast", "think"):
        for kind in ("arena-lean", "arena", "floor-table"):
            rows = [r for results in sets for r in results
                    if r["scenario"] == scenario and r["kind"] == kind]  # fmt: skip
            if rows:
                p99 = statistics.median(r["added_p99_ms"] for r in rows)
                dps = statistics.median(r["decisions_per_s"] for r in rows)
                mpd = statistics.median(r["messages_per_decision"] for r in rows)
                print(
                    f"{scenario}: {kind:<11} median {dps:>7,.0f} dec/s, p99 added "
                    f"{p99:6.2f} ms, {mpd:.2f} messages per decision"
                )


def _cores() -> int:
    import os

    return os.cpu_count() or 0
