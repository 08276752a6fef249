"""Table schedules: which tables, their balance, seats and duplicate rotations."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from wizard_referee.tournament.schedule import (
    BalanceReport,
    balance_report,
    balanced_tables,
    default_table_count,
    round_robin,
    seat_rotations,
)

COMBOS = [(e, k) for e in range(3, 13) for k in range(3, 7) if e >= k]


def _names(e: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(e)]


def _check_seats(tables: list[tuple[str, ...]], report: BalanceReport, k: int) -> None:
    """Every table seats k different entrants; every entrant's seat counts are
    floor(r/k) or ceil(r/k), r their tables."""
    for t in tables:
        assert len(t) == k and len(set(t)) == k
    for name, seats in report.seat_counts.items():
        r = report.tables[name]
        assert sum(seats) == r
        assert set(seats) <= {r // k, -(-r // k)}, (name, seats)


def _check_rotations(tables: list[tuple[str, ...]], names: list[str], k: int) -> None:
    for t in tables:
        rot = seat_rotations(t)
        assert len(rot) == k and all(sorted(s) == sorted(t) for s in rot)
        # Within one table's rotation set every member holds every seat exactly once.
        assert all(c == (1,) * k for c in balance_report(rot).seat_counts.values())
        # Cyclic shifts: the left neighbour of everyone is the same in every seating.
        left = {t[i]: t[i - 1] for i in range(k)}
        assert all({s[i]: s[i - 1] for i in range(k)} == left for s in rot)
    everything = [s for t in tables for s in seat_rotations(t)]
    report = balance_report(everything, names)
    for name in names:
        assert len(set(report.seat_counts[name])) == 1  # all seats equally often


@pytest.mark.parametrize(("e", "k"), COMBOS)
def test_default_round_robin_is_balanced(e: int, k: int) -> None:
    names = _names(e)
    tables = round_robin(names, k)
    report = balance_report(tables, names)
    assert report.tables_spread == 0  # everyone plays the same number of tables
    assert report.pair_spread <= 1  # pairs share tables equally often, within one
    assert report.pair_min >= 1  # and everyone meets everyone
    _check_seats(tables, report, k)
    _check_rotations(tables, names, k)
    if math.comb(e, k) <= 200:  # small enough: every k-subset exactly once
        assert Counter(frozenset(t) for t in tables) == Counter(
            frozenset(c) for c in itertools.combinations(names, k)
        )
        assert report.pair_min == report.pair_max == math.comb(e - 2, k - 2)
    else:
        assert len(tables) == default_table_count(e, k) == 200 - 200 % e


@pytest.mark.parametrize(("e", "k"), COMBOS)
@pytest.mark.parametrize("m", [1, 2, 3])
def test_cyclic_designs_of_m_times_e_tables(e: int, k: int, m: int) -> None:
    names = _names(e)
    tables = balanced_tables(names, k, m * e, seed=0)
    report = balance_report(tables, names)
    assert len(tables) == m * e
    assert set(report.tables.values()) == {m * k}
    assert report.pair_spread <= 1
    _check_seats(tables, report, k)


@pytest.mark.parametrize(("e", "k"), COMBOS)
def test_other_table_counts_stay_within_bounds(e: int, k: int) -> None:
    names = _names(e)
    for tables_wanted in (e // math.gcd(e, k), e + 1, 2 * e - 1):
        if tables_wanted % e == 0:
            continue
        tables = balanced_tables(names, k, tables_wanted, seed=0)
        report = balance_report(tables, names)
        assert len(tables) == tables_wanted
        assert report.tables_spread == (0 if tables_wanted * k % e == 0 else 1)
        assert report.pair_spread <= 3
        _check_seats(tables, report, k)


def test_a_forced_spread_of_two() -> None:
    """4 tables of 4 among 8 entrants, each playing 2: an entrant is identified by
    their pair of tables and there are only C(4, 2) = 6 such pairs, so two entrants
    share both tables (count 2) while others never meet (count 0)."""
    report = balance_report(balanced_tables(_names(8), 4, 4), _names(8))
    assert (report.pair_min, report.pair_max) == (0, 2)
    assert report.tables_spread == 0


def test_cap_switches_to_a_design() -> None:
    names = _names(8)  # C(8, 4) = 70
    assert len(round_robin(names, 4)) == 70
    assert len(round_robin(names, 4, max_tables=69)) == 64  # largest multiple of 8
    assert len(round_robin(names, 4, tables=20)) == 20
    assert len(round_robin(names, 4, tables=70)) == 70
    assert default_table_count(10, 4) == 200
    assert default_table_count(13, 6) == 195
    # More entrants than the cap: a multiple of E / gcd(E, k) so all play equally often.
    assert default_table_count(500, 6) == 84
    assert default_table_count(500, 6, max_tables=50) == 84  # but at least ceil(E/k)


def test_large_pool() -> None:
    names = _names(120)
    tables = round_robin(names, 6, max_tables=100)  # E > cap: 100 tables, 5 each
    report = balance_report(tables, names)
    assert len(tables) == 100 and set(report.tables.values()) == {5}
    assert report.pair_max == 1  # a packing: nobody meets anyone twice
    _check_seats(tables, report, 6)


def test_equal_entrants_and_table_size_is_one_table() -> None:
    for k in range(3, 7):
        names = _names(k)
        assert round_robin(names, k) == [tuple(names)]
        assert sorted(seat_rotations(names)) == sorted(
            tuple(names[i:] + names[:i]) for i in range(k)
        )


def test_refusals() -> None:
    with pytest.raises(ValueError, match="tables of 4 need at least 4 entrants, got 3"):
        round_robin(_names(3), 4)
    with pytest.raises(ValueError, match="tables of 6 need at least 6 entrants"):
        balanced_tables(_names(5), 6, 10)
    with pytest.raises(ValueError, match="3 to 6 players, not 2"):
        round_robin(_names(5), 2)
    with pytest.raises(ValueError, match="3 to 6 players, not 7"):
        round_robin(_names(9), 7)
    with pytest.raises(ValueError, match="entrant listed twice: a"):
        round_robin(["a", "b", "a", "c"], 3)
    with pytest.raises(ValueError, match="at least one table"):
        balanced_tables(_names(5), 3, 0)


def test_deterministic_given_seed() -> None:
    names = _names(11)
    a = round_robin(names, 4, seed=5)
    assert a == round_robin(names, 4, seed=5)
    assert a != round_robin(names, 4, seed=6)
    b = balanced_tables(names, 5, 13, seed=2)
    assert b == balanced_tables(names, 5, 13, seed=2)


def test_balance_report() -> None:
    tables = [("a", "b", "c"), ("a", "b", "d"), ("c", "a", "b")]
    r = balance_report(tables, ["a", "b", "c", "d", "e"])
    assert r.tables == {"a": 3, "b": 3, "c": 2, "d": 1, "e": 0}
    assert (r.pair_min, r.pair_max) == (0, 3)  # e meets nobody; a and b meet thrice
    assert r.seat_counts["a"] == (2, 1, 0)
    assert r.seat_counts["c"] == (1, 0, 1)
    assert r.tables_spread == 3 and r.pair_spread == 3 and r.seat_spread == 2


def test_docstring_examples() -> None:
    import doctest

    from wizard_referee.tournament import schedule

    assert doctest.testmod(schedule).failed == 0
