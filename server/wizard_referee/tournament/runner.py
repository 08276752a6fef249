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
in the store), :mod:`.entrants` and :mod:`.launcher` (starting and
supervising the entrants' processes), :mod:`.seating` (seating the games on
the entrants' sessions), :mod:`.leaderboard` (ratings and statistics);
this module runs them together. The names most callers need are re-exported
here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import trio

from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.listen import listen_problem
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.cli_errors import TOURNAMENT_FIXES, runner_error
from wizard_referee.tournament.config import EntrantConfig, TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError, listed, plan_differences
from wizard_referee.tournament.dispatch import Progress, await_entrants, schedule, show_progress
from wizard_referee.tournament.entrants import Instance as _Instance  # noqa: F401 (tests)
from wizard_referee.tournament.entrants import (
    make_instances,
    preflight,
    relabel_crashes,
    supervise,
)
from wizard_referee.tournament.launcher import open_launcher
from wizard_referee.tournament.leaderboard import (
    Leaderboard,
    LeaderboardRow,
    format_leaderboard,
    leaderboard,
    leaderboard_csv,
)
from wizard_referee.tournament.plan import bot_seed_secret, open_plan, plan_games
from wizard_referee.tournament.seating import resolve_seating
from wizard_referee.tournament.store import GameSpec, ResultsStore, StoreError

__all__ = [
    "EntrantConfig",
    "Leaderboard",
    "LeaderboardRow",
    "TournamentConfig",
    "TournamentError",
    "format_leaderboard",
    "leaderboard",
    "leaderboard_csv",
    "log_dir",
    "plan_differences",
    "plan_games",
    "relabel_crashes",
    "run_tournament",
]


OnArena = Callable[[Arena, trio.Nursery], Awaitable[None]]
"""Awaited once the tournament's referee serves (``tournament --web``)."""


def log_dir(config: TournamentConfig) -> Path:
    """The folder of the tournament's logs: ``DATABASE.logs``."""
    return Path(str(config.database) + ".logs")


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    progress_stream: TextIO | None = None,
    progress_interval: float = 2.0,
    on_record: Callable[[GameRecord], None] | None = None,
    on_arena: OnArena | None = None,
) -> ResultsStore:
    """Plan (or resume) and play the tournament; return the open results store.

    Checked before anything is created: the database (new, or a tournament
    with the same plan for ``resume``) and that every entrant command can
    start (:func:`.entrants.preflight`). A new database in which no game was
    played is removed again when the run fails, so the same command can be
    run again once the problem is fixed."""
    log = get_logger(tournament=config.name)
    db_path = Path(config.database)
    exists = db_path.exists()
    if exists and not resume:
        raise TournamentError(
            f"{db_path} exists: continue that tournament with --resume, "
            "or give another database (--database PATH)"
        )
    if resume and not exists:
        raise TournamentError(f"{db_path} does not exist: nothing to resume")
    problems = preflight(config.entrants, config.workdir)
    if config.port:
        busy = listen_problem(config.host, config.port, *TOURNAMENT_FIXES)
        problems += [busy] if busy else []
    if problems:
        raise TournamentError(listed(problems))
    try:
        store = ResultsStore(db_path, create=not resume)
    except StoreError as e:
        raise TournamentError(str(e)) from None
    try:
        config = replace(config, seating=resolve_seating(config.seating, store.tournament_config()))
        config = replace(config, seating=resolve_seating(config.seating, store.tournament_config()))
        specs = plan_games(config)
        open_plan(store, config, specs)
        secret = bot_seed_secret(config, store)
        pending = store.unfinished()
        total = len(specs)
        log.info("tournament", games=total, pending=len(pending), resume=resume)
        if progress_stream is not None:
            left = f"{len(pending)} of {total} games left" if resume else f"{total} games"
            progress_stream.write(
                f"{config.name}: {left}; results in {db_path}, logs in {log_dir(config)}/\n"
            )
            progress_stream.flush()
        if pending:
            try:
                await _play(
                    config,
                    secret,
                    store,
                    pending,
                    total,
                    log,
                    progress_stream,
                    progress_interval,
                    on_record,
                    on_arena,
                )
            except BaseExceptionGroup as group:
                raise runner_error(group, config.host, config.port) from None
    except BaseException:
        if exists:
            store.close()
        else:
            store.close_and_remove_if_unplayed()  # nothing to resume: run it again
        raise
    return store


async def _play(
    config: TournamentConfig,
    bot_seed_secret: str,
    store: ResultsStore,
    pending: list[GameSpec],
    total: int,
    log: Any,
    progress_stream: TextIO | None,
    progress_interval: float,
    on_record: Callable[[GameRecord], None] | None,
    on_arena: OnArena | None = None,
) -> None:
    instances, token_owner = make_instances(config.entrants, config.parallel)
    launched = {inst.token: inst for inst in instances}
    pool: dict[str, list[Session]] = {e.name: [] for e in config.entrants}
    progress = Progress(total, total - len(pending), total - len(pending))
    logs = log_dir(config)
    arena_config = ArenaConfig(
        host=config.host,
        port=config.port,
        rules=config.rules,
        policy=config.policy,
        tokens=frozenset(token_owner),
        matchmaking=False,
        keep_records=1,  # the results store keeps every game
        bot_seed_secret=bot_seed_secret,
    )
    # the launcher first: it must start before gRPC runs here (see .launcher)
    async with open_launcher() as launcher, trio.open_nursery() as nursery:
        arena: Arena = await nursery.start(serve_arena, arena_config)
        if on_arena is not None:
            await on_arena(arena, nursery)

        def on_session(s: Session) -> None:
            owner = token_owner.get(s.hello.token)
            if owner is not None:
                pool[owner].append(s)
            inst = launched.get(s.hello.token)
            if inst is not None:
                inst.connected = True

        def refused(token: str) -> bool:
            return token in arena.refused_options

        arena.on_session.append(on_session)
        if instances:
            logs.mkdir(parents=True, exist_ok=True)
        def notice(line: str) -> None:
            if progress_stream is not None:
                progress_stream.write(("\n" if progress_stream.isatty() else "") + line + "\n")
                progress_stream.flush()

        for inst in instances:
            inst.log_path = logs / f"{inst.entrant.name}-{inst.index}.log"
            nursery.start_soon(
                supervise, inst, arena.address, launcher, config.workdir, log, refused, notice
            )
        await await_entrants(config, arena, pool, logs, token_owner)
        if progress_stream is not None:
            progress.load(store)
            nursery.start_soon(show_progress, progress, progress_stream, progress_interval)
        try:
            await schedule(config, arena, store, pending, pool, progress, log, on_record, launched)
        finally:
            nursery.cancel_scope.cancel()
    if progress_stream is not None:
        progress_stream.write(progress.line() + "\n")
        progress_stream.flush()


