"""Handing games to warm workers and taking back their records.

The coordinator starts the workers (Ray actors), gives each idle slot of a
ready worker the next game, and passes every record to ``done`` as it
arrives (games end out of order). A fault of the cluster is not a fault of
a bot: when a worker dies (its process, or its node), every game it was
playing is handed to another worker and played again from its deal; no
record of the lost attempt exists, so nothing is written twice and no bot
is charged. A lost worker is replaced (as long as the cluster has room).
A game lost :data:`MAX_ATTEMPTS` times is given up and reported as such
(never rated); ``--resume`` tries it again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import ray
import trio
from ray.exceptions import RayActorError, RayError, RayTaskError

from wizard_referee.cluster.connect import first_line
from wizard_referee.cluster.workers import WorkerStopped
from wizard_referee.referee.record import GameRecord

__all__ = [
    "MAX_ATTEMPTS",
    "STALL",
    "Coordinator",
    "Failed",
    "Worker",
    "WorkerStartError",
    "stall_for",
]

#: A game lost with its worker this many times is given up.
MAX_ATTEMPTS = 3
#: Seconds without any ready worker, with games left, before giving up (at
#: least: :func:`stall_for`).
STALL = 120.0


def stall_for(connect_timeout: float) -> float:
    """How long a run waits for a ready worker: a worker is ready once its
    entrants have connected, which they may take ``connect_timeout`` to do;
    twice that on a busy cluster, and never less than :data:`STALL`.

    >>> stall_for(60), stall_for(150)
    (120.0, 300.0)
    """
    return max(STALL, 2.0 * connect_timeout)


T = TypeVar("T")


class WorkerStartError(Exception):
    """A worker could not start its entrants (the message says why), or the
    cluster has had no room for any worker: not a fault of the cluster to retry."""


@dataclass
class Worker:
    index: int
    actor: Any
    ready_ref: Any
    info: dict[str, Any] | None = None
    """Where it runs, once ready (None: starting)."""
    running: dict[Any, Any] = field(default_factory=dict)
    """Object ref of a game under way -> the game."""

    @property
    def label(self) -> str:
        where = f" on {self.info['ip']}" if self.info else ""
        return f"worker {self.index}{where}"


@dataclass(frozen=True)
class Failed(Generic[T]):
    item: T
    reason: str


@dataclass
class Coordinator(Generic[T]):
    """``spawn(index)`` creates a worker actor; ``submit(actor, item)``
    starts a game on it (an object ref); ``key(item)`` names a game."""

    spawn: Callable[[int], Any]
    submit: Callable[[Any, T], Any]
    key: Callable[[T], str]
    workers: int
    slots: int
    """Games each worker plays at once (``parallel``)."""
    notice: Callable[[str], None]
    log: Any
    stall: float = STALL
    pool: list[Worker] = field(default_factory=list)
    lost: dict[str, int] = field(default_factory=dict)
    """Attempts lost with their worker, by game."""
    failed: list[Failed[T]] = field(default_factory=list)
    _retry: list[T] = field(default_factory=list)
    _started: int = 0

    def _start_worker(self) -> None:
        actor = self.spawn(self._started)
        self.pool.append(Worker(self._started, actor, actor.ready.remote()))
        self._started += 1

    def _next(self, next_item: Callable[[], T | None]) -> T | None:
        return self._retry.pop(0) if self._retry else next_item()

    def _fill(self, next_item: Callable[[], T | None]) -> bool:
        """Hand games to idle slots; whether any game is left or under way."""
        left = True
        for w in self.pool:
            while w.info is not None and len(w.running) < self.slots:
                item = self._next(next_item)
                if item is None:
                    left = False
                    break
                w.running[self.submit(w.actor, item)] = item
        return left or any(w.running for w in self.pool)

    async def run(
        self,
        next_item: Callable[[], T | None],
        done: Callable[[T, GameRecord, Worker], None],
        finished: Callable[[], bool] = lambda: False,
    ) -> None:
        """Play until ``next_item`` has nothing more and every game has
        ended (or ``finished()``); the workers are stopped at the end."""
        try:
            for _ in range(self.workers):
                self._start_worker()
            ready_since = time.monotonic()
            while not finished() and self._fill(next_item):
                refs = [w.ready_ref for w in self.pool if w.info is None]
                refs += [r for w in self.pool for r in w.running]
                if not refs:
                    raise WorkerStartError("no Ray worker is left to play the games")
                ready = await trio.to_thread.run_sync(_wait, refs, abandon_on_cancel=True)
                for ref in ready:
                    self._arrived(ref, done)
                if any(w.info is not None for w in self.pool):
                    ready_since = time.monotonic()
                elif time.monotonic() - ready_since > self.stall:
                    raise WorkerStartError(
                        f"no Ray worker has been ready for {self.stall:g} s: the cluster has "
                        "no room for one (see ray status), or its nodes are gone"
                    )
        finally:
            for w in self.pool:
                _kill(w.actor)

    def _arrived(self, ref: Any, done: Callable[[T, GameRecord, Worker], None]) -> None:
        # refs are matched by value, never by identity: under Ray Client (ray://)
        # ray.wait returns new reference objects for the same objects
        worker = next((w for w in self.pool if ref == w.ready_ref or ref in w.running), None)
        if worker is None:
            return  # a game of a worker already lost: played again elsewhere
        if ref == worker.ready_ref:
            try:
                info = ray.get(ref)
            except RayError as e:
                self._lose(worker, first_line(e))
                return
            if "error" in info:
                raise WorkerStartError(f"{worker.label}: {info['error']}")
            worker.info = info
            self.log.info("worker_ready", worker=worker.index, **info)
            return
        item = worker.running.pop(ref)
        try:
            record = ray.get(ref)
        except RayActorError as e:  # the worker's process or node died
            worker.running[ref] = item
            self._lose(worker, first_line(e))
            return
        except RayTaskError as e:  # the game broke on a live worker
            if isinstance(getattr(e, "cause", None), WorkerStopped):
                # its referee stopped, as a local run's would (an entrant that cannot
                # be kept running): the tournament stops with the reason, as it would
                # locally, rather than charging the cluster with its games
                raise WorkerStartError(f"{worker.label}: {e.cause}") from None
            self._again(item, f"{worker.label}: {first_line(e)}")
            return
        done(item, record, worker)

    def _again(self, item: T, reason: str) -> None:
        """Play ``item`` again elsewhere, or give it up after MAX_ATTEMPTS."""
        key = self.key(item)
        self.lost[key] = self.lost.get(key, 0) + 1
        self.log.warning("game_lost", game_id=key, attempts=self.lost[key], reason=reason)
        if self.lost[key] >= MAX_ATTEMPTS:
            self.failed.append(Failed(item, reason))
        else:
            self._retry.append(item)

    def _lose(self, worker: Worker, reason: str) -> None:
        """A worker died: its games are played again, and it is replaced."""
        self.pool.remove(worker)
        _kill(worker.actor)
        games = list(worker.running.values())
        for item in games:
            self._again(item, f"{worker.label} was lost ({reason})")
        self.notice(
            f"{worker.label} was lost ({reason}): a fault of the cluster, not of a bot; "
            f"its {len(games)} game(s) under way are played again from their deals"
        )
        if self._started < 3 * self.workers + 2:  # a worker that keeps dying is not replaced
            self._start_worker()


def _wait(refs: list[Any]) -> list[Any]:
    """The refs ready within a second (every one ready now)."""
    ready, rest = ray.wait(refs, num_returns=1, timeout=1.0)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    return list(ready)


def _kill(actor: Any) -> None:
    with contextlib.suppress(RayError, ValueError):  # already gone
        ray.kill(actor, no_restart=True)
