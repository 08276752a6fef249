"""The running ladder: one process (an SQLite store held for it alone,
:meth:`.LadderStore.hold`; a PostgreSQL one shared with other processes), the
hosting room's host (a referee, the launcher, the hosted entrants'
processes, confined under ``sandbox = "bwrap"``), and these tasks:

- **matchmaking** (:mod:`.matchmaking`): whenever entries are free, tables
  are formed and each plays a duplicate set, the season's seatings of one
  deal (:func:`wizard_referee.tournament.seating.deal_seatings`), game
  after game on its members' sessions; every game is stored as it ends,
  and the set is finished (with the live ratings' update) in one
  transaction when its last game is stored;
- **interrupted sets**: a set whose member has no session before a game
  (it disconnected, crashed, or the ladder itself stopped) is *suspended*:
  its other members are free to play on; once every member is connected
  again its free members are held for it and it goes on from its next game;
  a member still away after ``return_window`` seconds (counted while a
  ladder process runs), or retired or replaced meanwhile, has *abandoned*
  it: the set goes on, that member's seats played by the default action;
- **the registry**: every second, a registry change (``ladder add``,
  ``version``, ``retire``, ``rotate-token`` in another process) is read:
  hosted versions are started or stopped, sessions of a rotated token are
  closed at once, those of an entry retired or replaced after their set; tokens are checked against
  the store at each Hello (:class:`LadderTokens`);
- **leases**: the runner's, its sessions' (rows that say who is online,
  each in one of its entry's slots: within ``max_sessions_per_token`` on
  every process sharing the store) and its sets' claims are renewed, and
  the sets whose claim lapsed are taken over (suspended, to be played on
  by whichever process has their members; its absent members abandon it
  after the return window only when no live process has them all; one
  whose every game is stored
  finished at once, members connected or not); session rows another process
  removed (this one stalled past its lease) are stored again; a ladder
  that stops leaves its sets suspended, one killed leaves them
  ``playing`` until its lease lapses (or, on SQLite, until the next
  start); a game is stored and a set finished only while this runner
  holds its claim (:mod:`.store`);
- **the others' sets**: every second, the sets finished since (by any
  process sharing the store), their stored live ratings applied in the
  order they were committed (the ratings and sets played that
  matchmaking uses);
- **official standings** (:mod:`.standings`), in a process of their own
  started through the host's launcher, after sets finish (at most every
  ``standings_every`` seconds).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import trio

from wizard_referee.hosting.config import EntrantConfig, HostConfig, HostError
from wizard_referee.hosting.confine import sandbox_problems
from wizard_referee.hosting.entrants import MAX_RESTARTS, EntrantStartError, Instance
from wizard_referee.hosting.host import (
    GameHost,
    HostedGame,
    OnArena,
    free_session,
    open_host,
    run_game,
)
from wizard_referee.ladder.matchmaking import Candidate, Matchmaker, Policy
from wizard_referee.ladder.plackett_luce import LiveModel, ordinal, replay
from wizard_referee.ladder.standings import (
    STORE_ENV,
    STORE_FROM_ENV,
    read_official,
    rows,
    write_failure,
    write_json,
)
from wizard_referee.ladder.store import HOSTED, ClaimLost, LadderStore, Version
from wizard_referee.referee.arena import Session
from wizard_referee.referee.handshake import TokensUnavailable
from wizard_referee.referee.policy import PROCESS, RefereePolicy, names
from wizard_referee.referee.record import GameRecord
from wizard_referee.referee.seat import CloseCode
from wizard_referee.sandbox import UID_BASE, Confinement, Limits
from wizard_referee.storage import DatabaseError, DatabaseLost, StorageError
from wizard_referee.tournament.seating import deal_seatings

__all__ = ["Ladder", "LadderTokens", "RunOptions", "Stats", "run_ladder"]

#: Seconds between two looks at the registry (a change made meanwhile waits that long).
REGISTRY_EVERY = 1.0
#: Finished sets read at a time when catching up with the other processes' sets.
CATCH_UP_BATCH = 500
#: Seconds a hosted version that gave up restarting waits before it is started again.
RELAUNCH_AFTER = 60.0
#: Seconds before the official ratings are tried again after a failure (doubling each time).
STANDINGS_RETRY = 5.0
#: The longest wait between two tries of the official ratings.
STANDINGS_RETRY_MAX = 300.0
#: Seconds before the first try to reach a lost database again (doubling each time).
RECONNECT_FIRST = 0.5
#: The longest wait between two tries to reach a lost database.
RECONNECT_MAX = 10.0
#: The least the matchmaker waits for other entries before it repeats a recent table
#: (else half a set's usual duration: :mod:`.matchmaking`).
MIN_PATIENCE = 1.0


@dataclass(frozen=True)
class RunOptions:
    """What a ladder process may change between runs (the season's settings may not)."""

    host: str = "127.0.0.1"
    port: int = 0
    tables: int = 0
    """Sets played at once at most (0: as many as the free entries make)."""
    instances: int = 1
    """Processes of each hosted entry (each sits at one table at a time)."""
    return_window: float = 120.0
    """Seconds an interrupted set waits for its members (while a ladder
    process runs) before it goes on without the absent ones (their seats
    played by the default action)."""
    max_sessions_per_token: int = 1
    """Sessions a dial-in token may hold at once (0: any number)."""
    referee: Mapping[str, Any] = field(default_factory=dict)
    """The running referee's other settings (its front door and limits:
    ``max_connections``, ``hello_timeout``, ``lag_credit_behind_proxy``, ...;
    :data:`~wizard_referee.referee.policy.SETTINGS` of scope ``process``)
    given; the others keep the referee's defaults."""

    def __post_init__(self) -> None:
        unknown = set(self.referee) - (set(names(PROCESS)) - {"max_sessions_per_token"})
        if unknown:
            raise ValueError(f"not a ladder process's setting: {', '.join(sorted(unknown))}")

    lease: float = 30.0
    """Seconds the runner's, its sessions' and its sets' leases run without renewal."""
    seed: int | None = None
    """The matchmaker's randomness (None: drawn)."""
    standings_every: float = 30.0
    bootstrap: int = 1000
    """Bootstrap redraws of the official intervals (0: none)."""
    report: Path | None = None
    """Where to write the run's figures (:class:`Stats`, JSON) when it stops."""


@dataclass
class Stats:
    """What the bench reads (the ``ladder_stats`` log line at the end)."""

    started: float = field(default_factory=time.monotonic)
    sets_started: int = 0
    sets_finished: int = 0
    sets_void: int = 0
    sets_suspended: int = 0
    abandons: int = 0
    outages: int = 0
    """Times the database's connection was lost (and opened again)."""
    outage_seconds: float = 0.0
    """Members of sets recorded as leavers (their seats played by the default action)."""
    games: int = 0
    matchmaking_seconds: float = 0.0
    matchmaking_calls: int = 0
    finish_seconds: float = 0.0
    """Finishing sets: the live ratings' update and its transaction."""
    claim_seconds: float = 0.0
    claims: int = 0
    """Tables claimed (a new set's row, a suspended set taken with its row
    locked) and the time it took."""
    sets_lost: int = 0
    """Sets whose claim lapsed and another process took (left to it)."""
    sets_taken_over: int = 0
    """Sets of a process whose claim lapsed, suspended here to be played on."""
    save_seconds: float = 0.0
    save_bytes: int = 0
    """The records stored (JSON text), beside their seats' rows."""
    wait_seconds: float = 0.0
    """Summed over entries: time free and connected, waiting for a table."""
    seated_seconds: float = 0.0
    """Summed over entries: time at a set."""

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k != "started"}
        out["elapsed"] = time.monotonic() - self.started
        return out

    def summary(self) -> str:
        """The run in a line a user reads (``ladder run`` prints it when it stops)."""
        minutes = max(time.monotonic() - self.started, 1e-9) / 60
        waited = self.wait_seconds / ((self.wait_seconds + self.seated_seconds) or 1)
        per_set = max(self.sets_started, 1)
        per_game = max(self.games, 1)
        return (
            f"{minutes * 60:.0f} s: {self.sets_finished} sets finished "
            f"({self.sets_finished / minutes:.1f}/min), {self.games} games "
            f"({self.games / minutes:.1f}/min), {self.sets_void} void, {self.abandons} abandons; "
            f"entries online waited "
            f"{waited:.0%} of the time for a table; per set: matchmaking "
            f"{1000 * self.matchmaking_seconds / per_set:.2f} ms, finishing (rating update "
            f"and its transaction) {1000 * self.finish_seconds / max(self.sets_finished, 1):.2f}"
            f" ms; per game: stored in {1000 * self.save_seconds / per_game:.2f} ms, "
            f"{self.save_bytes / per_game / 1024:.1f} KiB of record"
        )


class LadderTokens:
    """The access tokens of a ladder (a :class:`~wizard_referee.referee.handshake.TokenBook`):
    its hosted instances' (``hosted``, the host's own) and the registry's
    dial-in tokens, looked up in the store at each Hello, so a token
    rotated or retired a moment ago is refused at once. The arena asks in
    a worker thread: the lookups go through a read-only connection of their
    own (opened at the first, one lookup at a time), never the runner's."""

    def __init__(self, store: LadderStore, hosted: dict[str, str]) -> None:
        self.store = store
        self.hosted = hosted
        self._lock = threading.Lock()
        self._reader: LadderStore | None = None

    def close(self) -> None:
        with self._lock:
            self._drop_reader()

    def _drop_reader(self) -> None:
        """Close the lookups' connection (the lock held)."""
        reader, self._reader = self._reader, None
        if reader is not None:
            with contextlib.suppress(DatabaseError):
                reader.close()

    def refusal(self, token: str) -> str | None:
        if token in self.hosted:
            return None
        with self._lock:
            try:
                if self._reader is None:
                    self._reader = LadderStore.open(self.store.target, read_only=True)
                found = self._reader.token(token)
            except DatabaseError:
                self._drop_reader()  # (opened again at the next lookup)
                raise TokensUnavailable(
                    "the ladder's database cannot be reached just now: try again shortly"
                ) from None
        if found is None:
            return "invalid access token"
        _, why = found
        if why is None:
            return None
        return f"access token no longer valid ({why}): ask the organiser for the current one"


class Ladder:
    """A running ladder (:func:`run_ladder`)."""

    def __init__(
        self,
        store: LadderStore,
        options: RunOptions,
        log: Any,
        notice: Callable[[str], None],
    ) -> None:
        self.store = store
        self.options = options
        self.log = log
        self.notice = notice
        self.season, self.secret, _ = store.season()
        self.runner = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
        self.model = LiveModel()
        self.matchmaker = Matchmaker(Policy(players=self.season.players), _rng(options.seed))
        self.stats = Stats()
        self.versions: dict[int, Version] = {}
        self._labels: dict[str, Version] = {}
        self.registry = -1
        self.ratings: dict[int, tuple[float, float]] = {}
        self.sets: Counter[int] = Counter()
        self.in_set: set[int] = set()
        self.running: set[int] = set()
        """Sets being played now."""
        self.waiting_since: dict[int, float] = {}
        self.instances: dict[int, list[Instance]] = {}
        self.broken: dict[int, str] = {}
        """Hosted versions that cannot start, and why."""
        self.gave_up: dict[int, float] = {}
        """Hosted versions whose every instance gave up restarting, since when."""
        self.presence: dict[str, int] = {}
        """The sessions recorded as online: session id -> version."""
        self.finished_to = 0
        """The last place in the order of finishing this runner has counted
        (sets finished by every process sharing the store)."""
        self.counted: set[int] = set()
        """Places beyond :attr:`finished_to` counted already (this runner's own)."""
        self.set_seconds = 0.0
        """A set's usual duration: the mean of the last 20 or so (seconds)."""
        self.point: dict[str, Any] | None = None
        self.intervals: dict[str, Any] | None = None
        self.standings_failure: dict[str, Any] | None = None
        """The official ratings' last failure, while no try has succeeded since."""
        self._host: GameHost | None = None
        self._nursery: trio.Nursery | None = None
        self._stop = trio.Event()
        self._reconnected: trio.Event | None = None
        """Set once a lost database answers again (None: not lost)."""
        self._renewed = time.monotonic()
        """When this runner's leases were last renewed (monotonic seconds)."""

    def stop(self) -> None:
        """End :meth:`run`: its sets left to be finished by the next run.
        (Stopping this way, not by cancelling it from outside, lets the
        host stop its processes in order: cancelled from outside, the
        launcher's reader is cancelled with them, and their exits are
        waited for in vain.)"""
        self._stop.set()

    # -- state ---------------------------------------------------------------------------

    @property
    def host(self) -> GameHost:
        assert self._host is not None
        return self._host

    @property
    def address(self) -> str:
        return self.host.arena.address

    @property
    def active(self) -> dict[int, Version]:
        return {k: v for k, v in self.versions.items() if v.active}

    def _load(self) -> None:
        """The live ratings, sets played and recent tables, replayed from the
        store in the order the sets finished (a check that the store's own
        live ratings are what this code gives)."""
        every = self.store.finished_after(0)
        self.finished_to = max((seq for seq, *_ in every), default=0)
        finished = [f[1:] for f in every]
        for _, seats, _ in finished:
            self.matchmaker.record(seats)
        self.ratings = replay(
            self.model, ((seats, [res[v][0] for v in seats]) for _, seats, res in finished)
        )
        stored = {v: r[1] for _, _, res in finished for v, r in res.items()}
        off = [v for v, r in stored.items() if not _close(r, self.ratings.get(v))]
        if off:
            self.log.warning("live_ratings_replayed_differ", versions=off)
        self.sets = Counter(v for _, seats, _ in finished for v in seats)

    def _catch_up(self) -> None:
        """Sets other processes sharing the store finished: their members'
        live ratings (stored), sets played and recent tables. Every set's
        ratings are applied in the order the sets were committed, this
        runner's own too (counted already, but a set of another committed
        before one of this runner's may be read only after it: applied
        alone, it would put back its members' older ratings). Read a batch
        at a time, the heartbeat kept between batches when it is due (a
        long catch-up must not let this runner's leases lapse)."""
        while self.store.fingerprint()[0] > self.finished_to:
            batch = self.store.finished_after(self.finished_to, CATCH_UP_BATCH)
            if not batch:
                return
            for seq, _, seats, results in batch:
                self.finished_to = max(self.finished_to, seq)
                self.ratings.update({v: r for v, (_, r) in results.items()})
                if seq in self.counted:
                    continue  # (its sets played and table counted when it finished here)
                self.sets.update(seats)
                self.matchmaker.record(seats)
            self.counted = {q for q in self.counted if q > self.finished_to}
            self._heartbeat_if_due()

    def _reload(self) -> bool:
        """The registry, read again when it changed; whether it did."""
        count = self.store.registry_count()
        if count == self.registry:
            return False
        self.versions = {v.id: v for v in self.store.versions()}
        self._labels = {v.label: v for v in self.versions.values()}
        self.registry = count  # (last: a read cut off by the database is done again)
        return True

    def _close_rotated(self) -> None:
        """Close at once every dial-in session of an active entry whose token
        was rotated (in a game or not: whoever holds the old token is shut
        out, its set waits for the entry's bot with the new one), and free
        its slot for the new token's session."""
        closed = False
        for label, sessions in self.host.pool.items():
            entry = self._by_label(label)
            if entry is None or not entry.active or entry.kind == HOSTED:
                continue  # (a retired or replaced entry's: closed once out of its set)
            for s in sessions:
                if not s.alive or s.hello.token in self.host.token_owner:
                    continue
                found = self.store.token(s.hello.token)
                if found is not None and found[1] is None:
                    continue
                why = found[1] if found is not None else "unknown"
                s.conn.close(
                    CloseCode.UNAUTHENTICATED,
                    f"access token no longer valid ({why}): ask the organiser for the current one",
                )
                self.log.warning("session_closed", entry=label, session=s.id, why=why)
                closed = True
        if closed:
            self._presence()  # (their rows go now: the new token's session takes the slot)

    def _reconcile(self) -> None:
        """Hosted versions started, stopped, started again after giving up;
        sessions of entries retired or replaced closed once out of a set."""
        host = self.host
        for vid, insts in list(self.instances.items()):
            if vid not in self.active and vid not in self.in_set:  # (its set goes on first)
                for inst in insts:
                    host.stop(inst)
                del self.instances[vid]
        now = trio.current_time()
        for v in self.active.values():
            if v.kind != HOSTED or v.id in self.broken:
                continue
            running = self.instances.get(v.id)
            if running is None:
                self._launch(v)
            elif all(i.restarts > MAX_RESTARTS for i in running):  # each gave up restarting
                since = self.gave_up.setdefault(v.id, now)
                if now - since > RELAUNCH_AFTER:
                    del self.gave_up[v.id]
                    self._launch(v)
        # a dial-in session whose token no longer counts: closed once out of a set
        for label, sessions in host.pool.items():
            entry = self._by_label(label)
            if entry is None or entry.active or entry.id in self.in_set:
                continue
            for s in sessions:
                if s.alive and not s.busy:
                    s.conn.close(CloseCode.UNAUTHENTICATED, "this entry is retired or replaced")

    def _by_label(self, label: str) -> Version | None:
        if len(self._labels) != len(self.versions):
            self._labels = {v.label: v for v in self.versions.values()}
        return self._labels.get(label)

    def _launch(self, v: Version) -> None:
        assert v.command is not None
        limits = v.limits or {}
        entrant = EntrantConfig(v.label, v.command, folder=v.folder or "", **limits)
        old = self.instances.get(v.id, [])
        for inst in old:
            self.host.stop(inst)
        insts = []
        for i in range(self.options.instances):
            inst = Instance(entrant, i, secrets.token_hex(16))
            if self.season.sandbox == "bwrap":
                inst.confinement = Confinement(
                    uid=UID_BASE + v.entrant_id - 1,
                    folder=Path(v.folder) if v.folder else None,
                    socket_dir=self.host.socket_dir,
                    limits=Limits(**_limit_fields(limits)),
                )
            self.host.launch(inst, v.label, partial(self._cannot_start, v))
            insts.append(inst)
        self.instances[v.id] = insts

    def _cannot_start(self, v: Version, error: EntrantStartError) -> None:
        """A hosted version that exits before it ever connects: not started
        again until a new version is registered or the ladder restarts."""
        self.broken[v.id] = str(error)
        self.log.error("entrant_cannot_start", entry=v.label, error=str(error))
        self.notice(f"error: {error}")
        for inst in self.instances.pop(v.id, []):
            self.host.stop(inst)

    def _on_session(self, s: Session) -> None:
        """A dial-in session joins its version's pool (a hosted one is the
        host's) once its row is stored: within the sessions a token may
        hold on every process sharing the store, else it is closed
        (UNAVAILABLE: a bot tries again, e.g. once the session of a killed
        process has lapsed)."""
        if s.hello.token in self.host.token_owner:
            return
        try:
            self._admit(s)
        except DatabaseError as e:
            self.log.warning("session_refused", session=s.id, why=str(e))
            s.conn.close(
                CloseCode.UNAVAILABLE,
                "the ladder's database cannot be reached just now: try again shortly",
            )

    def _admit(self, s: Session) -> None:
        found = self.store.token(s.hello.token)
        if found is None or found[1] is not None:
            return  # (refused at the Hello: cannot happen)
        if found[0] not in self.versions:
            self._reload()
        v = self.versions[found[0]]
        limit = self.options.max_sessions_per_token
        if not self._add_session(s.id, v.id, limit):
            self.log.info("session_over_limit", entry=v.label, session=s.id)
            s.conn.close(
                CloseCode.UNAVAILABLE,
                f"too many sessions with this access token on this ladder's processes "
                f"({limit} at most): try again later",
            )
            return
        self.presence[s.id] = v.id
        self.host.pool.setdefault(v.label, []).append(s)

    def _row(self, sid: str) -> str:
        """A session's row in the store: named after its runner too (each
        process numbers its own sessions)."""
        return f"{self.runner}/{sid}"

    def _add_session(self, sid: str, vid: int, limit: int) -> bool:
        lease = self.options.lease
        if self.store.add_session(self._row(sid), self.runner, vid, lease, limit):
            return True
        self._presence()  # (a session of its gone a moment ago still holds a slot)
        return self.store.add_session(self._row(sid), self.runner, vid, lease, limit)

    def free(self, v: Version) -> Session | None:
        return free_session(self.host.pool.get(v.label, []))

    def connected(self, v: Version) -> bool:
        return any(s.alive for s in self.host.pool.get(v.label, []))

    # -- matchmaking and sets ---------------------------------------------------------------

    def _available(self, held: set[int]) -> list[Candidate]:
        now = trio.current_time()
        out = []
        prior = self.model.prior
        for v in self.active.values():
            if v.id in self.in_set or v.id in held or self.free(v) is None:
                self._stop_waiting(v.id, now)
                continue
            since = self.waiting_since.setdefault(v.id, now)
            mu, sigma = self.ratings.get(v.id, prior)
            out.append(Candidate(v.id, mu, sigma, self.sets[v.id], since))
        return out

    def _stop_waiting(self, vid: int, now: float) -> None:
        since = self.waiting_since.pop(vid, None)
        if since is not None:
            self.stats.wait_seconds += now - since

    def _settle_suspended(self) -> set[int]:
        """Resume the suspended sets that can go on, recording as leavers
        their members retired or replaced, or away past the return window
        (:meth:`_abandon`); the members held for a set whose members are all
        back or abandoned it. A set whose members are away here past the
        window is left alone while a live process has them all connected
        (that one plays it on: a killed process's bots that dialed
        another); its members connected elsewhere than the live process
        that suspended it, while others are still connected to that one,
        left it; it is void when its members left are connected, but not
        to one process, and its holder has none of them (it stopped or was
        killed)."""
        held: set[int] = set()
        now = self.store.clock()
        for set_id, seats, deal, since, _, holder in self.store.suspended():
            if set_id in self.running:
                continue
            if self._settle_stored(set_id, seats):
                continue
            left = self.store.abandoned(set_id)
            gone = [v for v in seats if v not in self.active and v not in left]
            if gone:  # (retired or replaced while its set waited for it: it never returns)
                if not self._abandon(set_id, gone, gone=True):
                    continue
                left.update(gone)
            present = [v for v in seats if v not in left]
            away = [v for v in present if not self.connected(self.versions[v])]
            if (
                away
                and self._window_passed(since, now)
                and not self.store.connected_together(present)
            ):
                leavers = self._abandon(set_id, away, present=present, holder=holder)
                if leavers is None:
                    continue  # (another process settled it)
                away = [v for v in away if v not in leavers]
                present = [v for v in present if v not in leavers]
                if away and not self.store.connected_together(present):
                    # connected, but not to one process: the set cannot go on
                    names = ", ".join(self.versions[v].label for v in away)
                    self._void(set_id, f"interrupted: {names} did not come back to one process")
                    continue
            if away:
                continue
            if all(v not in self.in_set and self.free(self.versions[v]) for v in present):
                t0 = time.perf_counter()
                claimed = self.store.claim(set_id, self.runner, self.options.lease)
                self.stats.claim_seconds += time.perf_counter() - t0
                self.stats.claims += 1
                if claimed:
                    self._start(set_id, seats, deal)
            else:
                held.update(present)
        return held

    def _window_passed(self, since: float, now: float) -> bool:
        """Whether an interrupted set suspended at ``since`` has waited the
        return window: only the time a ladder process was running counts
        (a stop, a kill, a database lost longer than a lease do not)."""
        window = self.options.return_window
        return now - since > window and self.store.running_seconds(since, now) > window

    def _abandon(
        self,
        set_id: int,
        away: list[int],
        gone: bool = False,
        present: Sequence[int] = (),
        holder: str = "",
    ) -> list[int] | None:
        """Record as the leavers of a suspended set past the return window
        (the rest of the set is played with their seats' default action)
        its members away here connected to no ladder process, or, while
        the live process that suspended the set (``holder``) still has some
        of its ``present`` members connected, every one of those it has not
        (they left it for another process); ``gone``: every one of
        ``away``, retired or replaced. Those recorded, or None when the set
        is not suspended any more."""
        kept: set[int] = set()
        if not gone and holder:
            kept = self.store.connected_by_runner().get(holder, set()) & set(present)
        if kept:
            leavers = [v for v in present if v not in kept]
        else:
            online = {} if gone else self.store.online()
            leavers = [v for v in away if not online.get(v)]
        if not leavers:
            return []
        if not self.store.abandon(set_id, leavers):
            return None
        self.stats.abandons += len(leavers)
        labels = [self.versions[v].label for v in leavers]
        self.log.warning("set_abandoned", set=set_id, left=labels)
        return leavers

    def _settle_stored(self, set_id: int, seats: list[int]) -> bool:
        """Finish a suspended set whose every game is stored (its process
        stopped between storing the last game and finishing the set), with
        no member needing to be connected; void it if a stored game did not
        finish. False: games are still to play."""
        stored = self.store.stored_games(set_id)
        labels = [self.versions[v].label for v in seats]
        if len(stored) < len(deal_seatings(labels, self.season.seating)):
            return False
        if not self.store.claim(set_id, self.runner, self.options.lease):
            return True  # (another process is taking it)
        self.stats.claims += 1
        if self._void_if_a_game_failed(set_id, stored):
            return True
        try:
            self._finish(set_id, seats)
        except ClaimLost as e:
            self.stats.sets_lost += 1
            self.log.warning("set_claim_lost", set=set_id, why=str(e))
            return True
        self.stats.sets_finished += 1
        self.log.info("set_finished", set=set_id, entries=labels, stored_before=True)
        return True

    def _void_if_a_game_failed(self, set_id: int, stored: dict[int, str]) -> bool:
        """Void a set one of whose ``stored`` games did not finish (stored by
        a process that stopped before voiding the set); whether it did."""
        unfinished = sorted(r for r, status in stored.items() if status != "finished")
        if unfinished:
            self._void(set_id, f"game s{set_id}-r{unfinished[0]} did not finish")
        return bool(unfinished)

    def _void(self, set_id: int, why: str) -> None:
        if self.store.void(set_id, why, self.runner):
            self.stats.sets_void += 1
            self.log.warning("set_void", set=set_id, why=why)

    def _form_tables(self, held: set[int]) -> None:
        limit = self.options.tables or math.inf
        while len(self.running) < limit:
            t0 = time.perf_counter()
            available = self._available(held)
            members = self.matchmaker.table(available, trio.current_time(), len(self.in_set))
            self.stats.matchmaking_seconds += time.perf_counter() - t0
            self.stats.matchmaking_calls += 1
            if members is None:
                return
            t0 = time.perf_counter()
            set_id, deal = self.store.new_set(members, self.runner, self.options.lease, self.secret)
            self.stats.claim_seconds += time.perf_counter() - t0
            self.stats.claims += 1
            self.stats.sets_started += 1
            self._start(set_id, members, deal)

    def _start(self, set_id: int, members: list[int], deal: str) -> None:
        now = trio.current_time()
        for v in members:
            self._stop_waiting(v, now)
        self.in_set.update(members)
        self.running.add(set_id)
        assert self._nursery is not None
        self._nursery.start_soon(self._play_set, set_id, members, deal)

    async def _play_set(self, set_id: int, members: list[int], deal: str) -> None:
        started = trio.current_time()
        try:
            while True:
                try:
                    await self._games(set_id, members, deal)
                    break
                except DatabaseLost as e:  # (the table waits for it, then goes on)
                    await self._database_back(e)
        except ClaimLost as e:
            self.stats.sets_lost += 1
            self.log.warning("set_claim_lost", set=set_id, why=str(e))
        finally:
            self.in_set.difference_update(members)
            self.running.discard(set_id)
            self.stats.seated_seconds += (trio.current_time() - started) * len(members)
            self.host.arena.notify()

    async def _games(self, set_id: int, members: list[int], deal: str) -> None:
        started = trio.current_time()
        labels = {self.versions[v].label: v for v in members}
        done = self.store.stored_games(set_id)
        if self._void_if_a_game_failed(set_id, done):
            return
        left = self.store.abandoned(set_id)
        seatings = deal_seatings(list(labels), self.season.seating)
        for r, seating in enumerate(seatings):
            if r in done:
                continue
            seats = [
                None if labels[name] in left else self.free(self.versions[labels[name]])
                for name in seating
            ]  # (a leaver's seats: the default action)
            away = [
                name
                for name, s in zip(seating, seats, strict=True)
                if s is None and labels[name] not in left
            ]
            if away:
                self.store.suspend(set_id, f"{', '.join(away)} not connected", self.runner)
                self.stats.sets_suspended += 1
                self.log.info("set_suspended", set=set_id, away=away)
                return
            for s in seats:
                if s is not None:
                    s.busy = True
            spec = HostedGame(f"s{set_id}-r{r}", deal, tuple(seating))
            tags = {"ladder": self.season.name, "set": set_id, "seating": r}
            record = await run_game(self.host.arena, self.host.launched, spec, seats, tags)
            t0 = time.perf_counter()
            size = await self._save_game(set_id, r, [labels[name] for name in seating], record)
            self.stats.save_seconds += time.perf_counter() - t0
            self.stats.save_bytes += size
            self.stats.games += 1
            if record.status != "finished":
                self._void(set_id, f"game {spec.id} was {record.status}: {record.error}")
                return
        took = trio.current_time() - started
        self.set_seconds += (took - self.set_seconds) / min(self.stats.sets_finished + 1, 20)
        self.matchmaker.patience = max(MIN_PATIENCE, self.set_seconds / 2)
        t0 = time.perf_counter()
        self._finish(set_id, members)
        self.stats.finish_seconds += time.perf_counter() - t0
        self.stats.sets_finished += 1
        self.log.info("set_finished", set=set_id, entries=list(labels))

    async def _save_game(
        self, set_id: int, seating: int, seats: list[int], record: GameRecord
    ) -> int:
        """Store a game played (:meth:`.LadderStore.save_game`); while the
        database is lost, once it answers again (the game is never played
        twice: one whose transaction committed as the connection went is
        found stored)."""
        lost = False
        while True:
            try:
                if lost and seating in self.store.stored_games(set_id):
                    return 0
                return self.store.save_game(set_id, seating, seats, record, runner=self.runner)
            except DatabaseLost as e:
                lost = True
                await self._database_back(e)

    def _finish(self, set_id: int, members: list[int]) -> None:
        """Finish a set this runner played, every game stored: its members'
        live ratings and sets played (counted here, read again in order when
        catching up)."""
        seq, _, after = self.store.finish_set(set_id, members, self.model.rate, runner=self.runner)
        self.counted.add(seq)
        self.ratings.update(zip(members, after, strict=True))
        self.sets.update(members)

    async def _matchmaking(self) -> None:
        while True:
            held = self._settle_suspended()
            self._form_tables(held)
            with trio.move_on_after(0.5):
                await self.host.arena.wait_for_change()

    # -- leases, registry, standings, progress ------------------------------------------------

    async def _registry(self) -> None:
        while True:
            await trio.sleep(REGISTRY_EVERY)
            changed = self._reload()
            self._reconcile()
            if changed:
                self._close_rotated()
            self._catch_up()

    async def _leases(self) -> None:
        """The heartbeat: this runner's leases renewed, and the sets of a
        process whose lease lapsed (killed, or cut off) taken over, every
        third of a lease."""
        while True:
            self._heartbeat()
            taken = self.store.take_over_lapsed()
            if taken:
                self.stats.sets_taken_over += len(taken)
                self.log.warning("sets_taken_over", sets=taken)
                self.host.arena.notify()
            await trio.sleep(self._beat)

    @property
    def _beat(self) -> float:
        """Seconds between two renewals of this runner's leases."""
        return min(self.options.lease / 3, 2.0)

    def _heartbeat(self) -> None:
        """This runner's leases renewed, its sessions' rows stored again
        where another process removed them."""
        if self._host is not None:
            self._presence()
        kept = self.store.renew(self.runner, self.options.lease)
        self._renewed = time.monotonic()
        if self._host is not None:
            self._restore(kept)

    def _heartbeat_if_due(self) -> None:
        """The heartbeat, from work that keeps the loop busy a while (a long
        catch-up), when a beat is due."""
        if time.monotonic() - self._renewed >= self._beat:
            self._heartbeat()

    def _presence(self) -> None:
        """Session rows for every live hosted session (a dial-in one's is
        stored as it joins), none for a gone one."""
        live: dict[str, int] = {}
        for label, sessions in self.host.pool.items():
            v = self._by_label(label)
            if v is not None:
                live.update({s.id: v.id for s in sessions if s.alive})
        for sid in set(self.presence) - set(live):
            self.store.drop_session(self._row(sid))
            del self.presence[sid]
        for sid in set(live) - set(self.presence):
            self.store.add_session(self._row(sid), self.runner, live[sid], self.options.lease)
            self.presence[sid] = live[sid]

    def _restore(self, kept: set[str]) -> None:
        """Store again the rows of this runner's live sessions that are
        gone (``kept``: the rows still stored): another process removed
        them when this one's lease lapsed. Without its row a session holds
        no slot, and another process would admit one more session of its
        token. A session whose slot another took meanwhile is over the limit:
        closed (UNAVAILABLE; its bot tries again)."""
        sessions = {s.id: s for pool in self.host.pool.values() for s in pool}
        for sid, vid in list(self.presence.items()):
            s = sessions.get(sid)
            if self._row(sid) in kept or s is None or not s.alive:
                continue  # (a gone session's row is dropped by _presence)
            hosted = s.hello.token in self.host.token_owner
            limit = 0 if hosted else self.options.max_sessions_per_token
            if self.store.add_session(self._row(sid), self.runner, vid, self.options.lease, limit):
                self.log.warning("session_restored", session=sid, version=vid)
                continue
            self.log.warning("session_over_limit", session=sid, version=vid)
            s.conn.close(
                CloseCode.UNAVAILABLE,
                f"too many sessions with this access token on this ladder's processes "
                f"({limit} at most): try again later",
            )

    def _standings_argv(self) -> list[str]:
        """The official ratings' process's command."""
        return [
            sys.executable, "-m", "wizard_referee.ladder.standings", STORE_FROM_ENV,
            "--files", str(self.store.files), "--bootstrap", str(self.options.bootstrap),
        ]  # fmt: skip

    async def _standings(self) -> None:
        """The official ratings' process, after sets finished, every
        ``standings_every`` seconds at most; after a failure (it cannot be
        started, or it fails) tried again after a back-off that doubles
        from :data:`STANDINGS_RETRY` to :data:`STANDINGS_RETRY_MAX` seconds,
        the failure kept beside the store for the pages
        (:func:`.standings.write_failure`) until one succeeds."""
        if self.options.bootstrap < 0:
            return
        log = Path(f"{self.store.files}.logs") / "standings.log"
        log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        done = -1
        failures = 0
        launcher = self.host.launcher
        assert launcher is not None
        while True:
            finished, _ = self.store.fingerprint()
            if finished == done or finished == 0:
                await trio.sleep(1.0)
                continue
            started = trio.current_time()
            env = dict(os.environ, **{STORE_ENV: self.store.target})  # (no password in argv)
            error = None
            try:
                proc = await launcher.spawn(self._standings_argv(), env, log, os.getcwd())
            except OSError as e:
                error = f"the official ratings' process cannot start: {e}"
            else:
                while proc.poll() is None:
                    with trio.move_on_after(1.0):
                        await proc.wait()
                    self.point, self.intervals = read_official(self.store.files)
                self.point, self.intervals = read_official(self.store.files)
                if proc.returncode != 0:
                    error = (
                        f"the official ratings' process failed (exit {proc.returncode}): see {log}"
                    )
            if error is None:
                done, failures = finished, 0
                self.standings_failure = None
                write_failure(self.store.files, None)
                pause = self.options.standings_every - (trio.current_time() - started)
            else:
                failures += 1
                pause = min(STANDINGS_RETRY * 2 ** (failures - 1), STANDINGS_RETRY_MAX)
                self.standings_failure = {
                    "error": error,
                    "at": time.time(),
                    "failures": failures,
                    "retry_at": time.time() + pause,
                }
                write_failure(self.store.files, self.standings_failure)
                self.log.error("standings_failed", error=error, failures=failures, retry_in=pause)
            await trio.sleep(max(0.0, pause))

    def standings(self) -> list[dict[str, Any]]:
        """The standings now (:func:`.standings.rows`)."""
        online: Counter[int] = Counter()
        for label, sessions in self.host.pool.items():
            v = self._by_label(label)
            if v is not None:
                online[v.id] += sum(1 for s in sessions if s.alive)
        return rows(
            list(self.versions.values()),
            self.ratings,
            dict(self.sets),
            self.store.game_counts(),
            dict(online),
            self.point,
            self.intervals,
            self.store.abandon_counts(),
        )

    def progress_line(self) -> str:
        counts = self.store.set_counts()
        elapsed = time.monotonic() - self.stats.started
        rate = self.stats.sets_finished / elapsed * 60 if elapsed > 0 else 0.0
        online = sum(1 for v in self.active.values() if self.connected(v))
        best = max(self.ratings.items(), key=lambda kv: ordinal(kv[1]), default=None)
        leader = self.versions[best[0]].label if best and best[0] in self.versions else "-"
        if self.standings_failure is not None:
            official = f"  official ratings failing ({self.standings_failure['error']})"
        elif self.point is not None:
            official = f"  official {max(0.0, time.time() - self.point['computed_at']):.0f} s old"
        else:
            official = ""
        return (
            f"sets {counts.get('finished', 0)} finished, {len(self.running)} playing, "
            f"{counts.get('suspended', 0)} waiting, {counts.get('void', 0)} void  "
            f"games {self.stats.games}  {rate:5.1f} sets/min  online {online}/{len(self.active)}"
            f"  live leader {leader}{official}"
        )

    async def _progress(self, stream: TextIO, every: float) -> None:
        while True:
            await trio.sleep(every)
            stream.write(("\r" if stream.isatty() else "") + self.progress_line())
            stream.write("" if stream.isatty() else "\n")
            stream.flush()

    # -- the database's outages ---------------------------------------------------------

    async def _guarded(self, task: Callable[[], Awaitable[None]]) -> None:
        """Run ``task``; after each loss of the database, again once it answers."""
        while True:
            try:
                await task()
                return
            except DatabaseLost as e:
                await self._database_back(e)

    async def _database_back(self, lost: DatabaseLost) -> None:
        """Wait until a lost database answers again: the first task to find
        it lost starts :meth:`_reconnect`; every other waits with it."""
        if self._reconnected is None:
            self._reconnected = trio.Event()
            self.stats.outages += 1
            self.log.error("database_lost", error=str(lost))
            self.notice(f"warning: {lost}: the ladder waits for its database")
            assert self._nursery is not None
            self._nursery.start_soon(self._reconnect)
        await self._reconnected.wait()

    async def _reconnect(self) -> None:
        """Open the store's connection again, trying after a back-off that
        doubles from :data:`RECONNECT_FIRST` to :data:`RECONNECT_MAX`
        seconds; then this runner's leases are renewed at once (its sets'
        claims, its sessions' rows) before anything else goes on. Only a
        lost connection is tried again: a database that answers with a
        refusal for good (its role or itself gone, a query failing) stops
        the ladder, with that one line."""
        started = trio.current_time()
        delay = RECONNECT_FIRST
        while True:
            await trio.sleep(delay)
            try:
                self.store.db.reconnect()
                self._heartbeat()
                self._release_unplayed()
                break
            except DatabaseLost as e:
                delay = min(delay * 2, RECONNECT_MAX)
                self.log.warning("database_unreachable", error=str(e), retry_in=delay)
            except StorageError as e:
                self.log.error("database_failed", error=str(e))
                raise StorageError(
                    f"the ladder's database came back refusing it: {e} (the ladder stops; "
                    "everything stored is kept)"
                ) from None
        took = trio.current_time() - started
        self.stats.outage_seconds += took
        self.log.warning("database_back", seconds=round(took, 3))
        self.notice(f"the ladder's database answers again (after {took:.0f} s)")
        back, self._reconnected = self._reconnected, None
        assert back is not None
        back.set()
        self.host.arena.notify()

    def _release_unplayed(self) -> None:
        """Suspend the sets this runner claims but does not play: a new set
        or a set claimed again whose transaction committed as the
        connection went (the error reached the runner before it started
        the set). Else its claim, renewed with the others, would hold the
        set ``playing`` while nobody plays it."""
        for set_id in self.store.claimed(self.runner):
            if set_id not in self.running:
                self.store.suspend(set_id, "claimed as the database's connection went", self.runner)
                self.stats.sets_suspended += 1
                self.log.warning("set_suspended", set=set_id, why="claimed as the connection went")

    # -- running -------------------------------------------------------------------------

    def config(self) -> HostConfig:
        """The host's settings: the season's rules and referee, this run's address and limits."""
        hosted = tuple(
            EntrantConfig(v.label, v.command, folder=v.folder or "", **(v.limits or {}))
            for v in self.active.values()
            if v.kind == HOSTED and v.command is not None
        )
        policy = RefereePolicy.from_mapping(
            {
                **self.options.referee,
                "max_sessions_per_token": self.options.max_sessions_per_token,
                **self.season.policy,
            }
        )
        return HostConfig(
            hosted,
            rules=self.season.rules,
            policy=policy,
            parallel=self.options.instances,
            sandbox=self.season.sandbox,
            host=self.options.host,
            port=self.options.port,
            private=self.store.target,
        )

    async def run(
        self,
        progress: TextIO | None = None,
        on_arena: OnArena | None = None,
        *,
        task_status: trio.TaskStatus[Ladder] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        self.store.hold()
        self.versions = {v.id: v for v in self.store.versions()}
        self.registry = self.store.registry_count()
        config = self.config()
        if config.sandbox == "bwrap" and config.entrants:
            # (the hosted entrants' folders, what every entrant sees, this node)
            problems = sandbox_problems(config)
            if problems:
                raise HostError("; ".join(problems))
        self.store.start_runner(self.runner, socket.gethostname(), os.getpid(), self.options.lease)
        self._load()
        self.point, self.intervals = read_official(self.store.files)  # a run's before this one
        book = LadderTokens(self.store, {})
        logs = Path(f"{self.store.files}.logs")
        try:
            async with open_host(
                replace(config, entrants=()),  # the ladder launches them
                self.secret,
                logs,
                self.log,
                self.notice,
                on_arena=on_arena,
                tokens=book,
                open_ended=True,
            ) as host, trio.open_nursery() as nursery:  # fmt: skip
                self._host, self._nursery = host, nursery
                book.hosted = host.token_owner
                host.arena.on_session.append(self._on_session)
                self._reconcile()
                for task in (self._matchmaking, self._registry, self._leases, self._standings):
                    nursery.start_soon(self._guarded, task)
                if progress is not None:
                    nursery.start_soon(self._guarded, partial(self._progress, progress, 5.0))
                self.log.info("ladder_started", address=host.arena.address, runner=self.runner)
                task_status.started(self)
                await self._stop.wait()
                nursery.cancel_scope.cancel()
        finally:
            book.close()
            with trio.CancelScope(shield=True):
                try:
                    self.store.stop_runner(self.runner)
                except DatabaseError as e:  # (its leases lapse instead)
                    self.log.error("runner_not_stopped", error=str(e))
                self.log.info("ladder_stats", **self.stats.as_dict())
                if self.options.report is not None:
                    write_json(self.options.report, self.stats.as_dict())


async def run_ladder(
    path: str | Path,
    options: RunOptions,
    *,
    log: Any,
    notice: Callable[[str], None],
    progress: TextIO | None = None,
    on_arena: OnArena | None = None,
    task_status: trio.TaskStatus[Ladder] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the ladder of the store at ``path`` (a file or a URL) until :meth:`Ladder.stop`
    (``task_status.started`` gets the :class:`Ladder` once its referee serves)."""
    store = LadderStore.open(path)
    try:
        ladder = Ladder(store, options, log, notice)
        await ladder.run(progress, on_arena, task_status=task_status)
    finally:
        store.close()


def _rng(seed: int | None) -> Any:
    import random

    return random.Random(seed) if seed is not None else random.Random(secrets.randbits(64))


def _close(a: tuple[float, float], b: tuple[float, float] | None) -> bool:
    return b is not None and abs(a[0] - b[0]) < 1e-6 and abs(a[1] - b[1]) < 1e-6


def _limit_fields(limits: dict[str, Any]) -> dict[str, Any]:
    """A version's stored limits as :class:`~wizard_referee.sandbox.Limits` fields."""
    names = {"memory_limit": "memory", "max_processes": "processes", "cpu_limit": "cpus"}
    return {names[k]: v for k, v in limits.items() if k in names}
