"""The order the suite's tests start in (the collection hook below, which
conftest.py takes in).

The README's test command is ``python -m pytest -n auto``: pytest-xdist, one
worker per CPU, with ``--dist=load --maxschedchunk=1`` (pyproject.toml).
xdist then hands out the tests one by one in the order they were collected,
each to a worker that is short of work (two to each at the start), so the
collected order alone decides when a test starts:

- **Long tests first, longest first** (marked with their usual seconds:
  ``@pytest.mark.slow(seconds=45)``): each starts on the next worker free
  while the quick tests fill the others, so no long test runs alone at the
  end (the greedy rule for balancing loads: the longest job to whoever is
  free).
- **Background work.** A test marked ``early`` (one that starts work in the
  background) opens the run; one marked ``late`` (one that reports such
  work) ends it.

The same order holds without xdist. It changes nothing but when a test
runs: every test still passes alone or in any order.
``tests/test_scheduling.py`` runs a small suite on two workers to check that
xdist starts the tests so.
"""

from __future__ import annotations

import pytest

#: Seconds assumed for a ``slow`` test that does not say.
DEFAULT_SLOW_SECONDS = 10.0


def expected_seconds(item: pytest.Item) -> float | None:
    """A ``slow`` test's usual duration (None: not marked slow)."""
    mark = item.get_closest_marker("slow")
    if mark is None:
        return None
    return float(mark.kwargs.get("seconds", DEFAULT_SLOW_SECONDS))


def start_rank(item: pytest.Item) -> tuple[int, float]:
    """Where ``item`` starts: the ``early`` tests, the long tests (longest
    first), the others, the ``late`` tests; in the collected order within each."""
    if item.get_closest_marker("early") is not None:
        return (0, 0.0)
    if item.get_closest_marker("late") is not None:
        return (3, 0.0)
    seconds = expected_seconds(item)
    return (2, 0.0) if seconds is None else (1, -seconds)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests in the order they start (a stable sort by :func:`start_rank`)."""
    items.sort(key=start_rank)
