"""Who plays a tournament's games: the executors, a table of module paths
(:data:`EXECUTORS`, loaded only when chosen, as the CLI's verbs are), and
what every executor is handed (:class:`TournamentRun`).

``local`` (the default, :mod:`.runner`) plays them through one referee of
its own and ``parallel`` instances of every command entrant. ``ray``
(:mod:`wizard_referee.cluster.tournament_play`, the optional extra
``wizard-arena[ray]``) hands them to warm workers on a Ray cluster, each
running the local runner's machinery. Either way the coordinator alone
writes the results store, once per game, as each record arrives
(:meth:`TournamentRun.saved`).

An executor's module provides ``problems(config) -> list[str]`` (what keeps
it from running this tournament, checked before anything is created) and
``async play_tournament(run)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, TextIO, cast

import trio

from wizard_arena.extras import MissingExtraError
from wizard_referee.hosting.host import OnArena
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import beside_store
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import EXECUTORS, TournamentError
from wizard_referee.tournament.dispatch import Progress, show_progress
from wizard_referee.tournament.store import GameSpec, ResultsStore

__all__ = ["EXECUTORS", "RAY_EXTRA", "Executor", "TournamentRun", "load_executor", "log_dir"]

RAY_EXTRA = "pip install 'wizard-arena[ray]'"


class Executor(Protocol):
    def problems(self, config: TournamentConfig) -> list[str]: ...

    def play_tournament(self, run: TournamentRun) -> Awaitable[None]: ...


def load_executor(name: str) -> Executor:
    """The executor's module; TournamentError (one line naming the extra)
    when it needs a package that is not installed."""
    try:
        module: ModuleType = importlib.import_module(EXECUTORS[name])
    except MissingExtraError as e:
        if e.extra != "ray":
            raise
        raise TournamentError(
            f'executor "{name}" needs Ray, an optional extra: {RAY_EXTRA}'
        ) from None
    return cast(Executor, module)


def log_dir(config: TournamentConfig) -> Path:
    """The folder of the tournament's logs: ``DATABASE.logs`` beside an
    SQLite file, ``DBNAME.logs`` in the current folder for PostgreSQL."""
    return beside_store(config.database, ".logs")


@dataclass
class TournamentRun:
    """A tournament's pending games and where their results go."""

    config: TournamentConfig
    secret: str
    """The secret of the bots' per-game seeds (the stored one)."""
    store: ResultsStore
    pending: list[GameSpec]
    total: int
    log: Any
    progress_stream: TextIO | None
    on_record: Callable[[GameRecord], None] | None
    on_arena: OnArena | None = None
    """Awaited once the local executor's referee serves (``--web``)."""
    progress: Progress = field(init=False)

    def __post_init__(self) -> None:
        self.progress = Progress(self.total, self.total - len(self.pending))
        self.progress.done_at_start = self.progress.done

    def notice(self, line: str) -> None:
        """A line for the user (on the progress stream), e.g. a bot restarted."""
        stream = self.progress_stream
        if stream is not None:
            stream.write(("\n" if stream.isatty() else "") + line + "\n")
            stream.flush()

    def saved(self, spec: GameSpec, record: GameRecord) -> None:
        """Store a game's record (once: the store refuses a finished game
        again), count it and pass it on."""
        self.store.save_game(spec, record)
        self.progress.count(spec, record, self.log)
        if self.on_record is not None:
            self.on_record(record)

    async def play(self, executor: Executor, progress_interval: float) -> None:
        """Run ``executor`` on the pending games, with the progress line."""
        async with trio.open_nursery() as nursery:
            if self.progress_stream is not None:
                self.progress.load(self.store)
                nursery.start_soon(
                    show_progress, self.progress, self.progress_stream, progress_interval
                )
            await executor.play_tournament(self)
            nursery.cancel_scope.cancel()
        if self.progress_stream is not None:
            self.progress_stream.write(self.progress.line() + "\n")
            self.progress_stream.flush()
