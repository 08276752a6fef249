"""The ``ray`` executor of ``wizard-arena compare``: a comparison's games
played in-process (every bot a Python class) by warm workers on a Ray
cluster (:class:`~.workers.LocalWorker`, one CPU and one game at a time
each, the bot classes imported once), each record stored by this process
(the coordinator) as it arrives, in the comparison's own order of counting
(:mod:`wizard_referee.compare.comparison`), so the answer does not depend on
which worker played what. A game whose worker dies is played again on
another worker. Bots given as commands (or ``--referee``) play over a
referee on this machine only (the local executor).
"""

from __future__ import annotations

import math
from typing import Any

import ray
import trio

from wizard_referee.cluster.connect import RayConnectError, address_problem, open_ray
from wizard_referee.cluster.coordinator import Coordinator, Worker, WorkerStartError
from wizard_referee.cluster.workers import LocalWorker
from wizard_referee.compare.comparison import CompareError, Comparison, Progress
from wizard_referee.compare.plan import PlannedGame
from wizard_referee.referee.record import GameRecord

__all__ = ["SLOTS", "play_compare", "problems"]

#: Games handed to a worker at once: one plays while the next waits there.
SLOTS = 2


def problems(address: str) -> list[str]:
    """What keeps a comparison from joining the cluster at ``address``
    (checked before its database is created)."""
    unreachable = address_problem(address)
    return [unreachable] if unreachable else []


def play_compare(
    comparison: Comparison, progress: Progress, *, workers: int = 0, address: str = ""
) -> None:
    """Play the comparison's games on the cluster until it is done."""
    try:
        with open_ray(address):
            _play(comparison, progress, workers)
    except RayConnectError as e:
        raise CompareError(str(e)) from None


def _play(comparison: Comparison, progress: Progress, workers: int) -> None:
    count = workers or max(
        1,
        math.floor(ray.cluster_resources().get("CPU", 1.0)),  # type: ignore[no-untyped-call]
    )
    actor = ray.remote(LocalWorker).options(num_cpus=1, max_restarts=0)

    def spawn(index: int) -> Any:
        return actor.remote(comparison.plan)

    def submit(handle: Any, game: PlannedGame) -> Any:
        return handle.play.remote(game)

    def done(game: PlannedGame, record: GameRecord, worker: Worker) -> None:
        assert worker.info is not None
        record.tags.update(worker=worker.index, node=worker.info["node"][:12])
        comparison.add(game, record)
        progress.tick()

    def notice(line: str) -> None:
        if progress.stream is not None:
            progress.stream.write("\n" + line + "\n")

    coordinator: Coordinator[PlannedGame] = Coordinator(
        spawn, submit, lambda g: g.spec.id, count, SLOTS, notice, _Quiet()
    )
    try:
        trio.run(lambda: coordinator.run(comparison.next_game, done, lambda: comparison.done))
    except WorkerStartError as e:
        raise CompareError(str(e)) from None
    if coordinator.failed:
        f = coordinator.failed[0]
        raise CompareError(
            f"game {f.item.spec.id} was lost with its Ray worker again and again "
            f"(last: {f.reason}): a fault of the cluster; --resume plays it"
        )


class _Quiet:
    """The coordinator's log: a comparison has none of its own."""

    def info(self, *args: Any, **kw: Any) -> None:
        pass

    warning = info
