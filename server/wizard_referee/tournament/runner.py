"""Round-robin tournaments with duplicate deals, a crash-safe results store
and a leaderboard with ratings: :func:`run_tournament`.

A tournament is planned once, deterministically (:mod:`.plan`), and every
planned game is stored as ``pending``; the runner plays the pending games,
each written with its seat results in one transaction when it ends.
``resume`` continues from the database: finished games are never replayed
or counted twice, unfinished ones are replayed from their deal.

Entrants are either commands that the runner starts as subprocesses (they
connect over gRPC with a token the runner gives them: ``{server}``,
``{token}`` and ``{name}`` in the command are replaced, and the environment
has ``WIZARD_ARENA_SERVER``, ``WIZARD_ARENA_TOKEN`` and ``WIZARD_ARENA_NAME``)
or external bots that connect by themselves with their configured token.
The server accepts only those tokens, so no one else can take an entrant's
seat. Each command entrant is started ``parallel`` times so that it can sit
at several tables at once.

The parts: :mod:`.config` (the configuration), :mod:`.plan` (the game plan
in the store), the hosting room (:mod:`wizard_referee.hosting`: the referee,
starting and supervising the entrants' processes), :mod:`.dispatch` (seating
the games on the entrants' sessions), :mod:`.leaderboard` (ratings and statistics);
this module runs them together. The names most callers need are re-exported
here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from wizard_referee.hosting.confine import sandbox_problems, unconfined_note
from wizard_referee.hosting.entrants import preflight, relabel_crashes
from wizard_referee.hosting.host import OnArena, open_host
from wizard_referee.referee.listen import listen_problem
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import shown
from wizard_referee.tournament.cli_errors import TOURNAMENT_FIXES, runner_error
from wizard_referee.tournament.config import EntrantConfig, TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError, listed, plan_differences
from wizard_referee.tournament.dispatch import Progress, schedule
from wizard_referee.tournament.executors import TournamentRun, load_executor, log_dir
from wizard_referee.tournament.leaderboard import (
    Leaderboard,
    LeaderboardRow,
    format_leaderboard,
    leaderboard,
    leaderboard_csv,
)
from wizard_referee.tournament.plan import bot_seed_secret, open_plan, plan_games
from wizard_referee.tournament.seating import resolve_seating
from wizard_referee.tournament.store import ResultsStore, StoreError, start_problem

__all__ = [
    "EntrantConfig",
    "Leaderboard",
    "LeaderboardRow",
    "Progress",
    "TournamentConfig",
    "TournamentError",
    "format_leaderboard",
    "leaderboard",
    "leaderboard_csv",
    "log_dir",
    "plan_differences",
    "plan_games",
    "play_tournament",
    "relabel_crashes",
    "run_tournament",
]


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    progress_stream: TextIO | None = None,
    progress_interval: float = 2.0,
    on_record: Callable[[GameRecord], None] | None = None,
    on_arena: OnArena | None = None,
    results_note: str | None = None,
) -> ResultsStore:
    """Plan (or resume) and play the tournament; return the open results store.
    The first line on ``progress_stream`` says where the results go (the
    database and the logs' folder, or ``results_note``).

    Checked before anything is created: the database (new, or a tournament
    with the same plan for ``resume``) and that every entrant command can
    start (:func:`~wizard_referee.hosting.entrants.preflight`), and confined
    (``sandbox = "bwrap"``: :func:`~wizard_referee.hosting.confine.sandbox_problems`).
    A new database in which no game was played is removed again when the run
    fails, so the same command can be run again once the problem is fixed."""
    log = get_logger(tournament=config.name)
    try:
        problem = start_problem(config.database, resume=resume, what="tournament")
    except StoreError as e:
        raise TournamentError(str(e)) from None
    if problem is not None:
        raise TournamentError(problem)
    executor = load_executor(config.executor)
    hosting = config.hosting()
    problems = sandbox_problems(hosting, here=config.executor == "local") or preflight(
        config.entrants, config.workdir
    )
    problems += executor.problems(config)
    if config.port and config.executor == "local":
        busy = listen_problem(config.host, config.port, *TOURNAMENT_FIXES)
        problems += [busy] if busy else []
    if problems:
        raise TournamentError(listed(problems))
    try:
        store = ResultsStore(config.database, create=not resume, new=not resume)
    except StoreError as e:
        raise TournamentError(str(e)) from None
    try:
        config = replace(config, seating=resolve_seating(config.seating, store.tournament_config()))
        specs = plan_games(config)
        open_plan(store, config, specs)
        secret = bot_seed_secret(config, store)
        pending = store.unfinished()
        total = len(specs)
        log.info("tournament", games=total, pending=len(pending), resume=resume)
        if progress_stream is not None:
            left = f"{len(pending)} of {total} games left" if resume else f"{total} games"
            where = shown(config.database)
            kept = results_note or f"results in {where}, logs in {log_dir(config)}/"
            progress_stream.write(f"{config.name}: {left}; {kept}\n")
            note = unconfined_note(hosting)
            if note:
                progress_stream.write(note + "\n")
            progress_stream.flush()
        if pending:
            run = TournamentRun(
                config, secret, store, pending, total, log, progress_stream, on_record, on_arena
            )
            try:
                await run.play(executor, progress_interval)
            except BaseExceptionGroup as group:
                raise runner_error(group, config.host, config.port) from None
    except BaseException:
        if resume:  # (a stored tournament: kept)
            store.close()
        elif store.close_and_remove_if_unplayed():  # nothing to resume: run it again
            prune_empty(log_dir(config))
        raise
    return store


def prune_empty(folder: Path) -> None:
    """Remove ``folder`` and the folders in it when they hold no file (the
    logs' folder of a run that could not start: a Ray worker makes its own
    before it knows whether it can play); any file keeps it."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for sub in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if sub.is_dir() and not sub.is_symlink():
            with contextlib.suppress(OSError):
                sub.rmdir()  # only an empty one goes
    with contextlib.suppress(OSError):
        folder.rmdir()


async def play_tournament(run: TournamentRun) -> None:
    """The ``local`` executor: one referee of our own and ``parallel``
    instances of every command entrant, games seated as their entrants are
    free (:mod:`.dispatch`)."""
    config = run.config
    async with open_host(
        config.hosting(), run.secret, log_dir(config), run.log, run.notice, on_arena=run.on_arena
    ) as host:
        await schedule(host, run.pending, run.saved, config.name)


def problems(config: TournamentConfig) -> list[str]:
    """The local executor runs every tournament."""
    return []
