"""The referee server: sessions, the lobby, tables and continuous matchmaking.

trio-style entry points: :func:`serve_arena` runs until cancelled and is
started with ``arena = await nursery.start(serve_arena, config)``; the
caller owns the nursery. It serves gRPC (:mod:`.bridge`); :func:`open_arena`
is the same arena with no transport at all: bots join it through
``arena.accept(seat)`` with any :class:`~wizard_referee.referee.seat.Seat`,
e.g. the in-memory seats of :mod:`.memory`.

The arena and its tables know a bot's connection only as a ``Seat``. The
handshake is :mod:`.handshake`; sessions and resume tokens :mod:`.sessions`;
one game :mod:`.table`; how bots are treated (deadlines, faults, limits)
the config's :class:`~wizard_referee.referee.policy.RefereePolicy`.

Continuous matchmaking (``ArenaConfig.matchmaking``): as soon as
``rules.players`` greeted bots are waiting, they are seated (first come,
first seated) at a new table; when the game ends, bots still connected wait
again. A tournament runner instead turns matchmaking off and seats chosen
sessions with :meth:`Arena.play_game`.
"""

from __future__ import annotations

import gc
import itertools
import math
import random
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any

import trio

from wizard_arena import __version__
from wizard_arena.protocol.messages import (
    PROTOCOL_MINOR_VERSION,
    PROTOCOL_VERSIONS,
    SERVER_SHUTTING_DOWN,
    ClockProbe,
    Hello,
    ServerInfo,
    Welcome,
)
from wizard_arena.protocol.seeds import new_secret
from wizard_arena.rules import Rules
from wizard_referee.referee.bridge import Bridge, host_port, open_bridge
from wizard_referee.referee.clock_probes import ClockProbes
from wizard_referee.referee.counters import ArenaCounters
from wizard_referee.referee.front_door import (
    TRIM_CHURN,
    FrontDoor,
    peer_key,
    release_freed_memory,
)
from wizard_referee.referee.grpc_setup import listener_in_use
from wizard_referee.referee.handshake import (
    AccessTokens,
    Door,
    Refuse,
    Resume,
    authenticate,
    first_hello,
    judge,
    left_after_hello,
    missing_options,
)
from wizard_referee.referee.live import LiveTable
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.record import GameRecord, RecordLog
from wizard_referee.referee.seat import CloseCode, Seat, SeatSpec
from wizard_referee.referee.sessions import ResumeTokens, Session, display_name
from wizard_referee.referee.table import run_table

__all__ = [
    "Arena",
    "ArenaConfig",
    "Session",
    "missing_options",
    "open_arena",
    "serve_arena",
]

#: Token book lookups (:func:`authenticate`) in worker threads at once.
TOKEN_LOOKUPS = 2


@dataclass(frozen=True)
class ArenaConfig:
    host: str = "127.0.0.1"
    port: int = 0
    rules: Rules = field(default_factory=lambda: Rules(players=4))
    policy: RefereePolicy = field(default_factory=RefereePolicy)
    """Deadlines, time bank, fault policy, reconnecting and limits."""
    tokens: AccessTokens | None = None
    """Access tokens accepted in Hello (a set, or a book of tokens that
    change while the server runs); ``None`` admits any bot."""
    seed: int | None = None
    """Base seed for deals; game k of this server uses seed ``f"{seed}:{k}"``."""
    matchmaking: bool = True
    """Seat waiting bots continuously (serve mode)."""
    shutdown_grace: float = 1.0
    keep_records: int = 1000
    """Finished game records kept in memory (0: all). A long-running server
    must not grow without bound; a tournament keeps every game in its store."""
    unix_socket: str | None = None
    """Also listen on this Unix socket path (readable and writable by every
    uid: confined bots connect there, ``unix:PATH``)."""
    bot_seed_secret: str | None = None
    """The secret each bot's per-game seed (GameStarted.bot_seed) is derived
    from, with the game id and the seat (:mod:`wizard_arena.protocol.seeds`). ``None``:
    a random one, drawn when the server starts (:attr:`Arena.bot_seed_secret`).
    It must have high entropy when bots are not trusted."""

    @classmethod
    def build(cls, **settings: Any) -> ArenaConfig:
        """A config from flat settings: those naming a
        :class:`RefereePolicy` field make its policy, the others are the
        config's own. ``ArenaConfig.build(rules=r, move_time=2.0)`` is
        ``ArenaConfig(rules=r, policy=RefereePolicy(move_time=2.0))``."""
        names = {f.name for f in fields(RefereePolicy)}
        policy = {k: v for k, v in settings.items() if k in names}
        own = {k: v for k, v in settings.items() if k not in names}
        return cls(**own, policy=RefereePolicy(**policy))


class Arena:
    """A running referee (created by :func:`serve_arena` or :func:`open_arena`)."""

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
        self.live_tables: dict[str, LiveTable] = {}
        """The games being played, by id (read them through ``game.public_view()``)."""
        self.counters = ArenaCounters()
        """Decisions, latency, faults, messages, refusals (for metrics)."""
        self.on_game_end: list[Callable[[GameRecord], None]] = []
        self.on_session: list[Callable[[Session], None]] = []
        self.connections: set[Seat] = set()
        """Open Play streams."""
        self.memory_releases = 0
        """Times freed memory was given back after a flood (:func:`release_after_floods`)."""
        self.resume_tokens = ResumeTokens()
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
        policy = config.policy
        self._door = Door(
            config.rules,
            config.tokens,
            policy.max_sessions_per_token,
            self._using,
            self.resume_tokens.issued_here,
        )
        """What the handshake asks of the arena."""
        self.front_door = FrontDoor(
            policy.max_greeting, policy.max_greeting_per_peer, policy.auth_backoff
        )
        """Streams not yet greeted, and failed authentications, by peer."""
        self._token_lookups = trio.CapacityLimiter(TOKEN_LOOKUPS)

    @property
    def port(self) -> int:
        return self.bridge.port if self.bridge is not None else 0

    @property
    def address(self) -> str:
        return host_port(self.config.host, self.port)

    @property
    def unix_address(self) -> str | None:
        """``unix:PATH`` when it also listens on a Unix socket (``ArenaConfig.unix_socket``)."""
        path = self.config.unix_socket
        return f"unix:{path}" if path else None

    def server_info(self) -> ServerInfo:
        c = self.config
        return ServerInfo(
            __version__,
            PROTOCOL_VERSIONS,
            c.rules,
            c.policy.move_time,
            c.tokens is not None,
            c.rules.options,
            PROTOCOL_MINOR_VERSION,
            c.policy.lag_credit_cap,
        )

    # -- change notification ------------------------------------------------------------

    def notify(self) -> None:
        """Wake :meth:`wait_for_change`: a session arrived, left or became free."""
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for_change(self) -> None:
        """Wait until a session arrives, leaves or becomes free."""
        await self._changed.wait()

    def live_waiting(self) -> list[Session]:
        """Sessions greeted, connected and not at a table (oldest first)."""
        self.waiting = [s for s in self.waiting if s.alive]
        return [s for s in self.waiting if not s.busy]

    # -- connections and sessions -------------------------------------------------------

    def accept(self, seat: Seat) -> None:
        """A new bot stream: greet it (:mod:`.handshake`), unless the server
        is full or its front door refuses it (:mod:`.front_door`)."""
        limit = self.config.policy.max_connections
        if limit and len(self.connections) >= limit:
            seat.close(CloseCode.RESOURCE_EXHAUSTED, f"server full: {limit} connections at most")
            self.counters.refused["server full"] += 1
            self.log.info("refused", conn=seat.id, peer=seat.peer, reason="server full")
            return
        key = peer_key(seat.peer)
        refused = self.front_door.enter(key, trio.current_time())
        if refused is not None:
            seat.close(CloseCode.RESOURCE_EXHAUSTED, refused)
            reason = "auth backoff" if "authentications" in refused else "greeting limit"
            self.counters.refused[reason] += 1
            self.log.debug("refused", conn=seat.id, peer=seat.peer, reason=reason)
            return
        self.connections.add(seat)
        seat.on_closed = self._on_closed
        self._nursery.start_soon(self._greet, seat, key)

    async def _greet(self, seat: Seat, key: str) -> None:
        """Greet a new stream from peer ``key`` (counted by the front door until
        its greeting ends)."""
        try:
            await self._handshake(seat, key)
        finally:
            self.front_door.leave(key)

    async def _handshake(self, seat: Seat, key: str) -> None:
        """Read the first message of a new stream and act on the handshake's
        verdict (:mod:`.handshake`): refuse the stream, give the bot its
        session back, or a new one."""
        log = self.log.bind(conn=seat.id, peer=seat.peer)
        hello = await first_hello(seat, self.config.policy.hello_timeout)
        if hello is None:
            log.info("left_before_hello")
            return
        if isinstance(hello, Refuse):
            self._refuse(seat, hello, log)
            return
        self.counters.messages_in += 1
        auth = await self._authenticate(seat, hello, key, log)
        verdict = judge(hello, self._door, auth)
        if isinstance(verdict, Resume):
            if left_after_hello(seat, log) or self.resume(seat, hello, verdict.common, log):
                return
            verdict = verdict.otherwise
        if isinstance(verdict, Refuse):
            self._refuse(seat, verdict, log, hello)
        elif not left_after_hello(seat, log):
            self.admit(seat, hello, verdict.version, log)

    async def _authenticate(self, seat: Seat, hello: Hello, key: str, log: Any) -> Refuse | None:
        """Check ``hello``'s access token (:func:`authenticate`: a token book
        is asked in a worker thread); a failure is logged as a warning with
        the peer's address (never the token) and counts towards the peer's
        back-off, during which its tokens are not even looked up."""
        if self.config.tokens is None:
            return None
        now = trio.current_time()
        wait = self.front_door.blocked(key, now)
        if wait > 0:
            auth: Refuse | None = Refuse(
                CloseCode.RESOURCE_EXHAUSTED,
                f"too many failed authentications from this address: retry in {wait:.3g} s",
                "auth backoff",
            )
        else:
            auth = await authenticate(hello, self._door, self._token_lookups)
        if auth is None:
            self.front_door.passed(key)
            return None
        if auth.code is CloseCode.UNAVAILABLE:  # the tokens' store: no failed login
            log.warning("auth_unavailable", bot=display_name(hello.bot_name), why=auth.details)
            return auth
        backoff = self.front_door.failed(key, trio.current_time())
        log.warning(
            "auth_failed",
            bot=display_name(hello.bot_name),
            why=auth.details,
            failures=self.front_door.failures(key),
            backoff=backoff,
        )
        return auth

    def _refuse(self, seat: Seat, refusal: Refuse, log: Any, hello: Hello | None = None) -> None:
        """Close a new stream with the handshake's refusal, counted and logged."""
        seat.close(refusal.code, refusal.details)
        self.counters.refused[refusal.reason] += 1
        extra: dict[str, Any] = {}
        if hello is not None:
            extra["bot"] = display_name(hello.bot_name)
        if refusal.missing:
            extra["missing"] = refusal.missing
        if refusal.detail:
            extra["detail"] = refusal.detail
        log.info("refused", reason=refusal.reason, **extra)
        if hello is not None and refusal.missing and self.config.tokens is not None:
            # an access token of this server: bounded by their number
            self.refused_options[hello.token] = (
                f"refused: it cannot play the rule option(s) {', '.join(refusal.missing)}"
            )
            self.notify()

    def _using(self, token: str) -> int:
        """The live sessions of an access token."""
        return sum(1 for s in self.sessions.values() if s.alive and s.hello.token == token)

    def admit(self, seat: Seat, hello: Hello, version: int, log: Any) -> Session:
        """A new session for the bot greeting on ``seat``: welcome it to the lobby."""
        session_id = f"s{next(self._session_numbers)}-{uuid.uuid4().hex[:8]}"
        session = Session(session_id, seat, hello, version)
        if self.config.policy.reconnect_window > 0:
            self.resume_tokens.issue(session)
        seat.send(self._welcome(session))
        self.counters.messages_out += 1
        self._probe(seat, hello)
        self.sessions[session.id] = session
        self.waiting.append(session)
        log.info(
            "session",
            session=session.id,
            bot=session.name,
            sdk=display_name(hello.sdk_name),
            sdk_version=display_name(hello.sdk_version),
            version=session.version,
        )
        for cb in self.on_session:
            cb(session)
        self.notify()
        return session

    def resume(self, seat: Seat, hello: Hello, common: list[int], log: Any) -> bool:
        """Give the session of ``hello.resume_token`` back to the bot on ``seat``
        if it may still be resumed (at a table, within the reconnect window,
        same access token and a version in common); False: the bot starts a
        new session. Only expiry (or a resume) ends a token: a stranger's
        hello quoting it leaves it to its owner."""
        window = self.config.policy.reconnect_window
        s = self.resume_tokens.resumable(hello.resume_token, trio.current_time(), window)
        if s is None:
            log.info("resume_expired", bot=display_name(hello.bot_name))
            return False
        if s.version not in common or s.hello.token != hello.token:
            why = "access token" if s.hello.token != hello.token else "version"
            log.info(
                "resume_refused",
                bot=display_name(hello.bot_name),
                session=s.id,
                reason=why,
            )
            return False
        assert s.spec is not None and s.spec.reattach is not None  # (resumable)
        old = s.conn
        s.conn = seat
        s.dropped_at = None
        # the new stream's choices (messages, clock probes) hold from now on
        s.hello = replace(s.hello, event_stream=hello.event_stream, clock_probes=hello.clock_probes)
        s.spec.event_stream = hello.event_stream
        seat.send(self._welcome(s, resumed=True))
        self.counters.messages_out += 1
        self._probe(seat, hello)  # a new connection: its round trips are measured afresh
        s.spec.reattach(seat)
        if old is not seat and not old.closed:
            old.close(CloseCode.UNAVAILABLE, "the session was resumed on another stream")
        if s not in self.waiting:
            self.waiting.append(s)
        log.info("resumed", session=s.id, bot=s.name)
        self.notify()
        return True

    def _probes_granted(self, hello: Hello) -> bool:
        """Whether the bot gets clock probes: it asked, and there is a credit."""
        return hello.clock_probes and self.config.policy.lag_credit_cap > 0

    def _welcome(self, s: Session, resumed: bool = False) -> Welcome:
        return Welcome(
            s.version,
            s.id,
            __version__,
            s.resume_token,
            resumed,
            PROTOCOL_MINOR_VERSION,
            s.hello.event_stream,
            self._probes_granted(s.hello),
        )

    def _probe(self, seat: Seat, hello: Hello) -> None:
        """Start the clock probes of ``seat`` (:mod:`.clock_probes`), if granted
        (after its Welcome, which says so)."""
        if not self._probes_granted(hello):
            return
        policy = self.config.policy
        counters = self.counters

        def send(msg: ClockProbe) -> None:
            seat.send(msg)
            counters.messages_out += 1

        kernel = None if policy.lag_credit_behind_proxy else seat.kernel_rtt
        clock = seat.clock = ClockProbes(send, lambda: seat.closed, kernel)
        self._nursery.start_soon(clock.run)

    def close_sessions(self, details: str = SERVER_SHUTTING_DOWN) -> None:
        """End every session's stream with UNAVAILABLE."""
        for s in list(self.sessions.values()):
            s.conn.close(CloseCode.UNAVAILABLE, details)

    def _forget(self, s: Session) -> None:
        self.sessions.pop(s.id, None)
        self.resume_tokens.forget(s)
        if s in self.waiting:
            self.waiting.remove(s)

    def _on_closed(self, conn: Seat) -> None:
        self.connections.discard(conn)
        if conn.clock is not None:
            conn.clock.stop()
        # a waiting bot that leaves is dropped from the lobby at once; one at a
        # table may take its seat back within the reconnect window
        for s in list(self.sessions.values()):
            if s.conn is not conn:
                continue
            if s.busy:
                s.dropped_at = trio.current_time()
            else:
                self._forget(s)
        self.notify()

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
        bot_game_id: str | None = None,
    ) -> GameRecord:
        """Referee one game between ``seats`` (``None``: the default policy
        plays that seat). The sessions are busy until it ends. ``bot_seeds``:
        each seat's ``GameStarted.bot_seed`` (default: derived from the
        server's secret, the game id and the seat); ``bot_game_id``: the id
        the bots are told (default the game id)."""
        rules = rules or self.config.rules
        for s in seats:
            lacking = missing_options(rules, s.hello.rule_options) if s is not None else []
            if s is not None and lacking:
                raise ValueError(
                    f"bot {s.name!r} cannot play the rule option(s) {', '.join(lacking)}"
                )
        await self._warm_up(seats)
        specs = self._take_seats(seats, names)
        self.active_tables += 1
        try:
            record = await run_table(
                game_id or f"g-{uuid.uuid4().hex[:12]}",
                rules,
                specs,
                policy=self.config.policy,
                seed=self.next_seed() if seed is None else seed,
                first_dealer=first_dealer,
                tags=tags,
                bot_seed_secret=self.bot_seed_secret,
                bot_seeds=bot_seeds,
                live=self.live_tables,
                counters=self.counters,
                bot_game_id=bot_game_id,
            )
        finally:
            self.active_tables -= 1
            self._leave_seats(seats)
        self.records.append(record)
        self.games_played += 1
        for cb in self.on_game_end:
            cb(record)
        return record

    async def _warm_up(self, seats: Sequence[Session | None]) -> None:
        """Wait until the clock probes of each seat's bot have their first
        round trips, so its first decisions get its network credit
        (:attr:`ClockProbes.warm <.clock_probes.ClockProbes.warm>`: at most
        :data:`~.clock_probes.WARM_UP` seconds from its first probe)."""
        for s in seats:
            clock = s.conn.clock if s is not None else None
            if clock is not None and not clock.warm.is_set():
                with trio.move_on_at(clock.warm_by):
                    await clock.warm.wait()

    def _take_seats(
        self, seats: Sequence[Session | None], names: Sequence[str] | None
    ) -> list[SeatSpec]:
        """The table's seats; each session is busy from now on, with a fresh
        set of request ids (the last game's kept for late answers)."""
        specs = []
        for i, s in enumerate(seats):
            name = names[i] if names is not None else (s.name if s is not None else f"absent-{i}")
            if s is None:
                specs.append(SeatSpec(name, None))
            else:
                s.busy = True
                s.earlier, s.issued = s.issued, set()
                s.spec = SeatSpec(
                    name,
                    s.conn,
                    s.issued,
                    s.earlier,
                    s.timeouts_in_a_row,
                    event_stream=s.hello.event_stream,
                )
                specs.append(s.spec)
        return specs

    def _leave_seats(self, seats: Sequence[Session | None]) -> None:
        """The game is over: its sessions are free again (after the reseat
        delay), and those whose bot has gone are forgotten."""
        free_at = trio.current_time() + self.config.policy.reseat_delay
        for s in seats:
            if s is not None:
                if s.spec is not None:
                    s.timeouts_in_a_row = s.spec.timeouts_in_a_row
                s.busy = False
                s.spec = None
                s.free_at = free_at
                if not s.alive:
                    self._forget(s)
        self.notify()

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


@asynccontextmanager
async def open_arena(config: ArenaConfig) -> AsyncIterator[Arena]:
    """An arena with no transport: bots join through ``arena.accept(seat)``
    (e.g. :func:`wizard_referee.referee.memory.connect`). Matchmaking runs
    if the config says so. On leaving, every session's stream ends with
    UNAVAILABLE and everything the arena runs is cancelled."""
    async with trio.open_nursery() as nursery:
        arena = Arena(config, nursery)
        if config.matchmaking:
            nursery.start_soon(arena._matchmaker)
        try:
            yield arena
        finally:
            arena.close_sessions()
            nursery.cancel_scope.cancel()


#: Seconds between two looks at the streams opened (a flood, then its end).
CHURN_PERIOD = 5.0


async def release_after_floods(arena: Arena) -> None:
    """Forever: once a flood of new streams (:data:`~.front_door.TRIM_CHURN`
    in a period) is over, or as many streams have gone, give the memory
    freed back to the system (:func:`~.front_door.release_freed_memory`)."""
    seen, high, due = arena.front_door.opened, len(arena.connections), False
    while True:
        await trio.sleep(CHURN_PERIOD)
        opened, open_now = arena.front_door.opened, len(arena.connections)
        churn, seen = opened - seen, opened
        high = max(high, open_now)
        if churn >= TRIM_CHURN or high - open_now >= TRIM_CHURN:
            due = True
        if due and churn < TRIM_CHURN:
            due, high = False, open_now
            release_freed_memory()  # (once a flood is over: a few ms)
            arena.memory_releases += 1
            arena.log.info("memory_released")


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
    policy = config.policy
    async with open_arena(config) as arena:
        arena.bridge = await open_bridge(
            config.host,
            config.port,
            arena.server_info(),
            arena.accept,
            inbound_limit=policy.inbound_limit,
            max_message_bytes=policy.max_message_bytes,
            outbound_limit=policy.outbound_limit,
            unix_socket=config.unix_socket,
        )
        try:
            arena.log.info(
                "serving",
                address=arena.address,
                rules=config.rules.describe(),
                move_time=policy.move_time,
                lag_credit_cap=policy.lag_credit_cap,
                listener=listener_in_use(),
            )
            task_status.started(arena)
            await release_after_floods(arena)
        finally:
            with trio.CancelScope(shield=True):
                arena.close_sessions()
                await trio.sleep(0.05)  # let the closing statuses go out
                await arena.bridge.stop(config.shutdown_grace)
                arena.log.info("stopped", games=arena.games_played)
