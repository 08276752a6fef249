"""Honest intervals with little data: no interval (and a plain note) from
fewer than 10 duplicate sets, and Student's t quantiles exact to rounding."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest

from wizard_referee.ratings.intervals import MIN_SETS, bootstrap_coverage, sets_per_player
from wizard_referee.ratings.models import GameResult
from wizard_referee.ratings.student_t import t_quantile, t_two_sided
from wizard_referee.tournament.leaderboard import format_leaderboard, leaderboard_of
from wizard_referee.tournament.store import GameSpec, SeatResult

from .conftest import ROOT

# Student's t, 0.975 quantiles as printed in tables (to 12 significant digits)
T_975 = {
    1: 12.7062047362,
    2: 4.30265272975,
    3: 3.18244630528,
    4: 2.77644510520,
    5: 2.57058183564,
    10: 2.22813885199,
    30: 2.04227245630,
    100: 1.98397151845,
}


@pytest.mark.parametrize(("df", "value"), sorted(T_975.items()))
def test_t_quantiles_match_the_tables(df: int, value: float) -> None:
    assert t_quantile(df) == pytest.approx(value, rel=1e-9)
    assert t_quantile(df, 0.025) == pytest.approx(-value, rel=1e-9)
    assert t_two_sided(value, df) == pytest.approx(0.95, abs=1e-9)


def test_other_t_quantiles_and_limits() -> None:
    assert t_quantile(10, 0.995) == pytest.approx(3.16927267, rel=1e-8)
    assert t_quantile(1, 0.75) == pytest.approx(1.0, rel=1e-12)  # Cauchy: tan(pi/4)
    assert t_quantile(2, 0.9) == pytest.approx(1.88561808, rel=1e-8)  # 4/(3 sqrt 2)
    assert t_quantile(10**5) == pytest.approx(1.9599877, rel=1e-7)  # z + (z^3 + z) / (4 df)
    assert t_quantile(0) == math.inf and t_quantile(7, 0.5) == 0.0


def test_bench_strength_uses_the_exact_quantile(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_strength", ROOT / "bench" / "bench_strength.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_strength", bench)  # (its dataclasses look it up)
    spec.loader.exec_module(bench)
    for df, value in T_975.items():
        assert bench.t_quantile(df) == pytest.approx(value, rel=1e-9)
    est = bench.estimate([1.0, 2.0, 3.0, 4.0])  # sd 1.29, t(3)
    assert est.half == pytest.approx(T_975[3] * math.sqrt(5 / 3) / 2, rel=1e-9)


def test_bootstrap_coverage_falls_short_with_few_sets() -> None:
    cover = {n: bootstrap_coverage(n) for n in (2, 3, 5, 10, 20, 30)}
    assert [round(c, 2) for c in cover.values()] == [0.6, 0.75, 0.85, 0.9, 0.93, 0.94]
    assert bootstrap_coverage(MIN_SETS) > 0.9  # the threshold: about 90% or better


def test_sets_per_player_counts_sets_and_lone_games() -> None:
    games = [
        GameResult(("a", "b"), (1, 0), "s1"),
        GameResult(("b", "a"), (1, 0), "s1"),
        GameResult(("a", "c"), (1, 0)),
        GameResult(("a", "c"), (0, 1)),
    ]
    assert sets_per_player(games) == {"a": 3, "b": 1, "c": 2}


def _finished(sets: int) -> list[tuple[GameSpec, list[SeatResult], bool]]:
    """Three entrants, every set: the 6 orderings of one deal, scores varying."""
    out = []
    for d in range(sets):
        for r, seats in enumerate(["abc", "acb", "bac", "bca", "cab", "cba"]):
            spec = GameSpec(f"t0-d{d}-r{r}", d * 6 + r, 0, d, r, f"1:t0:d{d}", tuple(seats))
            totals = [
                (7 * d + 3 * r + 11 * s) % 50 - (20 if name == "c" else 0)
                for s, name in enumerate(seats)
            ]
            ranks = [1 + sum(t > mine for t in totals) for mine in totals]
            rows = [
                SeatResult(spec.id, s, name, totals[s], ranks[s], [1], [1], [totals[s]], {})
                for s, name in enumerate(seats)
            ]
            out.append((spec, rows, False))
    return out


def test_few_deals_give_no_interval_and_say_so_in_words() -> None:
    board = leaderboard_of(_finished(2), bootstrap=100)
    assert all(r.low is None and r.high is None for r in board.rows)
    assert {r.note for r in board.rows} == {"no interval: 2 deals played, 10 needed"}
    (note,) = [n for n in board.notes if n.startswith("no 95% interval")]
    assert "they played only 2 deals, and an interval needs at least 10" in note
    assert "holds the true rating only about 60% of the time" in note
    text = format_leaderboard(board)
    assert "(no interval)" in text and f"note: {note}" in text
    row = json.loads(json.dumps(board.rows[0].as_dict()))
    assert row["low"] is None and row["note"] == "no interval: 2 deals played, 10 needed"


def test_one_deal_is_counted_in_the_singular_and_not_quoted_as_two() -> None:
    """The note said "they played only 1 deals ... (from 2 deals a "95%"
    interval ...)"."""
    board = leaderboard_of(_finished(1), bootstrap=100)
    assert {r.note for r in board.rows} == {"no interval: 1 deal played, 10 needed"}
    (note,) = [n for n in board.notes if n.startswith("no 95% interval")]
    assert "they played only 1 deal, and" in note
    assert '(even from 2 deals a "95%" interval holds the true rating only about 60%' in note


def test_ten_deals_give_intervals() -> None:
    board = leaderboard_of(_finished(MIN_SETS), bootstrap=100)
    for r in board.rows:
        assert r.low is not None and r.high is not None and r.low < r.rating < r.high
        assert r.note == ""
    assert not [n for n in board.notes if n.startswith("no 95% interval")]
    assert "(no interval)" not in format_leaderboard(board)


def test_paired_difference_per_deal_with_a_t_interval() -> None:
    from wizard_referee.tournament.paired import paired_difference

    rows = []
    for deal, diffs in enumerate([[10, 6], [0, 2], [4, 4], [-3, 1]]):
        for game, d in enumerate(diffs):
            rows += [(deal, game, "a", 100 + d), (deal, game, "b", 100), (deal, game, "c", 7)]
    rows.append((9, 0, "a", 50))  # a deal without b: not paired
    d = paired_difference(rows, "a", "b")
    assert d.per_set == (8.0, 1.0, 4.0, -1.0) and d.sets == 4
    sd = math.sqrt(sum((x - 3.0) ** 2 for x in d.per_set) / 3)
    assert d.mean == 3.0 and d.half_width == pytest.approx(T_975[3] * sd / 2, rel=1e-9)
    assert d.covers(0.0) and not d.covers(20.0)
    assert "a - b: +3.0 points per game (95% interval" in d.describe()
    assert paired_difference(rows[:3], "a", "b").half_width == math.inf  # one deal: no interval


def test_paired_difference_leaves_out_interrupted_deals() -> None:
    """A deal cut short keeps only some of its seatings, and the seat that
    scores more in them is not held equally by both entrants: here the first
    seat scores 10 more, so every whole deal gives 0 and a deal that kept only
    its first game gives +10 for whoever sat first. Such a deal was counted."""
    from wizard_referee.tournament.paired import paired_difference

    rows: list[tuple[int, int, str, float]] = []
    for deal in range(4):
        rows += [(deal, 0, "a", 10), (deal, 0, "b", 0), (deal, 1, "b", 10), (deal, 1, "a", 0)]
    rows += [(4, 0, "a", 10), (4, 0, "b", 0)]  # interrupted after its first game
    d = paired_difference(rows, "a", "b")
    assert d.per_set == (0.0, 0.0, 0.0, 0.0) and d.partial == 1
    assert d.describe().endswith("4 deals; 1 interrupted deal left out)")
    given = paired_difference(rows, "a", "b", games_per_set=3)  # the design had 3 seatings
    assert given.per_set == () and given.partial == 5
