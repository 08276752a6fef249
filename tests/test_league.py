"""The course kit's league helper: snapshots of earlier policies, opponents
sampled from them uniformly or by the learner's record, from a seeded
generator of its own; and the course's example of it runs."""

from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pytest

from wizard_arena.rl.league import League

from .conftest import ROOT


def test_a_snapshot_does_not_follow_the_model_trained_in_place() -> None:
    weights = {"w": np.zeros(3)}
    league: League[dict[str, np.ndarray]] = League(seed=1)
    member = league.add(weights, name="v0")
    weights["w"] += 1.0  # training goes on in place, as train.py's Adam steps do
    assert member.policy["w"].tolist() == [0.0, 0.0, 0.0]
    shared = League[list[int]](seed=1, snapshot=lambda p: p)  # a factory, a file name: as is
    policy = [1]
    assert shared.add(policy).policy is policy


def test_uniform_sampling_is_seeded_and_leaves_the_global_generator_alone() -> None:
    def draws(seed: int) -> list[str]:
        league: League[int] = League(seed=seed)
        for k in range(4):
            league.add(k)
        return [league.sample().name for _ in range(400)]

    state = random.getstate()
    first = draws(7)
    assert random.getstate() == state
    assert draws(7) == first
    assert draws(8) != first
    counts = Counter(first)
    assert sorted(counts) == ["v0", "v1", "v2", "v3"]
    assert all(70 <= c <= 130 for c in counts.values()), counts


def test_prioritized_sampling_favours_the_members_the_learner_loses_to() -> None:
    league: League[str] = League(seed=3, mode="pfsp", power=2.0)
    for name in ("easy", "even", "hard"):
        league.add(name, name=name)
    for _ in range(18):
        league.record("easy", 1.0)
        league.record("hard", 0.0)
        league.record("even", 0.5)
    assert league.win_rate("easy") == pytest.approx(0.95)
    assert league.win_rate("hard") == pytest.approx(0.05)
    assert league.win_rate("even") == pytest.approx(0.5)
    w = dict(zip(["easy", "even", "hard"], league.weights(), strict=True))
    assert sum(w.values()) == pytest.approx(1.0)
    assert w["easy"] < w["even"] < w["hard"]
    assert w["hard"] / w["easy"] == pytest.approx((0.95 / 0.05) ** 2)
    counts = Counter(league.sample().name for _ in range(1000))
    assert counts["hard"] > 500 > 50 > counts["easy"]
    uniform = League[str](seed=3)
    uniform.add("a")
    uniform.record("v0", 1.0)
    assert uniform.weights() == [1.0]  # uniform ignores the record


def test_capacity_keeps_the_anchor_and_the_latest() -> None:
    league: League[int] = League(seed=0, capacity=3)
    for k in range(6):
        league.add(k)
    assert [m.name for m in league.members] == ["v0", "v4", "v5"]
    assert league.latest.policy == 5
    one: League[int] = League(seed=0, capacity=1)
    one.add(1)
    one.add(2, name="new")
    assert [m.name for m in one.members] == ["new"]


def test_mistakes_are_refused() -> None:
    league: League[int] = League(seed=0)
    with pytest.raises(IndexError, match="empty"):
        league.sample()
    with pytest.raises(IndexError, match="empty"):
        _ = league.latest
    league.add(1, name="a")
    with pytest.raises(ValueError, match="already"):
        league.add(2, name="a")
    with pytest.raises(ValueError, match="between 0"):
        league.record("a", 2.0)
    with pytest.raises(KeyError):
        league.record("b", 1.0)
    with pytest.raises(ValueError, match="mode"):
        League(mode="elo")
    with pytest.raises(ValueError, match="capacity"):
        League(capacity=0)


def test_the_courses_league_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/course.md's league example: a learner against sampled snapshots."""
    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", course, re.S) if "League(" in b)
    exec(compile(code, "docs/course.md", "exec"), {})
    size, *weights = capsys.readouterr().out.split()
    assert size == "3"
    assert len(weights) == 3
