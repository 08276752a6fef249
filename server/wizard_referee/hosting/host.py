"""The machinery that plays games, whoever hands them out: a referee of its
own, every command entrant started (``parallel`` instances each, through the
launcher, restarted when they crash) and their sessions.

:func:`open_host` runs it for the duration of a block, from a
:class:`~.config.HostConfig`. A tournament's local runner seats its pending
games on it; a cluster worker (:mod:`wizard_referee.cluster`) runs one per
worker and plays the games the coordinator hands it with
:meth:`GameHost.play`, as a comparison over the referee does; the ladder
opens it ``open_ended``, with the access tokens of its registry, and
launches and stops its hosted entrants' instances as they are registered
and retired (:meth:`GameHost.launch`, :meth:`GameHost.stop`).
:func:`run_game` is the one way a planned game is played on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import trio

from wizard_referee.hosting.config import HostConfig, HostError
from wizard_referee.hosting.confine import (
    SOCKET_NAME,
    confined_address,
    confinement_for,
    instance_gpus,
)
from wizard_referee.hosting.entrants import (
    EntrantStartError,
    Instance,
    log_name,
    make_instances,
    relabel_absent,
    relabel_crashes,
    settle_exits,
    supervise,
)
from wizard_referee.hosting.launcher import Launcher, open_launcher
from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.handshake import AccessTokens
from wizard_referee.referee.logs import private_folder
from wizard_referee.referee.record import GameRecord
from wizard_referee.sandbox import SandboxError, sweep

__all__ = [
    "GameHost",
    "HostedGame",
    "OnArena",
    "Planned",
    "arena_config",
    "bot_game_id",
    "open_host",
    "run_game",
]

OnArena = Callable[[Arena, trio.Nursery], Awaitable[None]]
"""Awaited once a host's referee serves (``tournament --web`` starts the pages)."""


class Planned(Protocol):
    """What the host needs of a game to play it: a tournament's or a
    comparison's planned game, a ladder's :class:`HostedGame`."""

    @property
    def id(self) -> str: ...
    @property
    def seed(self) -> str:
        """The deal's seed."""
        ...

    @property
    def seats(self) -> tuple[str, ...]:
        """The entrant in each seat, by name."""
        ...


class HostedGame(NamedTuple):
    """A game for the host (a ladder's, or any caller's without a plan of its own)."""

    id: str
    seed: str
    seats: tuple[str, ...]


def arena_config(
    config: HostConfig, tokens: AccessTokens, secret: str, *, port: int | None = None
) -> ArenaConfig:
    """The referee of a host's games (``port``: another than the config's)."""
    return ArenaConfig(
        host=config.host,
        port=config.port if port is None else port,
        rules=config.rules,
        policy=config.policy,
        tokens=tokens,
        matchmaking=False,
        keep_records=1,  # the results store keeps every game
        bot_seed_secret=secret,
    )


def bot_game_id(secret: str | bytes, game_id: str) -> str:
    """The id the bots of planned game ``game_id`` are told: an HMAC of it
    under the tournament's secret, the same on every run (``--resume``, a
    cluster worker) and naming neither the deal nor the rotation, which a bot
    could otherwise tell its other games of the same deal by. The record
    keeps it in its tags (``bot_game_id``)."""
    key = secret.encode() if isinstance(secret, str) else secret
    digest = hmac.new(key, b"game id\0" + game_id.encode(), hashlib.sha256).hexdigest()
    return "g-" + digest[:20]


async def run_game(
    arena: Arena,
    launched: dict[str, Instance],
    spec: Planned,
    seats: Sequence[Session | None],
    tags: dict[str, Any],
    bot_seeds: Sequence[int] | None = None,
    down: Mapping[str, str] | None = None,
) -> GameRecord:
    """Play ``spec`` on ``seats`` (marked busy by the caller; the arena frees
    them), a crashed launched bot's fault recorded as ``crash``, as is the
    seat of an entrant that runs no more (``down``: why, by name)."""
    insts = [launched.get(s.hello.token) if s is not None else None for s in seats]
    exits = [i.restarts if i is not None else 0 for i in insts]
    told = bot_game_id(arena.bot_seed_secret, spec.id)
    record = await arena.play_game(
        list(seats),
        names=spec.seats,
        game_id=spec.id,
        seed=spec.seed,
        tags={**tags, "bot_game_id": told},
        bot_seeds=bot_seeds,
        bot_game_id=told,
    )
    await settle_exits(record, insts, exits)
    relabel_crashes(record, insts, exits)
    if down:
        absent = [name if s is None else "" for name, s in zip(spec.seats, seats, strict=True)]
        relabel_absent(record, absent, down)
    return record


def free_session(sessions: list[Session]) -> Session | None:
    """A live session not in a game (dead ones are dropped from the list)."""
    sessions[:] = [s for s in sessions if s.alive]
    for s in sessions:
        if not s.busy:
            return s
    return None


@dataclass
class GameHost:
    """A running referee with the entrants' sessions (see :func:`open_host`)."""

    config: HostConfig
    arena: Arena
    pool: dict[str, list[Session]]
    launched: dict[str, Instance]
    logs: Path
    absent_since: dict[str, float] = field(default_factory=dict)
    """When each entrant without a live session was first missed."""
    token_owner: dict[str, str] = field(default_factory=dict)
    """The entrant (its key in ``pool``) of each token the host knows: its
    command instances' and its external bots'."""
    socket_dir: Path | None = None
    """The folder of the referee's Unix socket, the one confined entrants
    reach (None: none runs confined)."""
    launcher: Launcher | None = field(default=None, repr=False)
    """The launcher of the entrants' processes (it may start others: a
    process started here must never be forked from a gRPC process)."""
    down: dict[str, str] = field(default_factory=dict)
    """The entrants none of whose instances runs any more (each never
    connected, or crashed past its restarts), with why: their seats are
    played by the default action at once, recorded as ``crash``."""
    _start: Callable[[Instance, Callable[[EntrantStartError], None] | None], None] | None = field(
        default=None, repr=False
    )

    def launch(
        self,
        inst: Instance,
        owner: str,
        contain: Callable[[EntrantStartError], None] | None = None,
    ) -> None:
        """Start (and supervise) one more command instance, its sessions
        going to ``pool[owner]`` (its confinement, if any, set by the
        caller with :attr:`socket_dir`). An instance that cannot start
        stops the host, unless ``contain`` takes its error."""
        assert self._start is not None
        self.launched[inst.token] = inst
        self.token_owner[inst.token] = owner
        self.pool.setdefault(owner, [])
        self._start(inst, contain)

    def stop(self, inst: Instance) -> None:
        """Stop an instance :meth:`launch` started (SIGTERM, then SIGKILL);
        its token is refused from now on."""
        if inst.scope is not None:
            inst.scope.cancel()
        self.token_owner.pop(inst.token, None)

    def seats_for(self, names: Sequence[str]) -> list[Session | None] | None:
        """A free session for each of ``names`` (``None`` for an entrant
        missed for longer than ``connect_timeout``: the default policy plays
        its seat), or ``None``: wait."""
        seats: list[Session | None] = []
        for name in names:
            s = free_session(self.pool[name])
            if s is None:
                if any(x.alive for x in self.pool[name]):
                    return None  # busy elsewhere: wait for it
                if name in self.down:
                    seats.append(None)  # it runs no more: nothing to wait for
                    continue
                # no live session: wait a while for a restart, then play without
                since = self.absent_since.setdefault(name, trio.current_time())
                if trio.current_time() - since < self.config.connect_timeout:
                    return None
            else:
                self.absent_since.pop(name, None)
            seats.append(s)
        return seats

    async def play(
        self, spec: Planned, tags: dict[str, Any], bot_seeds: Sequence[int] | None = None
    ) -> GameRecord:
        """Play ``spec`` as soon as its seats' entrants have a free session
        (``bot_seeds``: each seat's ``GameStarted.bot_seed``, else derived
        by the arena from its secret and the game id)."""
        while True:
            seats = self.seats_for(spec.seats)
            if seats is not None:
                break
            with trio.move_on_after(1.0):
                await self.arena.wait_for_change()
        for s in seats:
            if s is not None:
                s.busy = True
        return await run_game(
            self.arena, self.launched, spec, seats, tags, bot_seeds, down=self.down
        )

    def ended(self, inst: Instance) -> None:
        """An instance runs no more (:attr:`Instance.down` says why): once
        none of its entrant's does, the entrant is :attr:`down`."""
        name = self.token_owner.get(inst.token, inst.entrant.name)
        mine = [i for t, i in self.launched.items() if self.token_owner.get(t) == name]
        if inst.down is not None and all(i.down is not None for i in mine):
            self.down[name] = inst.down
            self.arena.notify()  # games waiting for its seats go on


@contextlib.asynccontextmanager
async def open_host(
    config: HostConfig,
    secret: str,
    logs: Path,
    log: Any,
    notice: Callable[[str], None] | None = None,
    *,
    port: int | None = None,
    on_arena: OnArena | None = None,
    tokens: AccessTokens | None = None,
    open_ended: bool = False,
    stop_on_start_failure: bool = False,
) -> AsyncIterator[GameHost]:
    """Start the launcher, the referee and every command entrant's
    ``config.parallel`` instances (their logs in ``logs``); yield once every
    entrant has a session (HostError when one cannot join); stop them
    all at the end of the block.

    ``open_ended`` (a ladder): the entrants come later (:meth:`GameHost.launch`),
    so nothing is waited for, and the Unix socket of confined entrants is
    served from the start under ``sandbox = "bwrap"``; ``tokens`` are the
    access tokens the referee accepts (default: the entrants' own).

    An instance that cannot start (it never connects) is its entrant's
    fault alone: ``notice`` is told why, with the last lines of its log, and
    once none of the entrant's instances runs its seats are played by the
    default action (:attr:`GameHost.down`); ``stop_on_start_failure``: it
    stops the host instead (EntrantStartError)."""
    instances, token_owner = make_instances(config.entrants, config.parallel)
    launched = {inst.token: inst for inst in instances}
    pool: dict[str, list[Session]] = {e.name: [] for e in config.entrants}
    accepted = frozenset(token_owner) if tokens is None else tokens
    settings = arena_config(config, accepted, secret, port=port)
    confined = config.sandbox == "bwrap" and (bool(instances) or open_ended)
    # the launcher first: it must start before gRPC runs here (see .launcher)
    with _socket_folder(confined) as socket_dir:
        if socket_dir is not None:  # confined entrants reach the referee there only
            settings = replace(settings, unix_socket=str(socket_dir / SOCKET_NAME))
            try:
                gpus = instance_gpus([inst.entrant.num_gpus for inst in instances])
            except ValueError as e:
                raise HostError(f"the entrants' GPUs (num_gpus): {e}") from None
            for inst, own in zip(instances, gpus, strict=True):
                inst.confinement = confinement_for(config.entrants, inst.entrant, socket_dir, own)
        async with open_launcher() as launcher, trio.open_nursery() as nursery:
            arena: Arena = await nursery.start(serve_arena, settings)
            if on_arena is not None:
                await on_arena(arena, nursery)

            def on_session(s: Session) -> None:
                owner = host.token_owner.get(s.hello.token)
                if owner is not None:
                    pool[owner].append(s)
                inst = launched.get(s.hello.token)
                if inst is not None:
                    inst.connected = True

            def refused(token: str) -> bool:
                return token in arena.refused_options

            def start(inst: Instance, contain: Callable[[EntrantStartError], None] | None) -> None:
                private_folder(logs)
                inst.log_path = logs / log_name(inst.entrant.name, inst.index)
                address = confined_address() if inst.confinement is not None else arena.address
                inst.scope = trio.CancelScope()
                run = partial(
                    supervise, inst, address, launcher, config.workdir, log, refused, notice,
                    config.output_limit,
                )  # fmt: skip
                nursery.start_soon(_supervised, inst, run, contain, host.ended)

            def fault(inst: Instance, e: EntrantStartError) -> None:
                inst.down = e.fault
                log.error("entrant_down", entrant=inst.entrant.name, fault=e.fault)
                if notice is not None:
                    notice(
                        f"{e}\n  its seats are played by the referee's default action, "
                        "recorded as the fault 'crash'; the other games go on"
                    )

            host = GameHost(
                config, arena, pool, launched, logs, token_owner=token_owner,
                socket_dir=socket_dir, launcher=launcher, _start=start,
            )  # fmt: skip
            arena.on_session.append(on_session)
            for inst in instances:
                start(inst, None if stop_on_start_failure else partial(fault, inst))
            if not open_ended:
                await await_entrants(config, arena, pool, logs, token_owner, host.down)
            try:
                yield host
            finally:
                nursery.cancel_scope.cancel()


async def _supervised(
    inst: Instance,
    supervision: Callable[[], Awaitable[None]],
    contain: Callable[[EntrantStartError], None] | None,
    ended: Callable[[Instance], None],
) -> None:
    """``supervision`` (:func:`.entrants.supervise` of ``inst``) within the
    instance's cancel scope (:meth:`GameHost.stop`); an error it cannot
    start with goes to ``contain`` if given (else it stops the host);
    ``ended`` is told when the instance runs no more (:attr:`Instance.down`)."""
    assert inst.scope is not None
    with inst.scope:
        try:
            await supervision()
        except EntrantStartError as e:
            if contain is None:
                raise
            contain(e)
    if inst.down is not None:
        ended(inst)


@contextlib.contextmanager
def _socket_folder(confined: bool) -> Iterator[Path | None]:
    """A folder of its own for the referee's Unix socket (confined entrants
    see it read-only), removed at the end; ``None`` when none is confined.
    The cgroups a runner killed with SIGKILL left are removed first."""
    if not confined:
        yield None
        return
    with contextlib.suppress(SandboxError, OSError):
        sweep()  # the empty cgroups of a runner killed with SIGKILL
    folder = Path(tempfile.mkdtemp(prefix="wizard-arena-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def await_entrants(
    config: HostConfig,
    arena: Arena,
    pool: dict[str, list[Session]],
    log_dir: Path,
    token_owner: dict[str, str],
    down: Mapping[str, str] | None = None,
) -> None:
    """Wait until every entrant has a session, or is ``down`` (none of its
    instances could start). An entrant refused for its rule options can
    never join: that ends the wait at once, with the reason."""

    def missing() -> list[str]:
        return [
            name
            for name, sessions in pool.items()
            if not any(s.alive for s in sessions) and name not in (down or {})
        ]

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
        raise HostError(
            f"{reasons}: the games are played with {config.rules.describe()} "
            f"(see the logs in {log_dir})"
        )
    if missing():
        raise HostError(
            f"entrant(s) {', '.join(missing())} did not connect within "
            f"{config.connect_timeout:g} s (see the logs in {log_dir})"
        )
