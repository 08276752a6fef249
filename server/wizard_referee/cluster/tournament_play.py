"""The ``ray`` executor of ``wizard-arena tournament``: the pending games
played by warm workers on a Ray cluster (:mod:`.workers`, :mod:`.coordinator`),
each record stored by this process (the coordinator) as it arrives.

Each worker asks Ray for one CPU per table it plays at once (``parallel``:
a game is turn-based, one decision at a time) plus what its entrants'
instances declare (``num_cpus``, ``num_gpus``, ``memory`` per instance,
``parallel`` instances of each); ``workers = 0`` starts as many as the
cluster's resources hold. External entrants (a token, no command) dial in
to one referee and cannot follow their games to the workers: a tournament
with one is refused before anything starts.
"""

from __future__ import annotations

import math
from typing import Any

import ray

from wizard_referee.cluster.connect import RayConnectError, address_problem, open_ray
from wizard_referee.cluster.coordinator import (
    MAX_ATTEMPTS,
    Coordinator,
    Worker,
    WorkerStartError,
    stall_for,
)
from wizard_referee.cluster.workers import HostWorker
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError
from wizard_referee.tournament.executors import TournamentRun, log_dir
from wizard_referee.tournament.store import GameSpec, game_tags

__all__ = ["play_tournament", "problems", "worker_resources"]


def problems(config: TournamentConfig) -> list[str]:
    """External entrants cannot play on the workers; the cluster's address
    must answer (:func:`~.connect.address_problem`)."""
    out = [
        f"entrant {e.name!r} is an external bot (a token, no command): with "
        'executor = "ray" the games are played on the cluster\'s workers, which it cannot '
        'follow; give it as a command, or run the tournament with executor = "local"'
        for e in config.entrants
        if e.command is None
    ]
    unreachable = address_problem(config.ray_address)
    return out + ([unreachable] if unreachable else [])


def worker_resources(config: TournamentConfig) -> dict[str, float]:
    """What one worker asks Ray for: a CPU per table it plays at once and,
    per entrant instance (``parallel`` of each), what the entrant declares."""
    p = config.parallel
    out = {
        "num_cpus": p * (1 + sum(e.num_cpus for e in config.entrants)),
        "num_gpus": p * sum(e.num_gpus for e in config.entrants),
        "memory": p * sum(e.memory for e in config.entrants),
    }
    return {k: v for k, v in out.items() if v or k == "num_cpus"}


def worker_count(config: TournamentConfig, games: int) -> int:
    """``workers``, or as many as the cluster's resources hold (at least one,
    at most one per ``parallel`` games left)."""
    if config.workers:
        return config.workers
    ask = worker_resources(config)
    have: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    fits = [
        math.floor(have.get(name, 0.0) / need + 1e-9)
        for name, need in (
            ("CPU", ask["num_cpus"]),
            ("GPU", ask.get("num_gpus", 0)),
            ("memory", ask.get("memory", 0)),
        )
        if need
    ]
    return int(max(1, min([*fits, math.ceil(games / config.parallel)])))


async def play_tournament(run: TournamentRun) -> None:
    """Play ``run.pending`` on the cluster; store each record as it arrives."""
    config = run.config
    try:
        with open_ray(config.ray_address, config.ray_working_dir):
            await _play(run)
    except RayConnectError as e:
        raise TournamentError(str(e)) from None


async def _play(run: TournamentRun) -> None:
    """The games on the cluster joined (or Ray started) by the caller."""
    config = run.config
    workers = worker_count(config, len(run.pending))
    ask = worker_resources(config)
    actor = ray.remote(HostWorker).options(
        max_concurrency=config.parallel + 2, max_restarts=0, **ask
    )
    logs = str(log_dir(config))

    def spawn(index: int) -> Any:
        return actor.remote(
            config.hosting(), config.name, run.secret, index, logs, config.ray_working_dir
        )

    def submit(handle: Any, spec: GameSpec) -> Any:
        return handle.play.remote(spec, game_tags(spec, config.name))

    coordinator: Coordinator[GameSpec] = Coordinator(
        spawn,
        submit,
        lambda s: s.id,
        workers,
        config.parallel,
        run.notice,
        run.log,
        stall=stall_for(config.connect_timeout),
    )
    run.notice(
        f"{workers} Ray worker(s), each playing {config.parallel} game(s) at once "
        f"and asking for {_shown(ask)}"
    )
    queue = iter(run.pending)

    def done(spec: GameSpec, record: GameRecord, worker: Worker) -> None:
        assert worker.info is not None
        record.tags.update(worker=worker.index, node=worker.info["node"][:12])
        lost = coordinator.lost.get(spec.id)
        if lost:
            record.tags["lost_attempts"] = lost
        run.saved(spec, record)

    try:
        await coordinator.run(lambda: next(queue, None), done)
    except WorkerStartError as e:
        raise TournamentError(str(e)) from None
    for f in coordinator.failed:
        run.store.mark_failed(f.item.id)
    if coordinator.failed:
        ids = ", ".join(f.item.id for f in coordinator.failed)
        run.notice(
            f"{len(coordinator.failed)} game(s) could not be played, each lost with its Ray "
            f"worker {MAX_ATTEMPTS} times ({ids}; last: {coordinator.failed[-1].reason}): a "
            "fault of the cluster, not of the bots; they are not rated, --resume plays them"
        )


def _shown(ask: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in ask.items())
