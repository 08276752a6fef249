"""The referee server: sessions, the lobby, tables and continuous matchmaking.

trio-style entry points: :func:`serve_arena` runs until cancelled and is
started with ``arena = await nursery.start(serve_arena, config)``; the
caller owns the nursery. The gRPC transport lives in :mod:`.bridge`.

Continuous matchmaking (``ArenaConfig.matchmaking``): as soon as
``rules.players`` greeted bots are waiting, they are seated (first come,
first seated) at a new table; when the game ends, bots still connected wait
again. A tournament runner instead turns matchmaking off and seats chosen
sessions with :meth:`Arena.play_game`.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import hmac
import itertools
import math
import random
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from wizard_arena import __version__
from wizard_arena.protocol.messages import PROTOCOL_VERSIONS, Hello, ServerInfo, Welcome
from wizard_arena.protocol.seeds import new_secret
from wizard_arena.rules import Rules
from wizard_referee.referee.bridge import Bridge, CloseCode, Connection, Malformed, open_bridge
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.record import FAULT_POLICIES, GameRecord, RecordLog
from wizard_referee.referee.table import SeatSpec, run_table

__all__ = ["Arena", "ArenaConfig", "Session", "missing_options", "serve_arena"]


def missing_options(rules: Rules, supported: Sequence[str]) -> list[str]:
    """The options in force under ``rules`` that a bot listing ``supported``
    (its ``Hello.rule_options``) cannot play, in :data:`VARIANT_OPTIONS` order.

    >>> missing_options(Rules(players=3, tricksy=True, maximus=True), ["tricksy"])
    ['maximus']
    """
    have = set(supported)
    return [name for name in rules.options if name not in have]


@dataclass(frozen=True)
class ArenaConfig:
    host: str = "127.0.0.1"
    port: int = 0
    rules: Rules = field(default_factory=lambda: Rules(players=4))
    move_time: float = 1.0
    """Seconds allowed for each decision."""
    tokens: frozenset[str] | None = None
    """Access tokens accepted in Hello; ``None`` admits any bot."""
    hello_timeout: float = 10.0
    inbound_limit: int = 64
    """Messages a bot may have queued unread before it is cut off for flooding."""
    outbound_limit: int = 256
    """Messages waiting for a bot that does not read (gRPC's flow-control
    window for its stream is full) before its stream ends with
    RESOURCE_EXHAUSTED."""
    max_consecutive_timeouts: int = 10
    """Decisions in a row (over its games) a bot may let time out; at the
    next its stream ends with DEADLINE_EXCEEDED and it is not seated again
    (it may connect again). 0: no limit."""
    max_message_bytes: int = 64 * 1024
    max_connections: int = 0
    """Open Play streams at most (lobby, tables and greeting); a further one
    ends at once with RESOURCE_EXHAUSTED ``server full``. 0: no limit."""
    max_sessions_per_token: int = 0
    """Connected sessions at most per (non-empty) access token; a further
    Hello with that token is refused with RESOURCE_EXHAUSTED. 0: no limit."""
    seed: int | None = None
    """Base seed for deals; game k of this server uses seed ``f"{seed}:{k}"``."""
    matchmaking: bool = True
    """Seat waiting bots continuously (serve mode)."""
    reseat_delay: float = 0.5
    """Matchmaking waits this long after a bot's game ends before seating it
    again, so a bot that stops after its last game can leave first."""
    shutdown_grace: float = 1.0
    keep_records: int = 1000
    """Finished game records kept in memory (0: all). A long-running server
    must not grow without bound; a tournament keeps every game in its store."""
    fault_policy: str = "default"
    """What a fault costs beyond the default action: ``default`` (nothing),
    ``forfeit_round`` or ``remove`` (after ``max_faults``); see docs/protocol.md."""
    max_faults: int = 3
    """Faults in one game after which fault policy ``remove`` removes the seat."""
    time_bank: float = 0.0
    """Seconds per seat and game a decision may run past ``move_time`` by
    drawing on (0: none)."""
    reconnect_window: float = 30.0
    """Seconds a bot whose connection dropped in a game may take its seat
    back (Hello.resume_token); 0 disables resuming (no resume token is issued)."""
    bot_seed_secret: str | None = None
    """The secret each bot's per-game seed (GameStarted.bot_seed) is derived
    from, with the game id and the seat (:mod:`wizard_arena.protocol.seeds`). ``None``:
    a random one, drawn when the server starts (:attr:`Arena.bot_seed_secret`).
    It must have high entropy when bots are not trusted."""

    def __post_init__(self) -> None:
        if self.fault_policy not in FAULT_POLICIES:
            raise ValueError(
                f"unknown fault policy {self.fault_policy!r} (one of {', '.join(FAULT_POLICIES)})"
            )
        if self.max_faults < 1:
            raise ValueError("max_faults must be at least 1")
        if self.reconnect_window < 0:
            raise ValueError("reconnect_window must not be negative")
        if self.time_bank < 0:
            raise ValueError("time_bank must not be negative")
        if not (math.isfinite(self.reseat_delay) and self.reseat_delay >= 0):
            raise ValueError("reseat_delay must be a number of seconds, 0 or more")
        if self.max_connections < 0 or self.max_sessions_per_token < 0:
            raise ValueError("max_connections and max_sessions_per_token must not be negative")
        if self.max_consecutive_timeouts < 0:
            raise ValueError("max_consecutive_timeouts must not be negative")
        if self.inbound_limit < 1 or self.outbound_limit < 1:
            raise ValueError("inbound_limit and outbound_limit must be at least 1")


@dataclass(eq=False)
class Session:
    """A greeted bot connection."""

    id: str
    conn: Connection
    hello: Hello
    version: int
    issued: set[str] = field(default_factory=set)
    """Request ids issued to the bot in its current (or last) game."""
    earlier: set[str] = field(default_factory=set)
    """Request ids issued to it in the game before: late answers to them are
    still recognised (and ignored); older ones are forgotten, so the sets
    stay bounded however many games the session plays."""
    busy: bool = False
    free_at: float = 0.0
    """trio time from which matchmaking may seat this session again."""
    resume_token: str = ""
    """The secret that lets the bot take this session back after a drop."""
    dropped_at: float | None = None
    """trio time the connection dropped while at a table (None: connected)."""
    spec: SeatSpec | None = None
    """The seat of the game the session is playing, while it plays."""
    resumes: int = 0
    """Times the session was resumed on a new connection."""
    timeouts_in_a_row: int = 0
    """The bot's last decisions that timed out, over its games."""

    @property
    def name(self) -> str:
        return self.hello.bot_name or self.id

    @property
    def alive(self) -> bool:
        return not self.conn.closed


class Arena:
    """A running referee server (created by :func:`serve_arena`)."""

    def __init__(self, config: ArenaConfig, nursery: trio.Nursery) -> None:
        self.config = config
        self._nursery = nursery
        self.bridge: Bridge | None = None
        self.sessions: dict[str, Session] = {}
        self.waiting: list[Session] = []
        self.records = RecordLog(maxlen=config.keep_records or None)
        """The most recent finished games (``keep_records`` at most; tournaments
        store every game through ``on_game_end`` instead). Each is a copy,
        decoded when read."""
        self.games_played = 0
        self.active_tables = 0
        self.on_game_end: list[Callable[[GameRecord], None]] = []
        self.on_session: list[Callable[[Session], None]] = []
        self.connections: set[Connection] = set()
        """Open Play streams."""
        self._by_resume: dict[str, Session] = {}
        """Resume token -> its session, while the session may be resumed."""
        self._resume_key = secrets.token_bytes(32)
        """Signs the resume tokens this server issues, so that it can tell
        one of its tokens (perhaps expired) from one it never issued without
        keeping every token it issued."""
        self.refused_options: dict[str, str] = {}
        """Access token (one of ``config.tokens``: nothing is kept for a bot
        that did not authenticate) -> why the last bot greeting with it was
        refused for its rule options (so a tournament runner can say why an
        entrant never joined)."""
        self._changed = trio.Event()
        self._game_numbers = itertools.count(1)
        self._session_numbers = itertools.count(1)
        self._seeds = random.SystemRandom()
        self.bot_seed_secret = config.bot_seed_secret or new_secret()
        """The secret of the bots' per-game seeds (ArenaConfig.bot_seed_secret)."""
        self.log = get_logger()

    @property
    def port(self) -> int:
        return self.bridge.port if self.bridge is not None else 0

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    def server_info(self) -> ServerInfo:
        c = self.config
        return ServerInfo(
            __version__,
            PROTOCOL_VERSIONS,
            c.rules,
            c.move_time,
            c.tokens is not None,
            c.rules.options,
        )

    # -- change notification ------------------------------------------------------------

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for_change(self) -> None:
        """Wait until a session arrives, leaves or becomes free."""
        await self._changed.wait()

    def live_waiting(self) -> list[Session]:
        """Sessions greeted, connected and not at a table (oldest first)."""
        self.waiting = [s for s in self.waiting if s.alive]
        return [s for s in self.waiting if not s.busy]

    # -- connections --------------------------------------------------------------------

    def _on_connect(self, conn: Connection) -> None:
        limit = self.config.max_connections
        if limit and len(self.connections) >= limit:
            conn.close(
                CloseCode.RESOURCE_EXHAUSTED,
                f"server full: {limit} connections at most",
            )
            self.log.info("refused", conn=conn.id, peer=conn.peer, reason="server full")
            return
        self.connections.add(conn)
        conn.on_closed = self._on_closed
        self._nursery.start_soon(self._handshake, conn)

    async def _first_hello(self, conn: Connection, log: Any) -> Hello | None:
        """The bot's first message if it is a Hello; otherwise the stream is
        refused (or the bot left) and None."""
        msg: Any = None
        with trio.move_on_after(self.config.hello_timeout):
            try:
                msg = await conn.receive()
            except trio.EndOfChannel:
                log.info("left_before_hello")
                return None
        if msg is None:
            conn.close(CloseCode.INVALID_ARGUMENT, "no Hello within the hello timeout")
            log.info("refused", reason="hello timeout")
            return None
        if isinstance(msg, Malformed):
            details = f"the first message must be a Hello: {msg.detail}"
            conn.close(CloseCode.INVALID_ARGUMENT, details)
            log.info("refused", reason="first message not a hello", detail=msg.detail)
            return None
        if not isinstance(msg, Hello):
            conn.close(CloseCode.INVALID_ARGUMENT, "the first message must be a Hello")
            log.info("refused", reason="first message not a hello")
            return None
        return msg

    async def _handshake(self, conn: Connection) -> None:
        log = self.log.bind(conn=conn.id, peer=conn.peer)
        msg = await self._first_hello(conn, log)
        if msg is None:
            return
        common = [v for v in PROTOCOL_VERSIONS if msg.min_version <= v <= msg.max_version]
        if not common:
            details = (
                "unsupported protocol version: the bot speaks "
                f"{msg.min_version}..{msg.max_version}, this server speaks "
                + ", ".join(map(str, PROTOCOL_VERSIONS))
            )
            conn.close(CloseCode.FAILED_PRECONDITION, details)
            log.info("refused", reason="version", bot=msg.bot_name)
            return
        tokens = self.config.tokens
        if tokens is not None and msg.token not in tokens:
            conn.close(
                CloseCode.UNAUTHENTICATED,
                "missing access token" if not msg.token else "invalid access token",
            )
            log.info("refused", reason="token", bot=msg.bot_name)
            return
        if msg.resume_token:
            if not self._issued_here(msg.resume_token):
                conn.close(CloseCode.FAILED_PRECONDITION, "unknown resume token")
                log.info("refused", reason="resume token", bot=msg.bot_name)
                return
            if self._left_after_hello(conn, log):
                return
            if self._resume(conn, msg, common, log):
                return
        per_token = self.config.max_sessions_per_token
        if per_token and msg.token:
            using = [s for s in self.sessions.values() if s.alive and s.hello.token == msg.token]
            if len(using) >= per_token:
                conn.close(
                    CloseCode.RESOURCE_EXHAUSTED,
                    f"too many sessions with this access token ({per_token} at most)",
                )
                log.info("refused", reason="sessions per token", bot=msg.bot_name)
                return
        missing = missing_options(self.config.rules, msg.rule_options)
        if missing:
            conn.close(
                CloseCode.FAILED_PRECONDITION,
                f"this server's tables play the rule option(s) {', '.join(missing)} "
                f"({self.config.rules.describe()}); the bot's Hello.rule_options "
                f"({', '.join(msg.rule_options) or 'none'}) do not include them",
            )
            log.info("refused", reason="rule options", bot=msg.bot_name, missing=missing)
            if tokens is not None:  # an access token of this server: bounded by their number
                self.refused_options[msg.token] = (
                    f"refused: it cannot play the rule option(s) {', '.join(missing)}"
                )
                self._notify()
            return
        if self._left_after_hello(conn, log):
            return
        session = Session(
            f"s{next(self._session_numbers)}-{uuid.uuid4().hex[:8]}", conn, msg, max(common)
        )
        if self.config.reconnect_window > 0:
            session.resume_token = self._new_resume_token()
            self._by_resume[session.resume_token] = session
        conn.send(Welcome(session.version, session.id, __version__, session.resume_token))
        self.sessions[session.id] = session
        self.waiting.append(session)
        log.info(
            "session",
            session=session.id,
            bot=session.name,
            sdk=msg.sdk_name,
            sdk_version=msg.sdk_version,
            version=session.version,
        )
        for cb in self.on_session:
            cb(session)
        self._notify()

    @staticmethod
    def _left_after_hello(conn: Connection, log: Any) -> bool:
        """Whether the bot half-closed right after its hello: then nothing
        is kept for it and its stream ends with OK."""
        if not conn.closed:
            return False
        conn.close()
        log.info("left_after_hello")
        return True

    def _new_resume_token(self) -> str:
        """A fresh resume token: a random part and its signature."""
        nonce = secrets.token_urlsafe(24)
        return f"{nonce}.{self._resume_signature(nonce)}"

    def _resume_signature(self, nonce: str) -> str:
        mac = hmac.digest(self._resume_key, nonce.encode(), hashlib.sha256)[:16]
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()

    def _issued_here(self, token: str) -> bool:
        """Whether this server issued ``token`` (it may have expired since)."""
        nonce, _, signature = token.rpartition(".")
        return hmac.compare_digest(signature.encode(), self._resume_signature(nonce).encode())

    def _resume(self, conn: Connection, msg: Hello, common: list[int], log: Any) -> bool:
        """Give the session of ``msg.resume_token`` back to the bot on ``conn``
        if it may still be resumed (at a table, within the reconnect window,
        same access token and a version in common); False: the bot starts a
        new session. Only expiry (or a resume) ends a token: a stranger's
        hello quoting it leaves it to its owner."""
        s = self._by_resume.get(msg.resume_token)
        now = trio.current_time()
        if (
            s is None
            or s.spec is None
            or s.spec.reattach is None
            or (s.dropped_at is not None and now - s.dropped_at > self.config.reconnect_window)
        ):
            if s is not None and not s.alive:
                self._by_resume.pop(msg.resume_token, None)
            log.info("resume_expired", bot=msg.bot_name)
            return False
        if s.version not in common or s.hello.token != msg.token:
            why = "access token" if s.hello.token != msg.token else "version"
            log.info("resume_refused", bot=msg.bot_name, session=s.id, reason=why)
            return False
        old = s.conn
        s.conn = conn
        s.dropped_at = None
        s.resumes += 1
        conn.send(Welcome(s.version, s.id, __version__, s.resume_token, True))
        s.spec.reattach(conn)
        if old is not conn and not old.closed:
            old.close(CloseCode.UNAVAILABLE, "the session was resumed on another stream")
        if s not in self.waiting:
            self.waiting.append(s)
        log.info("resumed", session=s.id, bot=s.name)
        self._notify()
        return True

    # -- games --------------------------------------------------------------------------

    def next_seed(self) -> int | str:
        k = next(self._game_numbers)
        if self.config.seed is None:
            return self._seeds.randrange(2**63)
        return f"{self.config.seed}:{k}"

    async def play_game(
        self,
        seats: Sequence[Session | None],
        *,
        names: Sequence[str] | None = None,
        game_id: str | None = None,
        seed: int | str | None = None,
        rules: Rules | None = None,
        first_dealer: int | None = None,
        tags: dict[str, Any] | None = None,
        bot_seeds: Sequence[int] | None = None,
    ) -> GameRecord:
        """Referee one game between ``seats`` (``None``: the default policy
        plays that seat). The sessions are busy until it ends. ``bot_seeds``:
        each seat's ``GameStarted.bot_seed`` (default: derived from the
        server's secret, the game id and the seat)."""
        rules = rules or self.config.rules
        for s in seats:
            lacking = missing_options(rules, s.hello.rule_options) if s is not None else []
            if s is not None and lacking:
                raise ValueError(
                    f"bot {s.name!r} cannot play the rule option(s) {', '.join(lacking)}"
                )
        game_id = game_id or f"g-{uuid.uuid4().hex[:12]}"
        seed = self.next_seed() if seed is None else seed
        specs = []
        for i, s in enumerate(seats):
            name = names[i] if names is not None else (s.name if s is not None else f"absent-{i}")
            if s is None:
                specs.append(SeatSpec(name, None))
            else:
                s.busy = True
                s.earlier, s.issued = s.issued, set()
                s.spec = SeatSpec(name, s.conn, s.issued, s.earlier, s.timeouts_in_a_row)
                specs.append(s.spec)
        self.active_tables += 1
        try:
            record = await run_table(
                game_id,
                rules,
                specs,
                seed=seed,
                first_dealer=first_dealer,
                move_time=self.config.move_time,
                tags=tags,
                fault_policy=self.config.fault_policy,
                max_faults=self.config.max_faults,
                time_bank=self.config.time_bank,
                bot_seed_secret=self.bot_seed_secret,
                max_consecutive_timeouts=self.config.max_consecutive_timeouts,
                bot_seeds=bot_seeds,
            )
        finally:
            self.active_tables -= 1
            for s in seats:
                if s is not None:
                    if s.spec is not None:
                        s.timeouts_in_a_row = s.spec.timeouts_in_a_row
                    s.busy = False
                    s.spec = None
                    s.free_at = trio.current_time() + self.config.reseat_delay
                    if not s.alive:
                        self._forget(s)
            self._notify()
        self.records.append(record)
        self.games_played += 1
        for cb in self.on_game_end:
            cb(record)
        return record

    async def _matchmaker(self) -> None:
        n = self.config.rules.players
        while True:
            now = trio.current_time()
            waiting = self.live_waiting()
            free = [s for s in waiting if s.free_at <= now]
            if len(free) >= n:
                seats = free[:n]
                for s in seats:
                    s.busy = True  # reserve before the table task starts
                self._nursery.start_soon(self._seated_game, seats)
                continue
            resting = [s.free_at for s in waiting if s.free_at > now]
            with trio.move_on_at(min(resting) if resting else math.inf):
                await self.wait_for_change()

    async def _seated_game(self, seats: list[Session]) -> None:
        # run_table contains errors of the game itself; this also keeps an
        # error around it (setting up the table, an on_game_end callback)
        # from taking the whole server down
        try:
            await self.play_game(seats)
        except Exception as e:
            self.log.exception("table_failed", error=repr(e), bots=[s.name for s in seats])

    def _forget(self, s: Session) -> None:
        self.sessions.pop(s.id, None)
        self._by_resume.pop(s.resume_token, None)
        if s in self.waiting:
            self.waiting.remove(s)

    def _on_closed(self, conn: Connection) -> None:
        self.connections.discard(conn)
        # a waiting bot that leaves is dropped from the lobby at once; one at a
        # table may take its seat back within the reconnect window
        for s in list(self.sessions.values()):
            if s.conn is not conn:
                continue
            if s.busy:
                s.dropped_at = trio.current_time()
            else:
                self._forget(s)
        self._notify()


def freeze_startup_objects() -> None:
    """Exempt every object alive now from the cyclic garbage collector.

    For a server process (``wizard-arena serve`` and ``tournament`` call it;
    a library function does not), once it is serving: the modules, classes and
    functions of grpc, protobuf, trio and this package (about 50,000
    objects) live until exit, yet every full collection walked them again;
    after :func:`gc.freeze` it does not (:mod:`gc` docs). Garbage is
    collected first so none is frozen. Objects created later are collected
    as usual."""
    gc.collect()
    gc.freeze()


async def serve_arena(
    config: ArenaConfig,
    *,
    task_status: trio.TaskStatus[Arena] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the referee server until cancelled.

    ``task_status.started`` receives the :class:`Arena` once the port is
    bound (``arena.port``; ``config.port=0`` picks a free one). On
    cancellation every bot stream ends with UNAVAILABLE and the gRPC server
    stops.
    """
    async with trio.open_nursery() as nursery:
        arena = Arena(config, nursery)
        arena.bridge = await open_bridge(
            config.host,
            config.port,
            arena.server_info(),
            arena._on_connect,
            inbound_limit=config.inbound_limit,
            max_message_bytes=config.max_message_bytes,
            outbound_limit=config.outbound_limit,
        )
        try:
            arena.log.info(
                "serving",
                address=arena.address,
                rules=config.rules.describe(),
                move_time=config.move_time,
            )
            if config.matchmaking:
                nursery.start_soon(arena._matchmaker)
            task_status.started(arena)
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                for s in list(arena.sessions.values()):
                    s.conn.close(CloseCode.UNAVAILABLE, "server shutting down")
                await trio.sleep(0.05)  # let the closing statuses go out
                await arena.bridge.stop(config.shutdown_grace)
                arena.log.info("stopped", games=arena.games_played)
