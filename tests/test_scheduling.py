"""The suite's own scheduling (tests/scheduling.py): long tests lead the
shares worksteal gives each worker, and nothing is lost or repeated."""

from __future__ import annotations

from typing import Any

import pytest

from .scheduling import order_for_workers, shares


class _Item:
    """Stands in for a collected test: a name and, if slow, its seconds."""

    def __init__(self, name: str, seconds: float | None = None, when: str = "") -> None:
        self.name = name
        self._marks = {} if seconds is None else {"slow": pytest.mark.slow(seconds=seconds).mark}
        if when:
            self._marks[when] = getattr(pytest.mark, when).mark

    def get_closest_marker(self, name: str) -> Any:
        return self._marks.get(name)

    def __repr__(self) -> str:
        return self.name


def test_shares_are_worksteals_split() -> None:
    # WorkStealingScheduling.check_schedule: len(pending) // nodes_remaining, in turn
    assert shares(10, 3) == [3, 3, 4]
    assert shares(1655, 2) == [827, 828]
    assert sum(shares(7, 4)) == 7


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_long_tests_lead_every_share_balanced(workers: int) -> None:
    items: list[Any] = [_Item(f"t{i}") for i in range(40)]
    for i, seconds in [(5, 60), (17, 45), (20, 15), (30, 10), (31, 10), (39, 3)]:
        items[i] = _Item(f"slow{i}", seconds)
    items[2] = _Item("late", when="late")
    items[25] = _Item("early", when="early")
    ordered = order_for_workers(items, workers)
    assert ordered[0].name == "early"  # the run starts with it
    assert ordered[-1].name == "late"  # and ends with this one
    assert sorted(map(repr, ordered)) == sorted(map(repr, items))  # a permutation
    start = 0
    loads = []
    for size in shares(len(items), workers):
        share = ordered[start : start + size]
        share = [i for i in share if i.name != "early"]  # before the first share's long tests
        start += size
        timed = [i for i in share if i.get_closest_marker("slow")]
        assert share[: len(timed)] == timed  # the long tests come first
        seconds = [i.get_closest_marker("slow").kwargs["seconds"] for i in timed]
        assert seconds == sorted(seconds, reverse=True)
        loads.append(sum(seconds))
    # greedy balance: the shares' long work differs by at most the longest test
    assert max(loads) - min(loads) <= 60
    quick = [i for i in ordered if not i.get_closest_marker("slow")]
    assert quick == [items[25]] + [
        i for i in items if not i.get_closest_marker("slow") and i.name not in ("late", "early")
    ] + [items[2]]  # order kept


def test_a_missing_capability_skips_unless_the_run_requires_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``needs(what, problem)``: skipped with the problem where ``what`` is
    missing; a failure where WIZARD_ARENA_REQUIRE names it (CI names netns,
    node and chromium); nothing where it is there."""
    from . import conftest

    class Item:
        def __init__(self, problem: str | None) -> None:
            self.mark = conftest.needs("node", problem).mark

        def iter_markers(self, name: str) -> list[pytest.Mark]:
            return [self.mark] if name == "needs" else []

    monkeypatch.setattr(conftest, "REQUIRED", set())
    conftest.pytest_runtest_setup(Item(None))  # type: ignore[arg-type]
    with pytest.raises(pytest.skip.Exception, match="no node here"):
        conftest.pytest_runtest_setup(Item("no node here"))  # type: ignore[arg-type]
    monkeypatch.setattr(conftest, "REQUIRED", {"node"})
    with pytest.raises(pytest.fail.Exception, match="node is required here"):
        conftest.pytest_runtest_setup(Item("no node here"))  # type: ignore[arg-type]
