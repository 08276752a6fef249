"""The leaderboard of results that only an order connects: two strong bots
that always outscore two weak ones. The one fit with a prior printed the
strong ones 2015 (1975-2072) and 1901 (1864-1934) against 1047 (1006-1090)
and 1038 (995-1065) at 10 deals, and 2188 (2176-2202) at 160: a gap, and
intervals excluding each other, made by the prior's imaginary draw and
growing with the games. Now each group is rated on its
own, the table, CSV, JSON and the web page say the groups and that only
their order is known, and each bot is compared with the next one (the
difference, its interval, the likelihood of superiority) within a group."""

from __future__ import annotations

import csv
import io
import random

import pytest

from wizard_referee.tournament.leaderboard import (
    format_leaderboard,
    leaderboard_csv,
    leaderboard_of,
)
from wizard_referee.tournament.store import GameSpec, SeatResult

from .conftest import ROOT

Finished = list[tuple[GameSpec, list[SeatResult], bool]]
SEATINGS = ["s1 s2 w1 w2", "s2 w1 w2 s1", "w1 w2 s1 s2", "w2 s1 s2 w1"]


def _two_strong_two_weak(deals: int, seed: int = 0) -> Finished:
    """Each deal at one table of 4 in 4 seatings; s1 and s2 always score
    100 or more, w1 and w2 under 10; who leads inside a pair is a coin toss."""
    rng = random.Random(seed)
    out: Finished = []
    for d in range(deals):
        for r, seating in enumerate(SEATINGS):
            seats = tuple(seating.split())
            spec = GameSpec(f"t0-d{d}-r{r}", d * 4 + r, 0, d, r, f"1:t0:d{d}", seats)
            totals = [(100 if n.startswith("s") else 0) + rng.randrange(10) for n in seats]
            ranks = [1 + sum(t > mine for t in totals) for mine in totals]
            rows = [
                SeatResult(spec.id, s, n, totals[s], ranks[s], [1], [1], [totals[s]], {})
                for s, n in enumerate(seats)
            ]
            out.append((spec, rows, False))
    return out


@pytest.mark.parametrize("deals", [10, 160])
def test_groups_get_no_gap_and_no_intervals_across(deals: int) -> None:
    board = leaderboard_of(_two_strong_two_weak(deals), bootstrap=200)
    assert [r.group for r in board.rows] == [1, 1, 2, 2]
    assert {r.name for r in board.rows[:2]} == {"s1", "s2"}
    for r in board.rows:
        assert r.low is not None and r.high is not None and r.low < r.rating < r.high
        assert r.note.startswith(f"group {r.group} of 2: rated within its group")
    for group in (board.rows[:2], board.rows[2:]):  # each rated on its own, mean 1500
        assert sum(r.rating for r in group) / 2 == pytest.approx(1500.0)
    strong_low = min(r.low for r in board.rows[:2] if r.low is not None)
    weak_high = max(r.high for r in board.rows[2:] if r.high is not None)
    assert strong_low < weak_high  # no intervals that exclude each other across groups
    top, across, third, last = board.rows
    assert across.vs_next is None and across.vs_next_low is None and across.los is None
    assert top.vs_next is not None and top.vs_next_low is not None and top.los is not None
    assert third.vs_next is not None and last.vs_next is None
    (note,) = [n for n in board.notes if "groups" in n]
    assert "group 1 (" in note and "outscored group 2 (" in note
    assert "no rating difference across groups is given" in note
    text = format_leaderboard(board)
    assert "-- group 1 of 2 (order only between groups) --" in text
    assert "-- group 2 of 2 (order only between groups) --" in text
    assert text.splitlines()[3].split()[4:6] == ["order", "only"]
    rows = list(csv.DictReader(io.StringIO(leaderboard_csv(board))))
    assert [r["group"] for r in rows] == ["1", "1", "2", "2"]
    assert rows[1]["vs_next"] == "" and rows[1]["los"] == ""
    assert "only the order of the groups is known" in rows[0]["note"]


def test_neighbours_within_one_group() -> None:
    """One group (the weak pair sometimes outscores the strong one): every
    row but the last has a difference to the next, its interval and LOS."""
    finished = _two_strong_two_weak(12)
    spec, seats, _ = finished[0]
    flipped = [
        SeatResult(s.game_id, s.seat, s.entrant, 200 - s.total, s.rank, [1], [1], [0], {})
        for s in seats
    ]
    board = leaderboard_of([*finished, (spec, flipped, False)], bootstrap=200)
    assert {r.group for r in board.rows} == {1} and all(r.note == "" for r in board.rows)
    for r in board.rows[:-1]:
        assert r.vs_next is not None and r.los is not None
        assert r.vs_next_low is not None and r.vs_next_high is not None
        assert r.vs_next_low <= r.vs_next <= r.vs_next_high
    assert "order only" not in format_leaderboard(board)


def test_the_web_page_has_the_same_words() -> None:
    """The page prints what the table prints: the groups, "order only", the
    comparison with the next bot and LOS."""
    page = (ROOT / "server/wizard_referee/web/static/leaderboard.js").read_text()
    for words in ("(order only between groups)", '"order only"', "vs next (95% interval)", "LOS"):
        assert words in page, words


def test_bots_each_alone_in_their_group_are_told_why_all_rate_1500() -> None:
    """Few deals in which the four bots always finished in the same order:
    every rating is 1500.0, "order only", and a note says why and what to do."""
    out: Finished = []
    for d in range(2):
        for r, seating in enumerate(SEATINGS):
            seats = tuple(seating.split())
            spec = GameSpec(f"t0-d{d}-r{r}", d * 4 + r, 0, d, r, f"1:t0:d{d}", seats)
            totals = [{"s1": 300, "s2": 200, "w1": 100, "w2": 0}[n] for n in seats]
            ranks = [1 + sum(t > mine for t in totals) for mine in totals]
            rows = [
                SeatResult(spec.id, s, n, totals[s], ranks[s], [1], [1], [totals[s]], {})
                for s, n in enumerate(seats)
            ]
            out.append((spec, rows, False))
    board = leaderboard_of(out, bootstrap=50)
    assert [r.rating for r in board.rows] == [1500.0] * 4
    text = format_leaderboard(board)
    assert "Every group is one bot, so every rating is 1500.0" in text
    assert "play more deals (deal_sets, --deal-sets; 10 or more)" in text
    assert "Every group is one bot" not in format_leaderboard(
        leaderboard_of(_two_strong_two_weak(10), bootstrap=50)
    )
