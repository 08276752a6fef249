"""The ladder's matchmaking on simulated fields (ladder/simulate.py): the
comparison graph stays connected, every active entry's sets grow, late
entries catch up, entries that finish their sets at different times meet
(not the same tables for ever), and the official intervals keep their
coverage under the adaptive matchmaking (and intervals half as wide do not)."""

from __future__ import annotations

import random

import pytest

from wizard_referee.ladder.matchmaking import Candidate, Matchmaker, Policy
from wizard_referee.ladder.simulate import Field, coverage, season


def test_the_graph_stays_connected_and_every_entrys_sets_grow() -> None:
    run = season(Field(entries=12, players=4, late=3, joins=10.0), 40.0, seed=3,
                 checkpoints=[15.0, 25.0])  # fmt: skip
    assert [c.groups for c in run.checkpoints] == [1, 1, 1]
    fewest = [c.fewest for c in run.checkpoints]
    assert fewest == sorted(fewest) and fewest[-1] > fewest[0] >= 1
    late = [c.fewest_late for c in run.checkpoints]
    assert late[0] >= 1 and late[-1] > late[0]


def test_entries_always_at_tables_meet_others_because_the_anchor_waits() -> None:
    """16 entries always online, tables of 4: a set's members are the only
    ones free when it ends. Seated at once they sit together again for
    ever (4 tables, 4 groups); waiting half a set for the others mixes them."""
    stuck = season(Field(entries=16, online=1.0, patience=0.0), 60.0, seed=3)
    mixed = season(Field(entries=16, online=1.0, patience=0.5), 60.0, seed=3)
    assert (stuck.checkpoints[-1].groups, stuck.checkpoints[-1].tables) == (4, 4)
    assert mixed.checkpoints[-1].groups == 1 and mixed.checkpoints[-1].tables > 100
    assert mixed.checkpoints[-1].sets > 0.9 * stuck.checkpoints[-1].sets


def test_the_anchor_is_the_entry_with_fewest_sets_and_tables_do_not_repeat() -> None:
    m = Matchmaker(Policy(players=3, random_share=0.0), random.Random(2))
    field = [Candidate(k, mu=25.0 + k, sigma=8.0, sets=5, since=float(k)) for k in range(6)]
    field[4] = Candidate(4, mu=29.0, sigma=8.0, sets=0, since=9.0)
    first = m.table(field)
    assert first is not None and 4 in first
    assert set(first) == {4, 3, 5}  # the nearest ratings: 28 and 30
    again = m.table(field)
    assert again is not None and set(again) != set(first)  # not the same table again


@pytest.mark.slow(seconds=5)
def test_the_official_intervals_keep_their_coverage_under_adaptive_matchmaking() -> None:
    """80 seasons of 8 entries at tables of 4, about 12 sets each, one
    interval a season per series. A calibrated interval (95%) fails a series
    (69 or fewer of 80 held) with probability 0.21%; one that holds the
    truth 80% of the time passes with probability 2.9%; intervals half as
    wide (about 68% coverage) fail."""
    (printed, halved), split = coverage(
        Field(entries=8, players=4, online=1.0), 14.0, 80, bootstrap=200, seed=100,
        narrow=(1.0, 0.5),
    )  # fmt: skip
    assert split == 0
    for which in ("ratings", "neighbours"):
        held = printed.one_each(which, 0)
        assert len(held) == 80 and sum(held) >= 70, (which, sum(held))
        assert sum(halved.one_each(which, 0)) < 70, which
