"""A comparison's games over the referee, with the tournament room's
machinery: every bot is an entrant started by the launcher (``parallel``
instances each, restarted when they crash), connecting with its own token
to an arena that plays the planned games (deadlines and fault handling as
in a tournament). A bot given as a Python class runs as
``python -m wizard_arena.cli bot MODULE:CLASS --server {server} --token {token}``.
The logs are in ``DATABASE.logs/``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from wizard_referee.compare.plan import BotSpec, PlannedGame
from wizard_referee.compare.session import CompareError, Comparison, Progress
from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.tournament.entrants import (
    Instance,
    log_name,
    make_instances,
    preflight,
    relabel_crashes,
    settle_exits,
    supervise,
)
from wizard_referee.tournament.launcher import open_launcher

__all__ = ["EntrantCommand", "bot_command", "play_over_referee"]

#: Seconds to wait for every entrant's first connection, and for a bot
#: that is being restarted.
CONNECT_TIMEOUT = 60.0


@dataclass(frozen=True)
class EntrantCommand:
    """What :func:`~wizard_referee.tournament.entrants.supervise` starts."""

    name: str
    command: tuple[str, ...]
    token: str | None = None


def bot_command(bot: BotSpec) -> tuple[str, ...]:
    """The command line that runs ``bot`` as an entrant.

    >>> from wizard_referee.compare.plan import parse_bot
    >>> bot_command(parse_bot("wizard_bots.montecarlo:MonteCarloBot(samples=4)"))[3:]
    ('bot', 'wizard_bots.montecarlo:MonteCarloBot', '--server', '{server}', '--token', \
'{token}', '--name', '{name}', '--quiet', '--arg', 'samples=4')
    """
    if bot.command is not None:
        return bot.command
    assert bot.target is not None
    cmd = [sys.executable, "-m", "wizard_arena.cli", "bot", bot.target]
    cmd += ["--server", "{server}", "--token", "{token}", "--name", "{name}", "--quiet"]
    for key, value in bot.kwargs.items():
        cmd += ["--arg", f"{key}={value!r}"]
    return tuple(cmd)


async def play_over_referee(
    comparison: Comparison, parallel: int, progress: Progress, *, move_time: float = 1.0
) -> None:
    """Play the comparison's games over a referee of our own until it is done."""
    plan = comparison.plan
    bots = (plan.a, plan.b, *plan.opponents)
    entrants = [
        EntrantCommand(name, bot_command(bot)) for name, bot in zip(plan.names, bots, strict=True)
    ]
    workdir = os.getcwd()
    problems = preflight(entrants, workdir)
    if problems:
        raise CompareError("; ".join(problems))
    instances, token_owner = make_instances(entrants, parallel)
    logs = Path(str(comparison.store.path) + ".logs")
    logs.mkdir(parents=True, exist_ok=True)
    log = get_logger(compare=str(comparison.store.path))
    config = ArenaConfig(
        rules=plan.rules,
        policy=RefereePolicy(move_time=move_time),
        tokens=frozenset(token_owner),
        matchmaking=False,
        keep_records=1,
        bot_seed_secret=plan.secret,
    )
    pool: dict[str, list[Session]] = {e.name: [] for e in entrants}
    launched = {inst.token: inst for inst in instances}
    try:
        async with open_launcher() as launcher, trio.open_nursery() as nursery:
            arena: Arena = await nursery.start(serve_arena, config)

            def on_session(s: Session) -> None:
                owner = token_owner.get(s.hello.token)
                if owner is not None:
                    pool[owner].append(s)
                inst = launched.get(s.hello.token)
                if inst is not None:
                    inst.connected = True

            arena.on_session.append(on_session)
            for inst in instances:
                inst.log_path = logs / log_name(inst.entrant.name, inst.index)
                nursery.start_soon(
                    supervise,
                    inst,
                    arena.address,
                    launcher,
                    workdir,
                    log,
                    arena.refused_options.__contains__,
                )
            await _await_entrants(arena, pool, logs)
            nursery.start_soon(_ticker, progress)
            tables = _Tables(comparison, arena, pool, launched)
            async with trio.open_nursery() as games:
                for _ in range(parallel):
                    games.start_soon(tables.worker, games.cancel_scope)
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise _first_error(group) from None


def _first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    """The error worth reporting from a nursery's group (a start failure, a
    CompareError), as a CompareError with its message."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_error(exc)
        if isinstance(exc, KeyboardInterrupt):
            return exc
        return CompareError(str(exc))
    return CompareError(str(group))


async def _ticker(progress: Progress) -> None:
    while True:
        await trio.sleep(progress.interval)
        progress.tick()


async def _await_entrants(arena: Arena, pool: dict[str, list[Session]], logs: Path) -> None:
    def missing() -> list[str]:
        return [name for name, sessions in pool.items() if not any(s.alive for s in sessions)]

    with trio.move_on_after(CONNECT_TIMEOUT):
        while missing() and not arena.refused_options:
            await arena.wait_for_change()
    if arena.refused_options:
        reasons = "; ".join(sorted(set(arena.refused_options.values())))
        raise CompareError(f"a bot was refused: {reasons} (see the logs in {logs}/)")
    if missing():
        raise CompareError(
            f"{', '.join(missing())} did not connect within {CONNECT_TIMEOUT:g} s "
            f"(see the logs in {logs}/)"
        )


@dataclass
class _Tables:
    comparison: Comparison
    arena: Arena
    pool: dict[str, list[Session]]
    launched: dict[str, Instance]

    async def _session(self, name: str) -> Session:
        """A free connected session of entrant ``name`` (marked busy)."""
        with trio.move_on_after(CONNECT_TIMEOUT):
            while True:
                sessions = self.pool[name]
                sessions[:] = [s for s in sessions if s.alive]
                for s in sessions:
                    if not s.busy:
                        s.busy = True
                        return s
                with trio.move_on_after(1.0):
                    await self.arena.wait_for_change()
        raise CompareError(f"{name} has had no connected bot for {CONNECT_TIMEOUT:g} s")

    async def worker(self, cancel: trio.CancelScope) -> None:
        while True:
            game = self.comparison.next_game()
            if game is None:
                if self.comparison.done:
                    cancel.cancel()
                return
            await self._play(game)
            if self.comparison.done:
                cancel.cancel()
                return

    async def _play(self, game: PlannedGame) -> None:
        seats = [await self._session(name) for name in game.spec.seats]
        insts = [self.launched.get(s.hello.token) for s in seats]
        exits = [i.restarts if i is not None else 0 for i in insts]
        try:
            record = await self.arena.play_game(
                list(seats),
                names=game.spec.seats,
                game_id=game.spec.id,
                seed=game.spec.seed,
                tags=game.tags,
                bot_seeds=game.bot_seeds,
            )
        finally:
            for s in seats:
                s.busy = False
        await settle_exits(record, insts, exits)
        relabel_crashes(record, insts, exits)
        self.comparison.add(game, record)
