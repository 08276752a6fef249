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

import contextlib
import math
import os
import secrets
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

import trio

from wizard_arena.cli.rules_options import rules_from_mapping
from wizard_arena.protocol.seeds import new_secret
from wizard_arena.rules import BidRestriction, Rules
from wizard_referee.ratings import models as rating_lib
from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.policy import PolicyError, RefereePolicy
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.schedule import round_robin, seat_rotations
from wizard_referee.tournament.store import GameSpec, ResultsStore

__all__ = [
    "EntrantConfig",
    "LeaderboardRow",
    "TournamentConfig",
    "TournamentError",
    "leaderboard",
    "plan_games",
    "run_tournament",
]


class TournamentError(Exception):
    """A tournament that cannot be run as configured (the message says why)."""


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
        return rules_from_mapping(vars(self))

    @property
    def policy(self) -> RefereePolicy:
        """How the referee treats the entrants (raises PolicyError for a
        setting that cannot be; :meth:`validate` turns that into a TournamentError)."""
        return RefereePolicy.from_mapping(vars(self))

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
        section = dict(data.get("tournament", {}))
        unknown = set(data) - {"tournament", "entrant"}
        if unknown:
            raise TournamentError(f"unknown section(s): {', '.join(sorted(unknown))}")
        fields = {f for f in cls.__dataclass_fields__ if f != "entrants"}
        bad = set(section) - fields
        if bad:
            raise TournamentError(
                f"unknown [tournament] key(s): {', '.join(sorted(bad))} "
                f"(known: {', '.join(sorted(fields))})"
            )
        section.update({k: v for k, v in overrides.items() if v is not None})
        sizes = section.get("round_sizes")
        if sizes is not None:
            if not isinstance(sizes, list | tuple) or not all(type(x) is int for x in sizes):
                raise TournamentError(
                    f"round_sizes must be a list of whole numbers, e.g. [2, 4, 6], not {sizes!r}"
                )
            section["round_sizes"] = tuple(sizes)
        if base is not None and "database" in section:
            db = Path(section["database"])
            section["database"] = str(db if db.is_absolute() else base / db)
        if base is not None:
            section.setdefault("workdir", str(base))
        entrants = []
        for i, e in enumerate(data.get("entrant", [])):
            if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not e["name"]:
                raise TournamentError(f"entrant #{i + 1} needs a name")
            extra = set(e) - {"name", "command", "token"}
            if extra:
                raise TournamentError(f"entrant {e['name']!r}: unknown key(s) {sorted(extra)}")
            command = e.get("command")
            if isinstance(command, str):
                command = shlex.split(command)
            if command is not None and (
                not isinstance(command, list)
                or not command
                or not all(isinstance(c, str) for c in command)
            ):
                raise TournamentError(f"entrant {e['name']!r}: command must be a string or list")
            token = e.get("token")
            if command is None and not token:
                raise TournamentError(
                    f"entrant {e['name']!r} needs a command, or a token for an external bot"
                )
            entrants.append(EntrantConfig(e["name"], tuple(command) if command else None, token))
        try:
            config = cls(entrants=tuple(entrants), **section)
        except TypeError as e:
            raise TournamentError(str(e)) from None
        config.validate()
        return config

    def validate(self) -> None:
        names = [e.name for e in self.entrants]
        if len(set(names)) != len(names):
            raise TournamentError("entrant names must be unique")
        if not 3 <= self.players <= 6:
            raise TournamentError(f"players (table size) must be 3..6, not {self.players}")
        if len(self.entrants) < self.players:
            raise TournamentError(
                f"{len(self.entrants)} entrants cannot fill a table of {self.players}"
            )
        if self.deal_sets < 1 or self.parallel < 1:
            raise TournamentError("deal_sets and parallel must be >= 1")
        try:
            self.policy  # noqa: B018  (RefereePolicy validates its own settings)
        except PolicyError as e:
            raise TournamentError(str(e)) from None
        if self.bot_seed_secret is not None and (
            not isinstance(self.bot_seed_secret, str) or not self.bot_seed_secret
        ):
            raise TournamentError("bot_seed_secret must be a non-empty string (or left out)")
        try:
            BidRestriction(self.bid_restriction)
        except ValueError:
            raise TournamentError(f"unknown bid_restriction {self.bid_restriction!r}") from None
        try:
            self.rules  # noqa: B018  (the core refuses combinations that cannot work)
        except ValueError as e:
            raise TournamentError(f"rules: {e}") from None


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
# Leaderboard


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    name: str
    rating: float
    low: float | None
    high: float | None
    games: int
    mean_points: float
    tables_won: float
    """Share of games ranked first (a tie for first counts 1/k)."""
    bid_accuracy: float
    """Share of rounds where bid = tricks."""
    timeouts: int
    illegal: int
    faulted_games: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Leaderboard:
    rows: tuple[LeaderboardRow, ...]
    method: str
    games: int
    notes: tuple[str, ...] = ()
    provisional: bool = False


def leaderboard(
    store: ResultsStore,
    *,
    method: str = "bt",
    bootstrap: int = 1000,
    seed: int = 0,
    exclude_faulted: bool = False,
) -> Leaderboard:
    """Ratings and statistics of every entrant from the finished games."""
    stats: dict[str, dict[str, float]] = {}
    results: list[rating_lib.GameResult] = []
    games = 0
    for spec, seats, faulted in store.finished_games():
        games += 1
        winners = [s for s in seats if s.rank == 1]
        for s in seats:
            st = stats.setdefault(
                s.entrant,
                {
                    "games": 0,
                    "points": 0,
                    "won": 0.0,
                    "rounds": 0,
                    "exact": 0,
                    "timeouts": 0,
                    "illegal": 0,
                    "faulted": 0,
                },
            )
            st["games"] += 1
            st["points"] += s.total
            if s.rank == 1:
                st["won"] += 1 / len(winners)
            st["rounds"] += len(s.bids)
            st["exact"] += sum(1 for b, t in zip(s.bids, s.tricks, strict=True) if b == t)
            st["timeouts"] += s.faults.get("timeout", 0)
            st["illegal"] += s.faults.get("illegal", 0)
            st["faulted"] += 1 if s.faults else 0
        if exclude_faulted and faulted:
            continue
        results.append(
            rating_lib.GameResult(
                tuple(s.entrant for s in seats),
                tuple(s.total for s in seats),
                spec.duplicate_set,
            )
        )
    if method == "elo":
        rated = rating_lib.elo(results)
    else:
        rated = rating_lib.bradley_terry(results, bootstrap=bootstrap, seed=seed)
    by_name = rated.by_name()
    rows = []
    for name, st in stats.items():
        r = by_name.get(name)
        rows.append(
            (
                r.rating if r else math.nan,
                name,
                r.low if r else None,
                r.high if r else None,
                st,
            )
        )
    rows.sort(key=lambda x: (-(x[0] if not math.isnan(x[0]) else -1e9), x[1]))
    out = []
    for i, (rating, name, low, high, st) in enumerate(rows):
        out.append(
            LeaderboardRow(
                rank=i + 1,
                name=name,
                rating=rating,
                low=low,
                high=high,
                games=int(st["games"]),
                mean_points=st["points"] / st["games"],
                tables_won=st["won"] / st["games"],
                bid_accuracy=st["exact"] / st["rounds"] if st["rounds"] else 0.0,
                timeouts=int(st["timeouts"]),
                illegal=int(st["illegal"]),
                faulted_games=int(st["faulted"]),
            )
        )
    notes = list(rated.notes)
    if exclude_faulted:
        notes.append("games with faults are kept out of the ratings")
    return Leaderboard(tuple(out), rated.method, games, tuple(notes), rated.provisional)


def format_leaderboard(board: Leaderboard, header: str = "") -> str:
    lines = []
    if header:
        lines.append(header)
    label = "Elo (provisional)" if board.method == "elo" else "rating (95% interval)"
    lines.append(
        f"{'rank':>4}  {'bot':<20} {label:<26} {'games':>5} {'mean pts':>8} "
        f"{'won':>6} {'bid acc':>7} {'timeouts':>8} {'illegal':>7}"
    )
    for r in board.rows:
        if r.low is not None and r.high is not None:
            rating = f"{r.rating:7.1f} ({r.low:.0f}-{r.high:.0f})"
        else:
            rating = f"{r.rating:7.1f}"
        lines.append(
            f"{r.rank:>4}  {r.name:<20} {rating:<26} {r.games:>5} {r.mean_points:>8.1f} "
            f"{r.tables_won:>6.1%} {r.bid_accuracy:>7.1%} {r.timeouts:>8} {r.illegal:>7}"
        )
    for note in board.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def leaderboard_csv(board: Leaderboard) -> str:
    import csv
    import io

    buf = io.StringIO()
    fields = list(LeaderboardRow.__dataclass_fields__)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in board.rows:
        w.writerow(r.as_dict())
    return buf.getvalue()


# ---------------------------------------------------------------------------
# Running


@dataclass
class _Instance:
    entrant: EntrantConfig
    index: int
    token: str
    restarts: int = 0
    log_path: Path | None = None
    proc: Any = None
    """The running process (a subprocess.Popen), once started."""


@dataclass
class Progress:
    total: int
    done: int = 0
    done_at_start: int = 0
    started: float = field(default_factory=time.monotonic)
    leader: str = ""

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


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    progress_stream: TextIO | None = None,
    progress_interval: float = 2.0,
    on_record: Callable[[GameRecord], None] | None = None,
) -> ResultsStore:
    """Plan (or resume) and play the tournament; return the open results store."""
    log = get_logger(tournament=config.name)
    db_path = Path(config.database)
    exists = db_path.exists()
    if exists and not resume:
        raise TournamentError(f"{db_path} exists: use --resume to continue it, or another path")
    if resume and not exists:
        raise TournamentError(f"{db_path} does not exist: nothing to resume")
    store = ResultsStore(db_path)
    try:
        stored = store.tournament_config()
        specs = plan_games(config)
        if stored is None:
            entrant_rows = [
                (e.name, e.kind, shlex.join(e.command) if e.command else None)
                for e in config.entrants
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
        elif stored.get("plan") != config.plan_key():
            raise TournamentError(
                "the configuration does not match the stored tournament "
                f"(stored plan {stored.get('plan')}, given {config.plan_key()})"
            )
        secret = _bot_seed_secret(config, store)
        pending = store.unfinished()
        total = len(specs)
        log.info("tournament", games=total, pending=len(pending), resume=resume)
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
                # trio's nurseries wrap errors in groups: surface the runner's own
                # error (an entrant that did not connect or cannot start) as itself
                cause: BaseException = group
                while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
                    cause = cause.exceptions[0]
                if isinstance(cause, TournamentError):
                    raise cause from None
                raise
    except BaseException:
        store.close()
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
    instances: list[_Instance] = []
    token_owner: dict[str, str] = {}
    for e in config.entrants:
        if e.command is None:
            assert e.token is not None
            token_owner[e.token] = e.name
        else:
            for i in range(config.parallel):
                tok = secrets.token_hex(16)  # hex: never starts with "-"
                instances.append(_Instance(e, i, tok))
                token_owner[tok] = e.name
    pool: dict[str, list[Session]] = {e.name: [] for e in config.entrants}
    progress = Progress(total, total - len(pending), total - len(pending))
    log_dir = Path(str(config.database) + ".logs")
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
    async with trio.open_nursery() as nursery:
        arena: Arena = await nursery.start(serve_arena, arena_config)

        def on_session(s: Session) -> None:
            owner = token_owner.get(s.hello.token)
            if owner is not None:
                pool[owner].append(s)

        arena.on_session.append(on_session)
        if instances:
            log_dir.mkdir(parents=True, exist_ok=True)
        spawner = _Spawner()
        for inst in instances:
            inst.log_path = log_dir / f"{inst.entrant.name}-{inst.index}.log"
            nursery.start_soon(_supervise, inst, arena.address, spawner, config.workdir, log)
        await _await_entrants(config, arena, pool, log_dir, token_owner)
        launched = {inst.token: inst for inst in instances}
        if progress_stream is not None:
            nursery.start_soon(_show_progress, progress, store, progress_stream, progress_interval)
        try:
            await _schedule(config, arena, store, pending, pool, progress, log, on_record, launched)
        finally:
            nursery.cancel_scope.cancel()
    spawner.close()
    if progress_stream is not None:
        progress_stream.write(progress.line() + "\n")
        progress_stream.flush()


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, get SIGTERM when the thread that
    started it ends. The runner starts every bot from one spawner thread that
    lives as long as the tournament, so no bot outlives its runner, even one
    killed with SIGKILL."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


class _Spawner:
    """Starts subprocesses from one long-lived thread (see _die_with_parent)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot-spawner")

    async def spawn(
        self, cmd: list[str], env: dict[str, str], out: IO[bytes], cwd: str = ""
    ) -> subprocess.Popen[bytes]:
        future = self._pool.submit(
            subprocess.Popen,
            cmd,
            cwd=cwd or None,
            env=env,
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        return await trio.to_thread.run_sync(future.result)

    def close(self) -> None:
        self._pool.shutdown(wait=False)


async def _supervise(
    inst: _Instance, address: str, spawner: _Spawner, workdir: str, log: Any
) -> None:
    """Run one instance of a command entrant; restart it if it exits (crash)."""
    assert inst.entrant.command is not None and inst.log_path is not None
    subst = {"{server}": address, "{token}": inst.token, "{name}": inst.entrant.name}
    cmd = []
    for part in inst.entrant.command:
        for k, v in subst.items():
            part = part.replace(k, v)
        cmd.append(part)
    env = dict(
        os.environ,
        WIZARD_ARENA_SERVER=address,
        WIZARD_ARENA_TOKEN=inst.token,
        WIZARD_ARENA_NAME=inst.entrant.name,
    )
    while True:
        with open(inst.log_path, "ab") as out:
            try:
                proc = inst.proc = await spawner.spawn(cmd, env, out, workdir)
            except OSError as e:
                log.error("entrant_start_failed", entrant=inst.entrant.name, error=str(e))
                raise TournamentError(
                    f"entrant {inst.entrant.name!r}: cannot start {cmd[0]!r}: {e}"
                ) from None
            try:
                while proc.poll() is None:
                    await trio.sleep(0.1)
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    with trio.CancelScope(shield=True), trio.move_on_after(3):
                        while proc.poll() is None:
                            await trio.sleep(0.05)
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
        inst.restarts += 1
        log.warning(
            "entrant_exited",
            entrant=inst.entrant.name,
            instance=inst.index,
            returncode=proc.returncode,
            restarts=inst.restarts,
            log=str(inst.log_path),
        )
        if inst.restarts > 5:
            log.error("entrant_gave_up", entrant=inst.entrant.name, instance=inst.index)
            return
        await trio.sleep(min(0.5 * inst.restarts, 3.0))


async def _await_entrants(
    config: TournamentConfig,
    arena: Arena,
    pool: dict[str, list[Session]],
    log_dir: Path,
    token_owner: dict[str, str],
) -> None:
    """Wait until every entrant has a session. An entrant refused for its rule
    options can never join: that ends the wait at once, with the reason."""

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


async def _settle_exits(
    record: GameRecord, insts: Sequence[_Instance | None], exits: Sequence[int]
) -> None:
    """A launched bot's process that dropped its connection may still be
    exiting when its game ends (its socket closes before it is reaped): give
    it a moment, so that :func:`relabel_crashes` sees it has exited."""
    for seat, (inst, before) in enumerate(zip(insts, exits, strict=True)):
        if inst is None or "disconnect" not in record.faults[seat]:
            continue
        with trio.move_on_after(_EXIT_SETTLE):
            while inst.restarts == before and inst.proc is not None and inst.proc.poll() is None:
                await trio.sleep(0.02)


#: Seconds to wait for a launched bot that disconnected to be seen exiting.
_EXIT_SETTLE = 2.0


def relabel_crashes(record: GameRecord, insts: Sequence[Any], exits: Sequence[int]) -> None:
    """A seat played by a bot process the runner launched, faulted
    ``disconnect`` while that process exited during the game (it was
    restarted since the game began, or is not running now): the fault is
    recorded as ``crash`` instead (in the record; the bots' GameOver said
    ``disconnect``)."""
    for seat, (inst, before) in enumerate(zip(insts, exits, strict=True)):
        if inst is None or "disconnect" not in record.faults[seat]:
            continue
        proc = inst.proc
        if inst.restarts == before and (proc is None or proc.poll() is None):
            continue
        faults, details = record.faults[seat], record.fault_details[seat]
        faults["crash"] = faults.get("crash", 0) + faults.pop("disconnect")
        detail = details.pop("disconnect", "")
        details.setdefault("crash", f"the bot's process exited ({detail})" if detail else "")
        for rnd in record.rounds:
            for mv in rnd.moves:
                if mv.seat == seat and mv.fault == "disconnect":
                    mv.fault = "crash"


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
            await _settle_exits(record, insts, exits)
            relabel_crashes(record, insts, exits)
            store.save_game(spec, record)
            if record.status == "finished":
                progress.done += 1
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


async def _show_progress(
    progress: Progress, store: ResultsStore, stream: TextIO, interval: float
) -> None:
    tty = stream.isatty()
    while True:
        await trio.sleep(interval)
        with contextlib.suppress(Exception):
            board = leaderboard(store, method="elo")
            progress.leader = board.rows[0].name if board.rows else ""
        stream.write(("\r" if tty else "") + progress.line() + ("" if tty else "\n"))
        stream.flush()


def default_progress_stream() -> TextIO:
    return sys.stderr
