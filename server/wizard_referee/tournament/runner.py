"""Round-robin tournaments with duplicate deals, a crash-safe results store
and a leaderboard with ratings.

A tournament is planned once, deterministically from its configuration and
seed: the tables (:mod:`.schedule`), for each table ``deal_sets`` deals, and
for each deal one game per seat rotation, so every entrant holds every hand
of the deal. Every planned game has a fixed id and deal seed and is stored
as ``pending``; the runner plays the pending games, each written with its
seat results in one transaction when it ends. ``resume`` continues from the
database: finished games are never replayed or counted twice, unfinished
ones are replayed from their deal.

Entrants are either commands that the runner starts as subprocesses (they
connect over gRPC with a token the runner gives them: ``{server}``,
``{token}`` and ``{name}`` in the command are replaced, and the environment
has ``WIZARD_ARENA_SERVER``, ``WIZARD_ARENA_TOKEN`` and ``WIZARD_ARENA_NAME``)
or external bots that connect by themselves with their configured token.
The server accepts only those tokens, so no one else can take an entrant's
seat. Each command entrant is started ``parallel`` times so that it can sit
at several tables at once.
"""

from __future__ import annotations

import shlex
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import trio

from wizard_arena.protocol.seeds import new_secret
from wizard_arena.rules import BidRestriction, Rules
from wizard_referee.ratings.models import EloState
from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.listen import listen_problem
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.cli_errors import TOURNAMENT_FIXES, runner_error
from wizard_referee.tournament.config_keys import (
    TOURNAMENT_KEYS,
    TournamentError,
    entrant_problems,
    listed,
    plan_differences,
    section_problems,
)
from wizard_referee.tournament.entrants import Instance as _Instance
from wizard_referee.tournament.entrants import (
    make_instances,
    preflight,
    relabel_crashes,
    settle_exits,
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
from wizard_referee.tournament.schedule import round_robin, seat_rotations
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


@dataclass(frozen=True)
class EntrantConfig:
    name: str
    command: tuple[str, ...] | None = None
    """Command line started by the runner (``None`` for an external bot)."""
    token: str | None = None
    """An external bot's access token (command entrants get a fresh one)."""

    @property
    def kind(self) -> str:
        return "command" if self.command is not None else "external"


@dataclass(frozen=True)
class TournamentConfig:
    entrants: tuple[EntrantConfig, ...]
    name: str = "tournament"
    players: int = 4
    """Table size, 3 to 6."""
    deal_sets: int = 1
    """Deals per table; each is played once per seat rotation."""
    move_time: float = 1.0
    bid_restriction: str = "none"
    seed: int = 1
    parallel: int = 1
    """Tables played at once."""
    database: str = "tournament.sqlite"
    host: str = "127.0.0.1"
    port: int = 0
    max_tables: int = 200
    """Use every k-subset of entrants when there are at most this many."""
    connect_timeout: float = 60.0
    exclude_faulted: bool = False
    """Keep games in which any seat was faulted out of the ratings."""
    workdir: str = ""
    """Folder entrant commands run in (the TOML file's folder; default: the current one)."""
    hidden_bids: bool = False
    """Rule variant: everyone bids at once; the bids are revealed together."""
    blind_first_round: bool = False
    """Rule variant: round 1, each player sees the others' cards, not their own."""
    maximus: bool = False
    """Rule variant: Wizard Maximus (five rounds of all cards, trump C D H S none)."""
    tricksy: bool = False
    """Rule variant: whoever plays a Wizard names the trump from the next trick on."""
    lowest_score_deals: bool = False
    """Rule variant: from round 2 the player with the fewest points deals."""
    round_sizes: tuple[int, ...] | None = None
    """Rule variant: a short game dealing these numbers of cards, round by round."""
    tricksy_suited: bool = False
    """Rule variant: Tricksy Wizard with suited Wizards (a Wizard's suit is trump at once)."""
    reveal_bids_after_tricks: bool = False
    """Rule variant, with hidden_bids: the bids are revealed after the round's tricks."""
    first_dealer_by_draw: bool = False
    """Rule variant: the first dealer is drawn (highest card; drawn from each game's deal seed)."""
    reconnect_window: float = 30.0
    """Seconds a bot whose connection dropped may take its seat back (0: never)."""
    time_bank: float = 0.0
    """Seconds per seat and game a decision may run past move_time (0: none)."""
    max_connections: int = 0
    """Open bot streams at most on the tournament's referee (0: no limit)."""
    max_sessions_per_token: int = 0
    """Connected sessions at most per entrant token (0: no limit)."""
    max_message_bytes: int = 64 * 1024
    """Largest message a bot may send."""
    fault_policy: str = "default"
    """What a fault costs: ``default``, ``forfeit_round`` or ``remove`` (docs/protocol.md)."""
    max_faults: int = 3
    """Faults in one game after which fault policy ``remove`` removes the seat."""
    bot_seed_secret: str | None = None
    """The secret of the bots' per-game seeds (``GameStarted.bot_seed``,
    :mod:`wizard_arena.protocol.seeds`). ``None``: a random one, drawn when the
    tournament is created and kept in its database, so ``--resume`` uses it
    again. Give one only to make a tournament reproducible from its file (a
    bot that learns it can predict the others' seeds, never the deals)."""

    @property
    def rules(self) -> Rules:
        """The rules of every game (raises ValueError for options that cannot
        be combined; :meth:`validate` turns that into a TournamentError)."""
        return Rules(
            players=self.players,
            bid_restriction=BidRestriction(self.bid_restriction),
            hidden_bids=self.hidden_bids,
            blind_first_round=self.blind_first_round,
            maximus=self.maximus,
            tricksy=self.tricksy,
            lowest_score_deals=self.lowest_score_deals,
            hand_sizes=self.round_sizes,
            tricksy_suited=self.tricksy_suited,
            reveal_bids_after_tricks=self.reveal_bids_after_tricks,
            first_dealer_by_draw=self.first_dealer_by_draw,
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["entrants"] = [
            {
                "name": e.name,
                "command": list(e.command) if e.command else None,
                "external": e.command is None,
            }
            for e in self.entrants
        ]  # tokens are secrets: never stored
        del d["bot_seed_secret"]  # stored apart, drawn when not given
        return d

    def plan_key(self) -> dict[str, Any]:
        """What the game plan depends on (must match to resume). The rule
        variants in force are part of it (absent when not in force, so a
        tournament of the base game stored before variants existed resumes)."""
        key: dict[str, Any] = {
            "entrants": [e.name for e in self.entrants],
            "players": self.players,
            "deal_sets": self.deal_sets,
            "seed": self.seed,
            "bid_restriction": self.bid_restriction,
            "max_tables": self.max_tables,
        }
        rules = self.rules.to_dict()
        for name in self.rules.options:
            key[name] = rules[name]
        return key

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> TournamentConfig:
        """Read a TOML file (section ``[tournament]`` and ``[[entrant]]`` tables);
        ``overrides`` (not None) replace file values. Relative paths in the
        file are relative to the file's folder."""
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise TournamentError(f"{p}: cannot read: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise TournamentError(f"{p}: not valid TOML: {e}") from None
        return cls.from_dict(data, base=p.parent, **overrides)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], base: Path | None = None, **overrides: Any
    ) -> TournamentConfig:
        """The configuration of a parsed file; ``overrides`` (not None) replace
        its ``[tournament]`` values. TournamentError naming every bad key."""
        problems = [
            f"unknown section [{name}] (a file has [tournament] and [[entrant]] tables)"
            for name in sorted(set(data) - {"tournament", "entrant"})
        ]
        section = data.get("tournament", {})
        if not isinstance(section, dict):
            problems.append("[tournament] must be a table")
            section = {}
        section = {**section, **{k: v for k, v in overrides.items() if v is not None}}
        problems += section_problems(section)
        raw_entrants = data.get("entrant", [])
        problems += entrant_problems(raw_entrants)
        if problems:
            raise TournamentError(listed(problems))
        if section.get("round_sizes") is not None:
            section["round_sizes"] = tuple(section["round_sizes"])
        if base is not None and "database" in section:
            db = Path(section["database"])
            section["database"] = str(db if db.is_absolute() else base / db)
        if base is not None:
            section.setdefault("workdir", str(base))
        entrants = []
        for e in raw_entrants:
            command = e.get("command")
            if isinstance(command, str):
                command = shlex.split(command)
            entrants.append(
                EntrantConfig(e["name"], tuple(command) if command else None, e.get("token"))
            )
        config = cls(entrants=tuple(entrants), **section)
        config.validate()
        return config

    def problems(self) -> list[str]:
        """Everything wrong with this configuration (empty: it can be run)."""
        problems = section_problems({k: getattr(self, k) for k in TOURNAMENT_KEYS})
        names = [e.name for e in self.entrants]
        if len(set(names)) != len(names):
            problems.append("entrant names must be unique")
        if problems:
            return problems
        if len(self.entrants) < self.players:
            problems.append(
                f"{len(self.entrants)} entrants cannot fill a table of {self.players} "
                "(add entrants, or set a smaller players)"
            )
        try:
            self.rules  # noqa: B018  (the core refuses combinations that cannot work)
        except ValueError as e:
            problems.append(f"rules: {e}")
        return problems

    def validate(self) -> None:
        """TournamentError listing every problem (see :meth:`problems`)."""
        problems = self.problems()
        if problems:
            raise TournamentError(listed(problems))


def plan_games(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, in play order (deterministic)."""
    names = [e.name for e in config.entrants]
    tables = round_robin(names, config.players, seed=config.seed, max_tables=config.max_tables)
    specs: list[GameSpec] = []
    seq = 0
    for deal in range(config.deal_sets):
        for t, table in enumerate(tables):
            seed = f"{config.seed}:t{t}:d{deal}"
            for r, seating in enumerate(seat_rotations(table)):
                specs.append(GameSpec(f"t{t}-d{deal}-r{r}", seq, t, deal, r, seed, tuple(seating)))
                seq += 1
    return specs


# ---------------------------------------------------------------------------
# Running


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
        specs = plan_games(config)
        _open_plan(store, config, specs)
        secret = _bot_seed_secret(config, store)
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


def _bot_seed_secret(config: TournamentConfig, store: ResultsStore) -> str:
    """The secret of the bots' seeds: the one stored with the tournament (a
    tournament stored without one gets one now). A secret given in the
    configuration must be the stored one."""
    stored = store.tournament_config() or {}
    secret = stored.get("bot_seed_secret")
    if isinstance(secret, str) and secret:
        if config.bot_seed_secret is not None and config.bot_seed_secret != secret:
            raise TournamentError(
                "bot_seed_secret differs from the one stored with the tournament: "
                "leave it out (or give the stored one) to resume"
            )
        return secret
    secret = config.bot_seed_secret or new_secret()
    store.update_config({**stored, "bot_seed_secret": secret})
    return secret


def _open_plan(store: ResultsStore, config: TournamentConfig, specs: list[GameSpec]) -> None:
    """Store a new tournament's plan, or check that a stored one matches."""
    stored = store.tournament_config()
    if stored is None:
        entrant_rows = [
            (e.name, e.kind, shlex.join(e.command) if e.command else None) for e in config.entrants
        ]
        store.create(
            config.name,
            {
                "plan": config.plan_key(),
                "config": config.to_dict(),
                "bot_seed_secret": config.bot_seed_secret or new_secret(),
            },
            entrant_rows,
            specs,
            config.rules.to_dict(),
        )
        return
    differences = plan_differences(stored.get("plan") or {}, config.plan_key())
    if differences:
        raise TournamentError(
            f"the configuration does not match the stored tournament in {store.path} "
            f"({'; '.join(differences)}): resume with the stored values, "
            "or start a new tournament with another database"
        )


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
        move_time=config.move_time,
        tokens=frozenset(token_owner),
        matchmaking=False,
        reconnect_window=config.reconnect_window,
        fault_policy=config.fault_policy,
        max_faults=config.max_faults,
        time_bank=config.time_bank,
        max_connections=config.max_connections,
        max_sessions_per_token=config.max_sessions_per_token,
        max_message_bytes=config.max_message_bytes,
        keep_records=1,  # the results store keeps every game
        bot_seed_secret=bot_seed_secret,
    )
    # the launcher first: it must start before gRPC runs here (see .launcher)
    async with open_launcher() as launcher, trio.open_nursery() as nursery:
        arena: Arena = await nursery.start(serve_arena, arena_config)

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
        for inst in instances:
            inst.log_path = logs / f"{inst.entrant.name}-{inst.index}.log"
            nursery.start_soon(
                supervise, inst, arena.address, launcher, config.workdir, log, refused
            )
        await _await_entrants(config, arena, pool, logs, token_owner)
        if progress_stream is not None:
            progress.load(store)
            nursery.start_soon(_show_progress, progress, progress_stream, progress_interval)
        try:
            await _schedule(config, arena, store, pending, pool, progress, log, on_record, launched)
        finally:
            nursery.cancel_scope.cancel()
    if progress_stream is not None:
        progress_stream.write(progress.line() + "\n")
        progress_stream.flush()


async def _await_entrants(
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


async def _schedule(
    config: TournamentConfig,
    arena: Arena,
    store: ResultsStore,
    pending: list[GameSpec],
    pool: dict[str, list[Session]],
    progress: Progress,
    log: Any,
    on_record: Callable[[GameRecord], None] | None,
    launched: dict[str, _Instance] | None = None,
) -> None:
    queue = list(pending)
    launched = launched or {}
    running = 0
    absent_since: dict[str, float] = {}

    async def play(spec: GameSpec, seats: list[Session | None]) -> None:
        nonlocal running
        insts = [launched.get(s.hello.token) if s is not None else None for s in seats]
        exits = [i.restarts if i is not None else 0 for i in insts]
        try:
            record = await arena.play_game(
                seats,
                names=spec.seats,
                game_id=spec.id,
                seed=spec.seed,
                tags={
                    "table": spec.table_idx,
                    "deal_set": spec.deal_set,
                    "rotation": spec.rotation,
                    "duplicate_set": spec.duplicate_set,
                    "tournament": config.name,
                },
            )
            await settle_exits(record, insts, exits)
            relabel_crashes(record, insts, exits)
            store.save_game(spec, record)
            if record.status == "finished":
                progress.done += 1
                progress.elo.add(spec.seats, record.totals)
            else:
                log.error("game_aborted", game_id=spec.id, error=record.error)
            if on_record is not None:
                on_record(record)
        finally:
            running -= 1

    async with trio.open_nursery() as nursery:
        while queue or running:
            started = False
            if running < config.parallel:
                for spec in list(queue):
                    seats: list[Session | None] = []
                    ok = True
                    for name in spec.seats:
                        s = _free_session(pool[name])
                        if s is None:
                            if any(x.alive for x in pool[name]):
                                ok = False  # busy elsewhere: wait for it
                                break
                            # no live session: wait a while for a restart, then play without
                            since = absent_since.setdefault(name, trio.current_time())
                            if trio.current_time() - since < config.connect_timeout:
                                ok = False
                                break
                        else:
                            absent_since.pop(name, None)
                        seats.append(s)
                    if not ok:
                        continue
                    for s in seats:
                        if s is not None:
                            s.busy = True
                    queue.remove(spec)
                    running += 1
                    started = True
                    nursery.start_soon(play, spec, seats)
                    if running >= config.parallel:
                        break
            if not started:
                with trio.move_on_after(1.0):
                    await arena.wait_for_change()


async def _show_progress(progress: Progress, stream: TextIO, interval: float) -> None:
    tty = stream.isatty()
    while True:
        await trio.sleep(interval)
        stream.write(("\r" if tty else "") + progress.line() + ("" if tty else "\n"))
        stream.flush()
