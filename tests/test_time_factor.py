"""Deadlines of tests on a busy machine: :func:`tests.support.time_factor`
stretches them by the load, and the conftest stretches pytest-timeout's limit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, pytest_runtest_protocol
from .support import MAX_TIME_FACTOR, scaled, time_factor


def test_the_factor_follows_the_load_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIZARD_ARENA_TEST_TIME_FACTOR", raising=False)
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    assert time_factor() >= max(1.0, min(load / cores, MAX_TIME_FACTOR)) * 0.5  # (the load moves)
    monkeypatch.setattr(os, "getloadavg", lambda: (cores * 3.0, 0.0, 0.0))
    assert time_factor() >= 3.0
    monkeypatch.setattr(os, "getloadavg", lambda: (cores * 1000.0, 0.0, 0.0))
    assert time_factor() == MAX_TIME_FACTOR
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setenv("WIZARD_ARENA_TEST_TIME_FACTOR", "7")
    assert 7.0 <= time_factor() <= MAX_TIME_FACTOR
    assert scaled(2.0) >= 14.0
    monkeypatch.setenv("WIZARD_ARENA_TEST_TIME_FACTOR", "not a number")
    assert time_factor() >= 1.0


@pytest.mark.timeout(100)
def test_the_pytest_timeout_is_stretched(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a fresh item of this test (this one's mark may already be stretched)
    parent = request.node.parent
    assert isinstance(parent, pytest.Module)
    item = pytest.Function.from_parent(parent, name=request.node.name)
    monkeypatch.setenv("WIZARD_ARENA_TEST_TIME_FACTOR", str(MAX_TIME_FACTOR))
    protocol = pytest_runtest_protocol(item)
    next(protocol)
    mark = item.get_closest_marker("timeout")
    assert mark is not None and mark.args == (100 * MAX_TIME_FACTOR,)
    protocol.close()


def test_the_load_script_runs_a_command_beside_busy_processes() -> None:
    """scripts/test_under_load.py: the command's last line, its status, the load seen."""
    script = ROOT / "scripts" / "test_under_load.py"
    code = "import time; time.sleep(0.1); print('3 passed in 1.00s')"
    options = ["--load-per-core", "0.5", "--warmup", "0"]
    proc = subprocess.run(
        [sys.executable, str(script), *options, "--", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("load: 1 busy processes on ")
    assert "result: 3 passed in 1.00s" in lines
    assert lines[-2].startswith("exit status 0 after ")
    assert lines[-1].startswith("load average (1 min) seen: least ")
    spec = importlib.util.spec_from_file_location("test_under_load", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.readme_test_command()[1:] == ["-m", "pytest", "-n", "auto"]
    # the command runs as after the README's ". .venv/bin/activate": this
    # Python's scripts (wizard-arena) first on PATH
    path = module.activated()["PATH"].split(os.pathsep)
    assert path[0] == str(Path(sys.executable).parent)
