"""The Ray actors that play games.

:class:`HostWorker` runs the local runner's machinery
(:func:`wizard_referee.hosting.host.open_host`) in a trio thread of its
own: a referee on a free loopback port, ``parallel`` instances of every
command entrant (restarted when they crash, as in a local run; confined
under ``sandbox = "bwrap"``, as in a local run, after the node's own checks:
a node that cannot confine them refuses to play, naming itself), started
once and kept warm. Each :meth:`HostWorker.play` call (up to ``parallel``
at once: the actor is threaded) hands one game to that trio loop and
returns its complete record, with the same rules, deadlines and fault
policy as the local runner: a bot's think time is measured here, on the
worker, never across the network to the coordinator.

:class:`LocalWorker` plays a comparison's games in-process
(:func:`wizard_referee.compare.local_play.play_planned`), the bot classes
imported once.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import ray
import trio

from wizard_referee.compare.local_play import play_planned
from wizard_referee.compare.plan import ComparePlan, PlannedGame
from wizard_referee.hosting.config import HostConfig, HostError
from wizard_referee.hosting.confine import node_problems
from wizard_referee.hosting.host import GameHost, Planned, open_host
from wizard_referee.referee.grpc_setup import prepare_referee_transport
from wizard_referee.referee.logs import configure_logging, get_logger, log_file
from wizard_referee.referee.record import GameRecord

__all__ = ["HostWorker", "LocalWorker", "WorkerStopped", "where"]


class WorkerStopped(RuntimeError):
    """The worker's referee is not running (it stopped, e.g. an entrant
    could not be kept running): it cannot play, and will not again."""


def where() -> dict[str, Any]:
    """Which node and process this is."""
    context = ray.get_runtime_context()
    return {
        "node": context.get_node_id(),
        "ip": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }


def _logs_folder(wanted: str, index: int) -> Path:
    """``wanted/worker-INDEX`` when it can be made here (this machine, or a
    shared file system); else a folder in this node's temporary directory."""
    folder = Path(wanted) / f"worker-{index}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    except OSError:
        return Path(tempfile.mkdtemp(prefix=f"wizard-arena-worker-{index}-"))


def _workdir(config: HostConfig, shipped_from: str) -> str:
    """Where the entrants' commands run: the TOML file's folder, found in
    the copy Ray unpacked (the current folder) when ``shipped_from`` (the
    folder sent as the runtime_env's working_dir) holds it."""
    if not shipped_from:
        return config.workdir
    try:
        inner = Path(config.workdir or ".").resolve().relative_to(Path(shipped_from).resolve())
    except ValueError:
        inner = Path()
    return str(Path.cwd() / inner)


class HostWorker:
    """A warm worker: a referee and every command entrant, playing the games
    it is handed (see the module docstring). Create it as a Ray actor with
    ``max_concurrency`` above ``parallel``; :meth:`ready` says when it can play."""

    def __init__(
        self, config: HostConfig, name: str, secret: str, index: int, logs: str, shipped_from: str
    ) -> None:
        # Ray loaded grpc before this referee could choose its listener: grpc's
        # default stays, and its log says why (grpc_setup)
        prepare_referee_transport()
        # a referee of its own on a free loopback port: bots dial in from this node only
        self.config = replace(
            config, host="127.0.0.1", port=0, workdir=_workdir(config, shipped_from)
        )
        self.name = name
        """The competition's name, for the worker's log."""
        self.secret = secret
        self.index = index
        self.logs = _logs_folder(logs, index)
        self._started = threading.Event()
        self._error: str | None = None
        self._host: GameHost | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        threading.Thread(target=self._main, name="wizard-arena-host", daemon=True).start()

    def _main(self) -> None:
        configure_logging("warning", "json", log_file(self.logs / "worker.log"))
        try:
            trio.run(self._serve)
        except BaseException as e:  # reported by ready() and play(): the coordinator stops
            self._error = _message(e)
        finally:
            self._host = None  # play() refuses at once from now on
            self._started.set()

    async def _serve(self) -> None:
        log = get_logger(tournament=self.name, worker=self.index)
        self._token = trio.lowlevel.current_trio_token()
        if self.config.sandbox == "bwrap":
            # confined on every node, or not at all: a node that cannot refuses its games
            found = node_problems(self.config)
            if found:
                here = where()
                raise HostError(
                    f"node {here['host']} ({here['ip']}) cannot confine the entrants, and "
                    f"plays none of their games: {'; '.join(found)}"
                )
        async with open_host(self.config, self.secret, self.logs, log, log.warning) as host:
            self._host = host
            self._started.set()
            await trio.sleep_forever()

    def ready(self) -> dict[str, Any]:
        """Once every entrant has connected: where this worker runs, or
        ``{"error": ...}`` when an entrant cannot start or join here."""
        self._started.wait()
        if self._error is not None or self._host is None:
            return {"error": self._error or "the worker's referee stopped"}
        return {**where(), "logs": str(self.logs)}

    def play(self, spec: Planned, tags: dict[str, Any]) -> GameRecord:
        """Play one game (as soon as its seats are free) and return its record."""
        host, token = self._host, self._token
        if host is None or token is None:
            raise WorkerStopped(self._error or "the worker's referee stopped")
        try:
            return trio.from_thread.run(host.play, spec, tags, trio_token=token)
        except (trio.RunFinishedError, trio.Cancelled):
            raise WorkerStopped(self._error or "the worker's referee stopped") from None


class LocalWorker:
    """A worker playing a comparison's games in-process."""

    def __init__(self, plan: ComparePlan) -> None:
        self.plan = plan

    def ready(self) -> dict[str, Any]:
        return where()

    def play(self, game: PlannedGame) -> GameRecord:
        return play_planned(self.plan, game)


def _message(e: BaseException) -> str:
    """The first real error of a (possibly grouped) exception."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return str(e) or type(e).__name__
