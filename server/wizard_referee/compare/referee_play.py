"""A comparison's games over the referee, on the hosting room's host
(:func:`wizard_referee.hosting.host.open_host`): a referee of its own,
every bot an entrant started by the launcher (``parallel`` instances each,
restarted when they crash), the games played with a tournament's
deadlines and fault handling. A bot given as a Python class runs as
``python -m wizard_arena.cli bot MODULE:CLASS --server {server}``, its token
in its environment (``WIZARD_ARENA_TOKEN``).
The logs are in ``DATABASE.logs/``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import trio

from wizard_referee.compare.comparison import CompareError, Comparison, Progress
from wizard_referee.compare.plan import BotSpec, ComparePlan
from wizard_referee.hosting.config import EntrantConfig, HostConfig, HostError
from wizard_referee.hosting.confine import sandbox_problems
from wizard_referee.hosting.entrants import preflight
from wizard_referee.hosting.host import GameHost, open_host
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.sandbox import OUTPUT_LIMIT, Limits
from wizard_referee.storage import beside_store

__all__ = ["REMEDY", "Confining", "bot_command", "host_config", "play_over_referee", "problems"]

#: What else a user can do about a bot that cannot start (compare has no file).
REMEDY = "compare another bot"


def bot_command(bot: BotSpec) -> tuple[str, ...]:
    """The command line that runs ``bot`` as an entrant.

    >>> from wizard_referee.compare.plan import parse_bot
    >>> bot_command(parse_bot("wizard_bots.montecarlo:MonteCarloBot(samples=4)"))[3:]
    ('bot', 'wizard_bots.montecarlo:MonteCarloBot', '--server', '{server}', '--name', \
'{name}', '--quiet', '--arg', 'samples=4')
    """
    if bot.command is not None:
        return bot.command
    assert bot.target is not None
    cmd = [sys.executable, "-m", "wizard_arena.cli", "bot", bot.target]
    # the token in the environment ($WIZARD_ARENA_TOKEN), never argv ('ps' shows argv)
    cmd += ["--server", "{server}", "--name", "{name}", "--quiet"]
    for key, value in bot.kwargs.items():
        cmd += ["--arg", f"{key}={value!r}"]
    return tuple(cmd)


@dataclass(frozen=True)
class Confining:
    """How a comparison's bots run (``--sandbox``, the limits, ``--folder``)."""

    sandbox: str = "none"
    limits: Limits = field(default_factory=Limits)
    folders: Mapping[str, str] = field(default_factory=dict)
    """A bot's own folder by its name (``A``, ``B``, an opponent's): where it
    runs, and what it sees of the files when confined; none: the current
    folder (confined: none, it runs in its ``/tmp``)."""
    database: str = "compare.sqlite"
    """The results store (no confined bot's folder may hold it)."""
    output_limit: int = OUTPUT_LIMIT
    """Bytes of output each start of a bot keeps in its log (``--output-limit``)."""


def host_config(
    plan: ComparePlan, parallel: int, move_time: float, confining: Confining | None = None
) -> HostConfig:
    """The host's settings for the comparison's games: its bots as
    command entrants (each in its ``--folder``, confined with ``--sandbox
    bwrap``), its rules, the deadline, in the current folder."""
    how = confining or Confining()
    bots = (plan.a, plan.b, *plan.opponents)
    lim = how.limits
    entrants = tuple(
        EntrantConfig(
            name,
            bot_command(bot),
            folder=how.folders.get(name, ""),
            memory_limit=lim.memory,
            max_processes=lim.processes,
            cpu_limit=lim.cpus,
        )
        for name, bot in zip(plan.names, bots, strict=True)
    )
    return HostConfig(
        entrants,
        rules=plan.rules,
        policy=RefereePolicy(move_time=move_time),
        parallel=parallel,
        workdir=os.getcwd(),
        sandbox=how.sandbox,
        private=how.database,
        output_limit=how.output_limit,
    )


def problems(plan: ComparePlan, confining: Confining | None = None) -> list[str]:
    """Why a bot's command could not start, or could not start confined (a
    ``--folder`` that does not exist or holds the database, bubblewrap
    missing, ...), checked before the comparison's database is created."""
    config = host_config(plan, 1, 1.0, confining)
    found = sandbox_problems(config) or preflight(config.entrants, os.getcwd(), REMEDY)
    return [in_compare_words(x) for x in found]


def in_compare_words(line: str) -> str:
    """A host's message in compare's words (flags, not keys).

    >>> in_compare_words('sandbox = "bwrap" needs bubblewrap, or set sandbox = "none"')
    '--sandbox bwrap needs bubblewrap, or leave out --sandbox'
    """
    for key, flag in (
        ('or set sandbox = "none"', "or leave out --sandbox"),
        ('sandbox = "bwrap"', "--sandbox bwrap"),
        ("entrant '", "bot '"),
        ("memory_limit", "--memory-limit"),
        ("max_processes", "--max-processes"),
    ):
        line = line.replace(key, flag)
    return line


async def play_over_referee(
    comparison: Comparison,
    parallel: int,
    progress: Progress,
    *,
    move_time: float = 1.0,
    confining: Confining | None = None,
) -> None:
    """Play the comparison's games on the host until it is done."""
    plan = comparison.plan
    config = host_config(plan, parallel, move_time, confining)
    logs = beside_store(comparison.store.target, ".logs")
    log = get_logger(compare=comparison.store.where)
    try:
        async with (
            open_host(config, plan.secret, logs, log, stop_on_start_failure=True) as host,
            trio.open_nursery() as n,
        ):
            n.start_soon(_ticker, progress)
            async with trio.open_nursery() as games:
                for _ in range(parallel):
                    games.start_soon(_play_games, comparison, host, games.cancel_scope)
            n.cancel_scope.cancel()
    except HostError as e:
        raise CompareError(str(e)) from None
    except BaseExceptionGroup as group:
        raise _first_error(group) from None


async def _play_games(comparison: Comparison, host: GameHost, done: trio.CancelScope) -> None:
    """Play the comparison's next game, in plan order, until there is none."""
    while True:
        game = comparison.next_game()
        if game is None:
            if comparison.done:
                done.cancel()
            return
        record = await host.play(game.spec, game.tags, game.bot_seeds)
        comparison.add(game, record)
        if comparison.done:
            done.cancel()
            return


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
