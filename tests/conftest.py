"""Shared fixtures: the repository's paths, the shared rules vectors, and a
referee server for end-to-end tests (``serve``) with its log (``logs``).

Servers are seeded: the deals (``ArenaConfig.seed``) and the bots' seeds
(``ArenaConfig.bot_seed_secret``) come from the test's seed, a hash of its
node id unless ``WIZARD_ARENA_TEST_SEED`` sets it. A failing test's report
shows the seed ("arena seed"), so the games it saw can be played again.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import pytest

# grpc core's settings as a referee's process chooses them (the tests host
# referees in this process), before any test loads grpc; the bots and commands
# the tests start get an environment without them, as the arena's do
from wizard_referee.referee.grpc_setup import prepare_referee_transport

from . import postgres

# the order the tests start in: long ones first (a hook of tests/scheduling.py)
from .scheduling import pytest_collection_modifyitems  # noqa: F401

prepare_referee_transport()

if TYPE_CHECKING:
    from .support import ServerThread

ROOT = Path(__file__).resolve().parent.parent
SHARED_CONFORMANCE = Path(
    os.environ.get("WIZARD_ARENA_SHARED_CONFORMANCE") or ROOT.parent / "shared" / "conformance"
)
SHARED_FILES = sorted(SHARED_CONFORMANCE.glob("*.json"))
"""The language-neutral rules vectors, beside the repository (none on a lone clone)."""

#: Set in CI (.ci/run): the shared vectors must be there, a missing folder fails.
SHARED_REQUIRED = os.environ.get("WIZARD_ARENA_REQUIRE_SHARED") == "1"

requires_shared_vectors = pytest.mark.skipif(
    not SHARED_FILES and not SHARED_REQUIRED,
    reason=f"the shared rules vectors are not here ({SHARED_CONFORMANCE} has no *.json): "
    "they come with the project's shared folder beside this repository, not with a clone "
    "of it alone; set WIZARD_ARENA_REQUIRE_SHARED=1 to make their absence a failure",
)


#: Capabilities of the machine a run must have (comma-separated, e.g.
#: ``netns,node,chromium,sandbox,postgresql``; .ci/run names them all): a test marked
#: ``needs(what, problem)`` fails where ``what`` is named and missing, and is
#: skipped with the problem elsewhere.
REQUIRED = {w for w in os.environ.get("WIZARD_ARENA_REQUIRE", "").split(",") if w}


def needs(what: str, problem: str | None) -> pytest.MarkDecorator:
    """The marker of a test that needs ``what``; ``problem``: why it is
    missing here (None: it is not)."""
    return pytest.mark.needs(what, problem)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        what, problem = mark.args
        if problem is None:
            continue
        if what in REQUIRED:
            pytest.fail(f"{what} is required here (WIZARD_ARENA_REQUIRE) but {problem}")
        pytest.skip(f"{problem} (WIZARD_ARENA_REQUIRE={what} makes this a failure)")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


# -- servers for end-to-end tests ------------------------------------------------------------

#: The ``serve`` fixture's defaults; a test module may override some of them in
#: a dict named ``SERVER_DEFAULTS`` (the test's own arguments override both).
SERVER_DEFAULTS: dict[str, Any] = {"move_time": 5.0, "shutdown_grace": 0.2}

#: A default move time this long is a margin no bot of a test should need.
GENEROUS_MOVE_TIME = 2.0


class LogSink(io.TextIOBase):
    """A thread-safe stream collecting the server's JSON log lines."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buf: list[str] = []

    def write(self, s: str) -> int:
        with self._lock:
            self._buf.append(s)
        return len(s)

    def isatty(self) -> bool:
        return False

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            text = "".join(self._buf)
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture
def logs() -> Iterator[LogSink]:
    """The server's log (level warning and up) as JSON events, kept out of the output."""
    import structlog

    from wizard_referee.referee.logs import configure_logging

    sink = LogSink()
    configure_logging("warning", "json", stream=cast(TextIO, sink))
    yield sink
    structlog.reset_defaults()


def seed_of(node: pytest.Item) -> int:
    """The seed of a test's servers: ``WIZARD_ARENA_TEST_SEED``, or a hash of its node id."""
    env = os.environ.get("WIZARD_ARENA_TEST_SEED")
    return int(env) if env else zlib.crc32(node.nodeid.encode())


def current_test_seed() -> int:
    """:func:`seed_of` the test now running (from ``PYTEST_CURRENT_TEST``), for
    servers started outside the ``serve`` fixture; 0 outside a test."""
    env = os.environ.get("WIZARD_ARENA_TEST_SEED")
    if env:
        return int(env)
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return zlib.crc32(current.rsplit(" (", 1)[0].encode()) if current else 0


@pytest.fixture
def serve(request: pytest.FixtureRequest, logs: LogSink) -> Iterator[Callable[..., ServerThread]]:
    """``serve(**config)`` starts a referee on 127.0.0.1, port 0
    (``ArenaConfig.build(**config)`` over :data:`SERVER_DEFAULTS` and the module's
    ``SERVER_DEFAULTS``), seeded with the test's seed unless ``seed`` is
    given; every server is stopped after the test. A default move time of
    :data:`GENEROUS_MOVE_TIME` or more is a margin and is scaled to the
    machine's load (``support.scaled``); a shorter one is what its test is about."""
    from wizard_referee.referee.arena import ArenaConfig

    from .support import ServerThread, scaled

    seed = seed_of(request.node)
    defaults = {**SERVER_DEFAULTS, **getattr(request.module, "SERVER_DEFAULTS", {})}
    if defaults["move_time"] >= GENEROUS_MOVE_TIME:  # a margin, not what the test is about
        defaults["move_time"] = scaled(defaults["move_time"])
    servers: list[ServerThread] = []

    def start(**kw: Any) -> ServerThread:
        config = {**defaults, **kw}
        config.setdefault("seed", seed)
        config.setdefault("bot_seed_secret", f"tests:{seed}")
        request.node.add_report_section(
            "setup",
            "arena seed",
            f"server {len(servers) + 1}: seed={config['seed']} (WIZARD_ARENA_TEST_SEED={seed})",
        )
        server = ServerThread(ArenaConfig.build(**config)).__enter__()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Stretch the test's pytest-timeout (its ``timeout`` mark, else
    ``--timeout`` or the ini's) by the machine's load as the test starts
    (``support.time_factor``), before pytest-timeout reads it: the limit
    catches a hung test, not a slow machine."""
    from .support import time_factor

    factor = time_factor()
    mark = item.get_closest_marker("timeout")
    base: object = None
    if mark is not None:
        base = mark.args[0] if mark.args else mark.kwargs.get("timeout")
    if base is None:
        base = item.config.getoption("timeout", None) or item.config.getini("timeout")
    with contextlib.suppress(TypeError, ValueError):
        if factor > 1.0 and float(str(base)) > 0:
            item.add_marker(pytest.mark.timeout(float(str(base)) * factor), append=False)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Each phase's report on the test item (``item.rep_call``): a fixture's
    teardown can tell whether its test failed (the browser tests then save a
    screenshot)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# -- confinement: root on Linux with bubblewrap (wizard_referee.sandbox) -------------------


def _sandbox_problem() -> str | None:
    import sys as _sys

    from wizard_referee import sandbox

    if _sys.platform != "linux" or os.geteuid() != 0:
        return "confinement is tested as root on Linux"
    problems = sandbox.problems()
    return problems[0] if problems else None


#: skipped with the reason where the machine cannot confine; a failure where
#: WIZARD_ARENA_REQUIRE names the sandbox (.ci/run)
NEEDS_SANDBOX = needs("sandbox", _sandbox_problem())


# -- PostgreSQL: a throwaway cluster per worker, a database per test (tests/postgres.py) ------

NEEDS_POSTGRES = needs("postgresql", postgres.problem())


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[postgres.Cluster]:
    """This worker's throwaway cluster (started when a test first needs it)."""
    why = postgres.problem()
    if why is not None:  # (the test's NEEDS_POSTGRES mark skips or fails first)
        pytest.skip(why)
    with postgres.Cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: postgres.Cluster) -> Iterator[str]:
    """A database of this test's own on the worker's cluster, dropped after it."""
    name, url = postgres_cluster.create_database()
    yield url
    postgres_cluster.drop_database(name)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=NEEDS_POSTGRES)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store's target on each backend: an SQLite file's path in the
    test's folder, or a PostgreSQL database of the test's own."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url
