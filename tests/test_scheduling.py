"""The order the suite's tests start in (tests/scheduling.py): long tests
first, longest first, ``early`` ones before and ``late`` ones after, nothing
lost or repeated; and pytest-xdist, as pyproject.toml runs it, starts them so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT
from .scheduling import start_rank
from .support import scaled


class _Item:
    """Stands in for a collected test: a name and its marks."""

    def __init__(self, name: str, seconds: float | None = None, when: str = "") -> None:
        self.name = name
        self._marks = {} if seconds is None else {"slow": pytest.mark.slow(seconds=seconds).mark}
        if when:
            self._marks[when] = getattr(pytest.mark, when).mark

    def get_closest_marker(self, name: str) -> Any:
        return self._marks.get(name)

    def __repr__(self) -> str:
        return self.name


def test_long_tests_start_first_longest_first() -> None:
    items: list[Any] = [_Item(f"t{i}") for i in range(12)]
    for i, seconds in [(3, 15), (7, 60), (9, 15), (10, 3)]:
        items[i] = _Item(f"slow{i}", seconds)
    items[2] = _Item("late", when="late")
    items[8] = _Item("early", when="early")
    ordered = sorted(items, key=start_rank)
    assert [i.name for i in ordered] == [
        "early",
        *["slow7", "slow3", "slow9", "slow10"],  # longest first; equal ones as collected
        *[f"t{i}" for i in (0, 1, 4, 5, 6, 11)],
        "late",
    ]


#: A suite of its own: quick tests, two long ones collected late, an early
#: and a late one; each test notes its worker when it starts.
_SUITE = """
import os, time
import pytest

def started(name):
    with open(os.environ["STARTS"], "a") as f:
        f.write(f"{os.environ.get('PYTEST_XDIST_WORKER', '-')} {name}\\n")

@pytest.mark.parametrize("i", range(6))
def test_quick(i):
    started(f"quick{i}")

@pytest.mark.late
def test_late():
    started("late")

@pytest.mark.early
def test_early():
    started("early")

@pytest.mark.slow(seconds=5)
def test_long():
    started("long")
    time.sleep(1.0)

@pytest.mark.slow(seconds=9)
def test_longer():
    started("longer")
    time.sleep(1.0)

@pytest.mark.parametrize("i", range(6, 12))
def test_more(i):
    started(f"quick{i}")
"""


@pytest.mark.e2e
def test_xdist_starts_the_long_tests_at_once_on_different_workers(tmp_path: Path) -> None:
    """pyproject.toml's options (``--dist=load --maxschedchunk=1``) with
    this suite's collection hook, on two workers: each worker opens
    with a long test (after the early one), and the late test ends its worker."""
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.scheduling import pytest_collection_modifyitems  # noqa: F401\n"
    )
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(_SUITE))
    starts = tmp_path / "starts"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-n", "2"),
            *("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", str(tmp_path)),
        ],
        env={**os.environ, "STARTS": str(starts)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split() for line in starts.read_text().splitlines()]
    assert sorted(n for _, n in lines) == sorted(
        ["early", "late", "long", "longer", *(f"quick{i}" for i in range(12))]
    )
    by_worker: dict[str, list[str]] = {}
    for worker, name in lines:
        by_worker.setdefault(worker, []).append(name)
    assert len(by_worker) == 2, by_worker
    openers = sorted(names[names[0] == "early"] for names in by_worker.values())
    assert openers == ["long", "longer"], by_worker  # one long test each, at once
    assert any(names[-1] == "late" for names in by_worker.values()), by_worker


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
