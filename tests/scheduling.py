"""How the suite is spread over pytest-xdist's workers (hooks used by conftest.py).

The README's test command is ``python -m pytest -n auto`` with
``--dist=worksteal`` (pyproject.toml). Two things keep its wall time close
to the CPU it needs:

- **Workers.** ``-n auto`` starts :func:`auto_workers` workers: two per
  CPU, because many tests spend much of their time waiting (on bot
  processes starting, on sockets, on a referee's deadlines), and a second
  worker per core runs while the first waits. ``WIZARD_ARENA_TEST_WORKERS``
  overrides it (``-n N`` on the command line too, as always).
- **Long tests first.** worksteal hands each worker a contiguous share of
  the collected tests and then moves the *end* of a busy worker's queue to
  an idle one; a long test collected late would run alone at the end. So
  :func:`order_for_workers` moves the tests marked ``slow`` (with their
  usual ``seconds``: ``@pytest.mark.slow(seconds=45)``) to the head of the
  shares, longest first, dealt out so that every worker starts with about
  the same amount of long work. Without xdist, they simply run first.

The order changes nothing but when a test runs: every test still passes
alone or in any order.
"""

from __future__ import annotations

import os

import pytest

#: Seconds assumed for a ``slow`` test that does not say.
DEFAULT_SLOW_SECONDS = 10.0


def auto_workers() -> int:
    """The number of workers ``-n auto`` starts (see the module docstring)."""
    override = os.environ.get("WIZARD_ARENA_TEST_WORKERS", "").strip()
    if override:
        return max(1, int(override))
    return 2 * len(os.sched_getaffinity(0))


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
    """``items`` reordered: each worker's share starts with its long tests.

    Long tests go, longest first, to the share with the least long work so
    far (the greedy rule for balancing loads); the other tests fill the
    shares in their collected order."""
    timed = [(s, i) for i, item in enumerate(items) if (s := expected_seconds(item)) is not None]
    if not timed:
        return items
    workers = max(1, workers)
    sizes = shares(len(items), workers)
    heads: list[list[int]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for seconds, index in sorted(timed, key=lambda t: (-t[0], t[1])):
        open_shares = [w for w in range(workers) if len(heads[w]) < sizes[w]]
        w = min(open_shares, key=lambda k: (load[k], k))
        heads[w].append(index)
        load[w] += seconds
    long_ones = {i for _, i in timed}
    rest = iter(i for i in range(len(items)) if i not in long_ones)
    order: list[int] = []
    for w in range(workers):
        order.extend(heads[w])
        order.extend(next(rest) for _ in range(sizes[w] - len(heads[w])))
    return [items[i] for i in order]


def xdist_workers(config: pytest.Config) -> int:
    """The number of workers in this run (1 without xdist)."""
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if count:
        return int(count)
    return 1
