"""How the suite is spread over pytest-xdist's workers (hooks used by conftest.py).

The README's test command is ``python -m pytest -n auto`` with
``--dist=worksteal`` (pyproject.toml): one worker per CPU. (Two per CPU,
to run tests while others wait, was measured and bought nothing: 223 s
against 222 s for the whole suite on 2 cores, with more CPU spent, and more
real-time deadlines missed by starved bots.) The order of the tests keeps
the workers' wall time close to the CPU they need:

- **Long tests first.** worksteal hands each worker a contiguous share of
  the collected tests and then moves the *end* of a busy worker's queue to
  an idle one; a long test collected late would run alone at the end. So
  :func:`order_for_workers` moves the tests marked ``slow`` (with their
  usual ``seconds``: ``@pytest.mark.slow(seconds=45)``) to the head of the
  shares, longest first, dealt out so that every worker starts with about
  the same amount of long work. Without xdist, they simply run first.
- **Background work.** A test marked ``early`` (one that starts work in
  the background) opens the run; one marked ``late`` (one that reports
  such work) ends it.

The order changes nothing but when a test runs: every test still passes
alone or in any order.
"""

from __future__ import annotations

import os

import pytest

#: Seconds assumed for a ``slow`` test that does not say.
DEFAULT_SLOW_SECONDS = 10.0


def expected_seconds(item: pytest.Item) -> float | None:
    """A ``slow`` test's usual duration (None: not marked slow)."""
    mark = item.get_closest_marker("slow")
    if mark is None:
        return None
    return float(mark.kwargs.get("seconds", DEFAULT_SLOW_SECONDS))


def shares(total: int, workers: int) -> list[int]:
    """How many of ``total`` tests worksteal first gives each worker, in order
    (as ``WorkStealingScheduling.check_schedule`` splits them).

    >>> shares(1655, 4)
    [413, 413, 414, 415]
    """
    out = []
    left = total
    for i in range(workers):
        n = left // (workers - i)
        out.append(n)
        left -= n
    return out


def order_for_workers(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """``items`` reordered: each worker's share starts with its long tests,
    and the ``late`` tests end the run.

    Long tests go, longest first, to the share with the least long work so
    far (the greedy rule for balancing loads); the other tests fill the
    shares in their collected order."""
    early = [i for i, item in enumerate(items) if item.get_closest_marker("early") is not None]
    late = [i for i, item in enumerate(items) if item.get_closest_marker("late") is not None]
    fixed = set(early) | set(late)  # placed by their marker, not by their seconds
    timed = [(s, i) for i, item in enumerate(items) if (s := expected_seconds(item)) is not None]
    if not timed and not late and not early:
        return items
    workers = max(1, workers)
    sizes = shares(len(items), workers)
    sizes[-1] -= len(late)  # the last share ends with them
    heads: list[list[int]] = [[] for _ in range(workers)]
    heads[0].extend(early)  # the first share opens with them
    load = [0.0] * workers
    for seconds, index in sorted(timed, key=lambda t: (-t[0], t[1])):
        if index in fixed:
            continue
        open_shares = [w for w in range(workers) if len(heads[w]) < sizes[w]]
        w = min(open_shares, key=lambda k: (load[k], k))
        heads[w].append(index)
        load[w] += seconds
    placed = {i for head in heads for i in head} | fixed
    rest = iter(i for i in range(len(items)) if i not in placed)
    order: list[int] = []
    for w in range(workers):
        order.extend(heads[w])
        order.extend(next(rest) for _ in range(sizes[w] - len(heads[w])))
    order.extend(late)
    return [items[i] for i in order]


def xdist_workers() -> int:
    """The number of workers in this run (1 without xdist)."""
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if count:
        return int(count)
    return 1
