"""Seating a tournament's games: waiting for every entrant to connect, then
starting each pending game as soon as a free session of each of its seats'
entrants is there (``parallel`` games at once), saving each game's record
as it ends, and the progress line."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import trio

from wizard_referee.ratings.models import EloState
from wizard_referee.referee.arena import Arena, Session
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError
from wizard_referee.tournament.entrants import Instance, relabel_crashes, settle_exits
from wizard_referee.tournament.store import GameSpec, ResultsStore

__all__ = ["Progress", "await_entrants", "schedule", "show_progress"]


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


async def await_entrants(
    config: TournamentConfig,
    arena: Arena,
    pool: dict[str, list[Session]],
    log_dir: Path,
    token_owner: dict[str, str],
) -> None:
    """Wait until every entrant has a session. An entrant refused for its rule
    options can never join: that ends the wait at once, with the reason (as
    does a launched entrant that cannot start: its supervisor raises)."""

    def missing() -> list[str]:
        return [name for name, sessions in pool.items() if not any(s.alive for s in sessions)]

    def refused() -> dict[str, str]:
        return {
            token_owner[tok]: reason
            for tok, reason in arena.refused_options.items()
            if tok in token_owner and token_owner[tok] in missing()
        }

    with trio.move_on_after(config.connect_timeout):
        while missing() and not refused():
            await arena.wait_for_change()
    why = refused()
    if why:
        reasons = "; ".join(f"entrant {name} was {reason}" for name, reason in why.items())
        raise TournamentError(
            f"{reasons}: this tournament plays {config.rules.describe()} "
            f"(see the logs in {log_dir})"
        )
    if missing():
        raise TournamentError(
            f"entrant(s) {', '.join(missing())} did not connect within "
            f"{config.connect_timeout:g} s (see the logs in {log_dir})"
        )


def _free_session(sessions: list[Session]) -> Session | None:
    sessions[:] = [s for s in sessions if s.alive]
    for s in sessions:
        if not s.busy:
            return s
    return None


async def schedule(
    config: TournamentConfig,
    arena: Arena,
    store: ResultsStore,
    pending: list[GameSpec],
    pool: dict[str, list[Session]],
    progress: Progress,
    log: Any,
    on_record: Callable[[GameRecord], None] | None,
    launched: dict[str, Instance] | None = None,
) -> None:
    """Play the ``pending`` games, each as soon as its seats' entrants have a
    free session (an entrant with no live session is waited for up to
    ``connect_timeout``, then its seat plays without it), at most
    ``config.parallel`` at once; returns when all have ended."""
    seating = _Seating(config, arena, store, pool, progress, log, on_record, launched or {})
    queue = list(pending)
    async with trio.open_nursery() as nursery:
        while queue or seating.running:
            started = seating.running < config.parallel and seating.start_ready(queue, nursery)
            if not started:
                with trio.move_on_after(1.0):
                    await arena.wait_for_change()


@dataclass
class _Seating:
    config: TournamentConfig
    arena: Arena
    store: ResultsStore
    pool: dict[str, list[Session]]
    progress: Progress
    log: Any
    on_record: Callable[[GameRecord], None] | None
    launched: dict[str, Instance]
    running: int = 0
    absent_since: dict[str, float] = field(default_factory=dict)
    """When each entrant without a live session was first missed."""

    def start_ready(self, queue: list[GameSpec], nursery: trio.Nursery) -> bool:
        """Start the queued games whose seats can be filled now, in queue
        order, up to ``parallel`` running; whether any started."""
        started = False
        for spec in list(queue):
            seats = self.seats_for(spec)
            if seats is None:
                continue
            for s in seats:
                if s is not None:
                    s.busy = True
            queue.remove(spec)
            self.running += 1
            started = True
            nursery.start_soon(self.play, spec, seats)
            if self.running >= self.config.parallel:
                break
        return started

    def seats_for(self, spec: GameSpec) -> list[Session | None] | None:
        """A free session for each seat of ``spec`` (``None`` for an entrant
        missed for longer than ``connect_timeout``), or ``None``: wait."""
        seats: list[Session | None] = []
        for name in spec.seats:
            s = _free_session(self.pool[name])
            if s is None:
                if any(x.alive for x in self.pool[name]):
                    return None  # busy elsewhere: wait for it
                # no live session: wait a while for a restart, then play without
                since = self.absent_since.setdefault(name, trio.current_time())
                if trio.current_time() - since < self.config.connect_timeout:
                    return None
            else:
                self.absent_since.pop(name, None)
            seats.append(s)
        return seats

    async def play(self, spec: GameSpec, seats: list[Session | None]) -> None:
        insts = [self.launched.get(s.hello.token) if s is not None else None for s in seats]
        exits = [i.restarts if i is not None else 0 for i in insts]
        try:
            record = await self.arena.play_game(
                seats,
                names=spec.seats,
                game_id=spec.id,
                seed=spec.seed,
                tags={
                    "table": spec.table_idx,
                    "deal_set": spec.deal_set,
                    "rotation": spec.rotation,
                    "duplicate_set": spec.duplicate_set,
                    "tournament": self.config.name,
                },
            )
            await settle_exits(record, insts, exits)
            relabel_crashes(record, insts, exits)
            self.store.save_game(spec, record)
            if record.status == "finished":
                self.progress.done += 1
                self.progress.elo.add(spec.seats, record.totals)
            else:
                self.log.error("game_aborted", game_id=spec.id, error=record.error)
            if self.on_record is not None:
                self.on_record(record)
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
