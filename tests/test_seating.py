"""Seating designs for the games of one deal: balance of seats and neighbours,
the choice between ``balanced`` and ``cyclic``, and that choice kept with the plan."""

from __future__ import annotations

import argparse
import itertools
import math
from pathlib import Path

import pytest
import trio

from wizard_referee.tournament import cmd_tournament
from wizard_referee.tournament.runner import (
    TournamentConfig,
    TournamentError,
    plan_games,
    run_tournament,
)
from wizard_referee.tournament.schedule import seat_rotations
from wizard_referee.tournament.seating import (
    deal_seatings,
    design,
    games_per_deal,
    resolve_seating,
    seating_balance,
)
from wizard_referee.tournament.store import ResultsStore

NAMES = "abcdef"


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_the_balanced_design_balances_seats_and_every_distance(k: int) -> None:
    seatings = deal_seatings(NAMES[:k])
    assert len(seatings) == k * (k - 1) == games_per_deal(k)
    assert all(sorted(s) == sorted(NAMES[:k]) for s in seatings)
    assert seatings[0] == tuple(NAMES[:k])  # the table's own order first
    balance = seating_balance(seatings)
    # every member in every seat k - 1 times ...
    assert all(counts == (k - 1,) * k for counts in balance.seats.values())
    # ... and every other member directly after it (d = 1), directly before it
    # (d = k - 1) and at every other distance exactly k times
    for d in range(1, k):
        assert set(balance.after[d].values()) == {k}, d


@pytest.mark.parametrize("k", [3, 4, 5])
def test_at_3_4_and_5_the_design_is_sharply_2_transitive(k: int) -> None:
    """For any two seats and any two members: exactly one game with the first
    member in the first seat and the second in the second."""
    balance = seating_balance(deal_seatings(NAMES[:k]))
    assert len(balance.even_seat_pairs()) == k * (k - 1) // 2
    for counts in balance.seat_pairs.values():
        assert set(counts.values()) == {1}


def test_the_6_player_design_is_exact_for_7_pairs_of_seats() -> None:
    balance = seating_balance(deal_seatings(NAMES))
    pairs = balance.even_seat_pairs()
    assert pairs == [(0, 1), (0, 2), (1, 2), (2, 3), (2, 4), (2, 5), (3, 4)]
    assert sum(1 for s, t in pairs if t - s in (1, 5)) == 4  # 4 of the 6 neighbouring pairs
    for s, t in pairs:
        assert set(balance.seat_pairs[(s, t)].values()) == {1}


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_cyclic_balances_seats_but_never_changes_neighbours(k: int) -> None:
    seatings = deal_seatings(NAMES[:k], "cyclic")
    assert seatings == seat_rotations(NAMES[:k]) and len(seatings) == games_per_deal(k, "cyclic")
    balance = seating_balance(seatings)
    assert balance.seat_spread == 0
    assert balance.after_spread(1) == k  # the same next player in all k games, no other


def test_games_per_deal_is_the_least_that_can_balance() -> None:
    """Every seat equally often needs a multiple of k games, every other member
    after you equally often a multiple of k - 1, so at least k(k - 1) games:
    the designs take no more. At 4 they play each of the 6 cyclic orders twice."""
    for k in range(3, 7):
        games = len(design(k))
        assert games == k * (k - 1) == math.lcm(k, k - 1)
    orders = {min(s[i:] + s[:i] for i in range(4)) for s in deal_seatings("abcd")}
    assert len(orders) == 6  # every cyclic order of 4 is used (twice)


def test_design_refuses_unknown_names_and_sizes() -> None:
    with pytest.raises(ValueError, match="seating must be one of balanced, cyclic"):
        design(4, "random")
    with pytest.raises(ValueError, match="3 to 6"):
        design(7)


# -- the choice, in the file, on the command line and in the stored plan -------------------


def _config(tmp: Path, **section: object) -> TournamentConfig:
    return TournamentConfig.from_dict(
        {
            "tournament": {"players": 4, "seed": 3, "database": str(tmp / "r.sqlite"), **section},
            "entrant": [{"name": f"e{i}", "command": ["true"]} for i in range(4)],
        }
    )


def test_seating_in_the_file_and_on_the_command_line(tmp_path: Path) -> None:
    assert _config(tmp_path).plan_key()["seating"] == "balanced"
    assert len(plan_games(_config(tmp_path))) == 12
    assert len(plan_games(_config(tmp_path, seating="cyclic"))) == 4
    with pytest.raises(TournamentError, match='seating must be one of "balanced", "cyclic"'):
        _config(tmp_path, seating="round")
    parser = argparse.ArgumentParser()
    cmd_tournament.add_arguments(parser)
    args = parser.parse_args(["t.toml", "--seating", "cyclic"])
    overrides = cmd_tournament.overrides_from_args(args)
    assert overrides["seating"] == "cyclic"
    data = {
        "tournament": {"players": 4},
        "entrant": [{"name": f"e{i}", "command": "true"} for i in range(4)],
    }
    assert TournamentConfig.from_dict(data, **overrides).seating == "cyclic"
    assert cmd_tournament.overrides_from_args(parser.parse_args(["t.toml"]))["seating"] is None


def _store_old_tournament(config: TournamentConfig) -> None:
    """A tournament stored before seatings could be chosen: no ``seating`` in
    its plan, played cyclic (no games left to play)."""
    plan = config.plan_key()
    del plan["seating"]
    with ResultsStore(config.database) as store:
        store.create("old", {"plan": plan}, [], [], config.rules.to_dict())


def test_an_old_tournament_resumes_as_cyclic(tmp_path: Path) -> None:
    config = _config(tmp_path)  # no seating given: the stored one is used
    _store_old_tournament(config)
    store = trio.run(lambda: run_tournament(config, resume=True))
    with store:
        stored = store.tournament_config()
    assert resolve_seating(None, stored) == "cyclic"
    # the games an old tournament planned: the cyclic shifts, as before
    old = plan_games(_config(tmp_path, seating="cyclic"))
    assert [g.seats for g in old[:4]] == seat_rotations(old[0].seats)


def test_a_resume_with_another_seating_is_refused(tmp_path: Path) -> None:
    _store_old_tournament(_config(tmp_path))
    given = _config(tmp_path, seating="balanced")
    with pytest.raises(TournamentError, match='seating: stored "cyclic", given "balanced"'):
        trio.run(lambda: run_tournament(given, resume=True))


def test_resolve_seating() -> None:
    assert resolve_seating(None, None) == "balanced"  # a new tournament
    assert resolve_seating(None, {"plan": {"seating": "balanced"}}) == "balanced"
    assert resolve_seating("cyclic", {"plan": {"seating": "balanced"}}) == "cyclic"


def test_every_ordering_of_3_is_the_3_player_design() -> None:
    assert sorted(deal_seatings("abc")) == sorted(itertools.permutations("abc"))
