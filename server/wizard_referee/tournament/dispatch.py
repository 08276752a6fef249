"""Seating a tournament's games on the local runner's host
(:mod:`wizard_referee.hosting.host`):
starting each pending game as soon as a free session of each of its seats'
entrants is there (``parallel`` games at once), saving each game's record
as it ends, and the progress line (shared by every executor)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import trio

from wizard_referee.hosting.host import GameHost, run_game
from wizard_referee.ratings.models import EloState
from wizard_referee.referee.arena import Session
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import GameSpec, ResultsStore, game_tags

__all__ = ["Progress", "schedule", "show_progress"]


@dataclass
class Progress:
    total: int
    done: int = 0
    done_at_start: int = 0
    started: float = field(default_factory=time.monotonic)
    elo: EloState = field(default_factory=EloState)
    """Provisional Elo, updated as each game ends (the leader shown)."""

    @property
    def leader(self) -> str:
        return self.elo.leader()

    def load(self, store: ResultsStore) -> None:
        """Rate the games finished before this run (once, at the start)."""
        for _, seats, _ in store.finished_games():
            self.elo.add([s.entrant for s in seats], [s.total for s in seats])

    def count(self, spec: GameSpec, record: GameRecord, log: Any) -> None:
        """A game just stored: counted (and rated) if it finished."""
        if record.status == "finished":
            self.done += 1
            self.elo.add(spec.seats, record.totals)
        else:
            log.error("game_aborted", game_id=spec.id, error=record.error)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        new = self.done - self.done_at_start
        rate = new / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = f"{left / rate:5.0f}s" if rate > 0 else "    ?"
        return (
            f"games {self.done}/{self.total}  {rate * 60:6.1f}/min  ETA {eta}  "
            f"leader {self.leader or '-'}"
        )


async def schedule(
    host: GameHost,
    pending: list[GameSpec],
    saved: Callable[[GameSpec, GameRecord], None],
    tournament: str,
) -> None:
    """Play the ``pending`` games of ``tournament`` on ``host``, each as soon as its seats'
    entrants have a free session (an entrant with no live session is waited
    for up to ``connect_timeout``, then its seat plays without it), at most
    ``parallel`` at once; each record is handed to ``saved`` as it ends;
    returns when all have ended."""
    seating = _Seating(host, saved, tournament)
    queue = list(pending)
    async with trio.open_nursery() as nursery:
        while queue or seating.running:
            started = seating.running < host.config.parallel and seating.start_ready(queue, nursery)
            if not started:
                with trio.move_on_after(1.0):
                    await host.arena.wait_for_change()


@dataclass
class _Seating:
    host: GameHost
    saved: Callable[[GameSpec, GameRecord], None]
    tournament: str
    running: int = 0

    def start_ready(self, queue: list[GameSpec], nursery: trio.Nursery) -> bool:
        """Start the queued games whose seats can be filled now, in queue
        order, up to ``parallel`` running; whether any started."""
        started = False
        for spec in list(queue):
            seats = self.host.seats_for(spec.seats)
            if seats is None:
                continue
            for s in seats:
                if s is not None:
                    s.busy = True
            queue.remove(spec)
            self.running += 1
            started = True
            nursery.start_soon(self.play, spec, seats)
            if self.running >= self.host.config.parallel:
                break
        return started

    async def play(self, spec: GameSpec, seats: list[Session | None]) -> None:
        host = self.host
        try:
            tags = game_tags(spec, self.tournament)
            record = await run_game(host.arena, host.launched, spec, seats, tags, down=host.down)
            self.saved(spec, record)
        finally:
            self.running -= 1


async def show_progress(progress: Progress, stream: TextIO, interval: float) -> None:
    """The progress line every ``interval`` seconds: rewritten in place on a
    terminal; elsewhere (a log, a pipe) a new line only when it says something new."""
    tty = stream.isatty()
    shown = (-1, "")
    while True:
        await trio.sleep(interval)
        if not tty and (progress.done, progress.leader) == shown:
            continue
        shown = (progress.done, progress.leader)
        stream.write(("\r" if tty else "") + progress.line() + ("" if tty else "\n"))
        stream.flush()
