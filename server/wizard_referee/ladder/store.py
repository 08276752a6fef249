"""The ladder's store: the season, the registry of entrants and their
versions, the runners' and sessions' leases, the duplicate sets with their
games, and the live ratings after each finished set.

Every statement is in :mod:`.sql`, run through the storage room
(:mod:`wizard_referee.storage`): an SQLite file, or a PostgreSQL database
(a ``postgresql://`` URL) that several ladder processes share. Every
change is one transaction: a registry command, a game stored with its
seats' results, a set finished with each member's summed score and live
rating. A set counts only once it is ``finished`` (every game of its deal
stored); a set ``void`` never counts, and its games stay stored, out of
every rating.

Several ladder processes may share a PostgreSQL store (an SQLite one
serves one: :meth:`LadderStore.hold`). Each claims what it plays: a
dial-in session holds one of its entry's slots (:meth:`LadderStore.add_session`), a
set is claimed by the runner that plays it until its lease lapses, and a
game is stored or a set finished only with the set's row locked as that
runner's claim (``FOR UPDATE SKIP LOCKED``); the claims of a runner whose
lease lapsed are taken over (:meth:`LadderStore.take_over_lapsed`). Leases are of the
database's clock (:meth:`LadderStore.clock`).

The tables are a versioned schema (:data:`.sql.LADDER_SCHEMA`): an older
store is migrated when it is opened to write, after a note saying how it
was backed up; a newer one is refused before anything is written.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import secrets
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wizard_referee.ladder import sql
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.sql import LADDER_SCHEMA
from wizard_referee.ratings.models import GameResult
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import (
    Database,
    NotThisStore,
    PlayedGame,
    StorageError,
    StoreExists,
    beside_store,
    game_record,
    is_url,
    open_store,
    remove_store,
    shown,
    store_exists,
    write_game,
)

StoreError = StorageError
"""A store that cannot be used, or a registry change that cannot be made
(one line; nothing was written)."""

Params = Mapping[str, Any]

__all__ = [
    "DIAL_IN",
    "HOSTED",
    "NAME_RULE",
    "Busy",
    "ClaimLost",
    "Entrant",
    "LadderStore",
    "Rating",
    "StoreError",
    "Version",
    "entry_label",
    "new_token",
    "token_hash",
]

DIAL_IN = "dial-in"
HOSTED = "hosted"
#: What an entrant's name may be: it names its entries (``alice@v2``), logs and pages.
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")

Rating = tuple[float, float]
"""A live rating: (mu, sigma)."""


class Busy(StoreError):
    """Another ladder process holds the store (an SQLite store serves one)."""


class ClaimLost(StoreError):
    """A set this process played was taken by another (its claim lapsed)."""


def new_token() -> str:
    """A dial-in entrant's secret token (192 random bits)."""
    return secrets.token_hex(24)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256 (a token is random
    enough that no slow hash is needed to keep it from being guessed).

    >>> token_hash("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def entry_label(name: str, number: int) -> str:
    """The rated entry of version ``number`` of entrant ``name``.

    >>> entry_label("alice", 2)
    'alice@v2'
    """
    return f"{name}@v{number}"


@dataclass(frozen=True)
class Version:
    """One registered version of an entrant: a rated entry of its own."""

    id: int
    entrant_id: int
    name: str
    kind: str
    number: int
    command: tuple[str, ...] | None
    folder: str | None
    limits: dict[str, Any] | None
    created_at: float
    ended_at: float | None
    """When a newer version replaced it, or its entrant retired (None: current)."""
    retired_at: float | None

    @property
    def label(self) -> str:
        return entry_label(self.name, self.number)

    @property
    def active(self) -> bool:
        """The entrant's current version, and the entrant not retired: it plays."""
        return self.ended_at is None and self.retired_at is None


@dataclass(frozen=True)
class Entrant:
    id: int
    name: str
    kind: str
    created_at: float
    retired_at: float | None
    versions: tuple[Version, ...]


class LadderStore:
    """A ladder's store, open (see :meth:`create` and :meth:`open`): an
    SQLite file, or a PostgreSQL database named by a ``postgresql://`` URL."""

    def __init__(self, db: Database, target: str) -> None:
        self.db = db
        self.target = target
        """The store as given: a path or a URL."""
        self.where = db.where
        """The store as it may be printed (a URL without its password)."""
        self.files = beside_store(target, "")
        """What the files a running ladder keeps beside its store are named
        after (its logs ``FILES.logs``, the official ratings): the SQLite
        file's path, or the PostgreSQL database's name in the current folder."""
        self._lock: int | None = None

    @property
    def exclusive(self) -> bool:
        """One ladder process at a time (SQLite): the one that holds it knows
        every claim and session of another runner is void."""
        return self.db.backend == "sqlite"

    # -- opening ----------------------------------------------------------------------

    @classmethod
    def create(cls, target: str | Path, season: Season, now: float | None = None) -> LadderStore:
        """A new store at ``target`` for ``season``: an SQLite file that must
        not exist, or a PostgreSQL database that holds no ladder yet."""
        target = str(target)
        if not is_url(target):
            path = Path(target)
            if path.exists():
                raise StoreError(f"{path} exists: give another file for a new ladder")
            if not path.parent.is_dir():
                raise StoreError(f"{path}: no folder {path.parent} to create it in")
        elif store_exists(target, LADDER_SCHEMA):
            raise StoreError(
                f"{shown(target)} holds a ladder already: give another database for a new one"
            )
        try:  # (made here, or refused having written nothing: another process was first)
            db = open_store(target, LADDER_SCHEMA, new=True)
        except StoreExists:
            raise StoreError(
                f"{shown(target)} holds a ladder already: give another "
                f"{'database' if is_url(target) else 'file'} for a new one"
            ) from None
        store = cls(db, target)
        try:
            with db.transaction():
                store.run(
                    sql.CREATE_SEASON,
                    {
                        "name": season.name,
                        "settings": season.to_json(),
                        "secret": secrets.token_hex(32),
                        "now": store.clock() if now is None else now,
                    },
                )
        except BaseException:
            remove_store(db, LADDER_SCHEMA)  # (this call made it: nothing of another's)
            raise
        return store

    @classmethod
    def open(cls, target: str | Path, *, read_only: bool = False) -> LadderStore:
        """The store at ``target``, migrated to the schema this code writes
        (after a note on standard error) unless ``read_only``; StoreError
        (one line, nothing written) when there is none, it is not a
        ladder's, or its schema is newer than this code's."""
        target = str(target)
        if not is_url(target):
            path = Path(target)
            if path.is_dir():
                raise StoreError(f"{path} is a folder, not a ladder's store")
            if not path.is_file():
                raise StoreError(
                    f"no ladder at {path}: create one with wizard-arena ladder create "
                    f"--database {path}"
                )
        try:
            db = open_store(target, LADDER_SCHEMA, create=False, read_only=read_only)
        except NotThisStore as e:
            if is_url(target):
                raise
            raise NotThisStore(f"{e}: give the file 'wizard-arena ladder create' made") from None
        store = cls(db, target)
        try:
            if not store.rows(sql.SEASON):
                raise StoreError(f"{db.where} holds no season: create one with 'ladder create'")
        except BaseException:
            db.close()
            raise
        return store

    def hold(self) -> None:
        """Hold the store for this ladder process (:class:`Busy` if another
        holds it). On SQLite the lock is an advisory one (``flock``) on a
        file beside the store, ``STORE.lock``, which the kernel releases
        when the process ends however it ends (SIGKILL too), so a restarted
        ladder takes it again at once. A PostgreSQL store is shared: each
        process claims what it plays (leases, row locks)."""
        if not self.exclusive:
            return
        lock = Path(f"{self.target}.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise Busy(
                f"{self.where} is in use by another ladder process ({holder}): an SQLite store "
                "serves one ladder process at a time (several processes share a PostgreSQL "
                "store: --database postgresql://...)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        self._lock = fd

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:
            os.close(self._lock)  # (the kernel releases the lock with the last descriptor)
            self._lock = None

    def __enter__(self) -> LadderStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self, statement: str, params: Params | None = None) -> list[Any]:
        """The rows of a statement of :mod:`.sql` (its ``:name`` parameters from ``params``)."""
        return self.db.execute(statement, params or {}).fetchall()

    def run(self, statement: str, params: Params | None = None) -> int:
        """Run a statement; the rows it changed."""
        return self.db.execute(statement, params or {}).rowcount

    def run_many(self, statement: str, params: Sequence[Params]) -> None:
        """Run a statement once for each of ``params``."""
        if params:
            self.db.executemany(statement, params)

    # -- the season -------------------------------------------------------------------

    def season(self) -> tuple[Season, str, float]:
        """The season's settings, its secret (the bots' seeds, the ids they
        are told, the deals) and when it was created."""
        name, settings, secret, created, _, _ = self.rows(sql.SEASON)[0]
        return Season.from_json(settings, name), str(secret), float(created)

    def registry_count(self) -> int:
        """Bumped by every registry change: a runner reloads when it moves."""
        return int(self.rows(sql.REGISTRY_COUNT)[0][0])

    def fingerprint(self) -> tuple[int, int]:
        """Finished sets and registry changes: what the pages' caches key on."""
        finished, registry = self.rows(sql.FINGERPRINT)[0]
        return int(finished), int(registry)

    # -- the registry -----------------------------------------------------------------

    def _entrant(self, name: str) -> tuple[int, str, float | None]:
        row = self.rows(sql.ENTRANT_BY_NAME, {"name": name})
        if not row:
            raise StoreError(
                f"no entrant named {name!r} in {self.where}: "
                "'wizard-arena ladder list' shows them, 'ladder add' registers one"
            )
        entrant_id, _, kind, _, retired = row[0]
        return int(entrant_id), str(kind), retired

    def add_entrant(
        self,
        name: str,
        *,
        token: str | None = None,
        command: Sequence[str] | None = None,
        folder: str | None = None,
        limits: dict[str, Any] | None = None,
        now: float | None = None,
    ) -> None:
        """Register a dial-in entrant (``token``: the hash of its token is
        kept) or a hosted one (``command``, in ``folder``), its version 1."""
        if not NAME_RULE.fullmatch(name):
            raise StoreError(
                f"{name!r} cannot name an entrant: 1 to 40 letters, digits, '_', '.' or '-', "
                "beginning with a letter or digit"
            )
        if self.rows(sql.ENTRANT_BY_NAME, {"name": name}):
            raise StoreError(
                f"an entrant named {name!r} exists in {self.where} (names are never reused: "
                f"'ladder version {name}' registers a new version)"
            )
        at = self.clock() if now is None else now
        kind = DIAL_IN if command is None else HOSTED
        with self.db.transaction():
            (entrant_id,) = self.rows(sql.ADD_ENTRANT, {"name": name, "kind": kind, "now": at})[0]
            self._add_version(int(entrant_id), 1, token, command, folder, limits, at)

    def _add_version(
        self,
        entrant_id: int,
        number: int,
        token: str | None,
        command: Sequence[str] | None,
        folder: str | None,
        limits: dict[str, Any] | None,
        at: float,
    ) -> None:
        (version_id,) = self.rows(
            sql.ADD_VERSION,
            {
                "entrant": entrant_id,
                "number": number,
                "command": json.dumps(list(command)) if command is not None else None,
                "folder": folder,
                "limits": json.dumps(limits, sort_keys=True) if limits is not None else None,
                "now": at,
            },
        )[0]
        if token is not None:
            self.run(sql.ADD_TOKEN, {"hash": token_hash(token), "version": version_id, "now": at})
        self.run(sql.BUMP_REGISTRY)

    def add_version(
        self,
        name: str,
        *,
        token: str | None = None,
        command: Sequence[str] | None = None,
        folder: str | None = None,
        limits: dict[str, Any] | None = None,
        now: float | None = None,
    ) -> int:
        """A new version of ``name`` (a dial-in entrant's with a new
        ``token``; a hosted one's with its ``command``, ``folder`` and
        ``limits``, each the previous version's where None): it replaces
        the current one, whose rating stays as it was and whose token is
        refused from now on. Its number."""
        entrant_id, kind, retired = self._entrant(name)
        if retired is not None:
            raise StoreError(f"entrant {name!r} is retired: it takes no new version")
        if kind == DIAL_IN and (command is not None or folder is not None or limits is not None):
            raise StoreError(
                f"entrant {name!r} dials in: a new version is a new token, not a command or folder"
            )
        if kind == HOSTED and token is not None:
            raise StoreError(f"entrant {name!r} is hosted: its versions have no token of theirs")
        at = self.clock() if now is None else now
        current = self.rows(sql.CURRENT_VERSION, {"entrant": entrant_id})
        number = int(self.rows(sql.LAST_VERSION_NUMBER, {"entrant": entrant_id})[0][0]) + 1
        with self.db.transaction():
            for version_id, _, old_command, old_folder, old_limits in current:
                self.run(sql.END_VERSION, {"id": version_id, "now": at})
                self.run(
                    sql.REVOKE_TOKENS,
                    {"version": version_id, "now": at, "why": f"replaced by version {number}"},
                )
                if kind == HOSTED:
                    command = command or (json.loads(old_command) if old_command else None)
                    folder = folder if folder is not None else old_folder
                    limits = limits if limits is not None else _json(old_limits)
            self._add_version(entrant_id, number, token, command, folder, limits, at)
        return number

    def retire(self, name: str, now: float | None = None) -> None:
        """Retire ``name``: it plays no more, its ratings stay, its token is refused."""
        entrant_id, _, retired = self._entrant(name)
        if retired is not None:
            raise StoreError(f"entrant {name!r} is retired already")
        at = self.clock() if now is None else now
        with self.db.transaction():
            self.run(sql.RETIRE_ENTRANT, {"id": entrant_id, "now": at})
            for version_id, *_ in self.rows(sql.CURRENT_VERSION, {"entrant": entrant_id}):
                self.run(sql.END_VERSION, {"id": version_id, "now": at})
                self.run(sql.REVOKE_TOKENS, {"version": version_id, "now": at, "why": "retired"})
            self.run(sql.BUMP_REGISTRY)

    def rotate_token(self, name: str, token: str, now: float | None = None) -> None:
        """Give ``name``'s current version a new token (the old one is refused
        from now on); its rating is the same entry's."""
        entrant_id, kind, retired = self._entrant(name)
        if retired is not None:
            raise StoreError(f"entrant {name!r} is retired: it has no token to rotate")
        if kind != DIAL_IN:
            raise StoreError(
                f"entrant {name!r} is hosted: the ladder gives its processes a fresh token "
                "at each start, so it has none to rotate"
            )
        at = self.clock() if now is None else now
        (version_id, *_) = self.rows(sql.CURRENT_VERSION, {"entrant": entrant_id})[0]
        with self.db.transaction():
            self.run(sql.REVOKE_TOKENS, {"version": version_id, "now": at, "why": "rotated"})
            self.run(sql.ADD_TOKEN, {"hash": token_hash(token), "version": version_id, "now": at})
            self.run(sql.BUMP_REGISTRY)

    def token(self, token: str) -> tuple[int, str | None] | None:
        """The version a dial-in token belongs to, and why it is refused
        (None: it is good); None for a token never issued."""
        rows = self.rows(sql.TOKEN, {"hash": token_hash(token)})
        if not rows:
            return None
        version_id, revoked_at, why = rows[0]
        return int(version_id), (str(why or "revoked") if revoked_at is not None else None)

    def versions(self) -> list[Version]:
        """Every version of every entrant, by name and number."""
        return [
            Version(
                int(r[0]),
                int(r[1]),
                str(r[2]),
                str(r[3]),
                int(r[4]),
                tuple(json.loads(r[5])) if r[5] else None,
                r[6],
                _json(r[7]),
                float(r[8]),
                r[9],
                r[10],
            )
            for r in self.rows(sql.VERSIONS)
        ]

    def entrants(self) -> list[Entrant]:
        """Every entrant with its versions, by name."""
        versions: dict[int, list[Version]] = {}
        for v in self.versions():
            versions.setdefault(v.entrant_id, []).append(v)
        return [
            Entrant(int(r[0]), str(r[1]), str(r[2]), float(r[3]), r[4], tuple(versions[r[0]]))
            for r in self.rows(sql.ENTRANTS)
        ]

    # -- runners and sessions -----------------------------------------------------------

    def clock(self) -> float:
        """The database's time (Unix seconds): what every lease is of, one
        clock for every process sharing the store, whatever its machine's."""
        return float(self.rows(sql.CLOCK.format(now=self.db.now()))[0][0])

    def start_runner(self, runner: str, host: str, pid: int, lease: float) -> None:
        """Record this ladder process; on a store one process holds
        (:attr:`exclusive`) every other runner has gone, so its
        claims and sessions are void. Sets whose claim lapsed wait for their
        members (``suspended``); expired session rows go."""
        with self.db.transaction():
            now = self.clock()
            self.run(
                sql.ADD_RUNNER,
                {"id": runner, "host": host, "pid": pid, "now": now, "expires": now + lease},
            )
            if self.exclusive:  # every other runner has gone: its leases lapse now
                self.run(sql.END_OTHER_RUNNERS, {"id": runner, "now": now})
                self.run(sql.LAPSE_OTHER_CLAIMS, {"id": runner, "now": now})
                self.run(sql.DROP_OTHER_SESSIONS, {"id": runner})
        self.take_over_lapsed()

    def take_over_lapsed(self) -> list[int]:
        """Sets whose runner's claim lapsed (it stopped, or was killed, or
        lost the database longer than its lease) wait for their members
        (``suspended``), to be played on by whichever process has them all,
        or voided; expired session rows go. Each set is locked as it is
        taken (``FOR UPDATE SKIP LOCKED``), so that processes doing this
        at once take each set once. The sets taken."""
        with self.db.transaction():
            now = self.clock()
            lapsed = self.rows(self.db.locked(sql.LAPSED_CLAIMS), {"now": now})
            taken = [
                int(set_id)
                for (set_id,) in lapsed
                if self.run(sql.ORPHANED_TO_SUSPENDED, {"id": set_id, "now": now}) == 1
            ]
        self.run(sql.DROP_EXPIRED_SESSIONS, {"now": now})  # (a statement of its own)
        return taken

    def renew(self, runner: str, lease: float) -> set[str]:
        """Extend this runner's lease, its sessions' and its sets' claims
        (the heartbeat: every third of a lease). The sessions whose rows are
        still stored: a row missing was removed by another process when its
        lease lapsed (this one stalled, or lost the database, longer than a
        lease), and must be stored again (:meth:`add_session`) for its
        entry's limit to hold."""
        with self.db.transaction():
            now = self.clock()
            expires = now + lease
            for host, pid, started, until in self.rows(
                sql.LAPSED_RUNNER, {"id": runner, "now": now}
            ):  # (its time cut off is no running time: :meth:`running_seconds`)
                span = {"id": f"{runner}~{float(started)!r}", "host": host, "pid": pid}
                self.run(sql.ADD_SPAN, {**span, "started": started, "until": until})
                self.run(sql.RESTART_RUNNER, {"id": runner, "now": now})
            self.run(sql.RENEW_RUNNER, {"id": runner, "expires": expires})
            kept = self.rows(sql.RENEW_SESSIONS, {"runner": runner, "expires": expires})
            self.run(sql.RENEW_CLAIMS, {"runner": runner, "expires": expires})
        return {str(r[0]) for r in kept}

    def stop_runner(self, runner: str) -> None:
        """This runner stops: its sets wait for their members, its sessions go."""
        with self.db.transaction():
            now = self.clock()
            self.run(sql.STOP_RUNNER, {"id": runner, "now": now})
            self.run(sql.LAPSE_OWN_CLAIMS, {"id": runner, "now": now})
            self.run(sql.DROP_RUNNER_SESSIONS, {"id": runner})
        self.take_over_lapsed()

    def add_session(
        self, session: str, runner: str, version: int, lease: float, limit: int = 0
    ) -> bool:
        """Record a session of ``version`` on ``runner``, within ``limit``
        sessions of the version on every process sharing the store (0: no
        limit): each takes a slot of its version (one of ``0 .. limit-1``),
        which a unique index keeps to one live session. False: every slot
        is held (nothing written). Each slot is tried in a statement of its
        own, which waits for one row at most: never a deadlock with another
        process's. A row of ``session`` stored already (its insert committed
        as the connection went: the runner never learnt it) is replaced."""
        self.run(sql.DROP_SESSION, {"id": session})  # (the id is this runner's alone)
        now = self.clock()
        row = {
            "id": session,
            "runner": runner,
            "version": version,
            "now": now,
            "expires": now + lease,
            "slot": None,
        }
        if limit <= 0:
            return self.run(sql.ADD_SESSION, row) == 1
        return any(self.run(sql.ADD_SESSION, {**row, "slot": slot}) == 1 for slot in range(limit))

    def drop_session(self, session: str) -> None:
        with self.db.transaction():
            self.run(sql.DROP_SESSION, {"id": session})

    def running(self) -> int:
        """Ladder processes running the season now (their leases running)."""
        return int(self.rows(sql.RUNNING, {"now": self.clock()})[0][0])

    def online(self) -> dict[int, int]:
        """Sessions connected now, by version."""
        return {int(v): int(n) for v, n in self.rows(sql.ONLINE, {"now": self.clock()})}

    def connected_by_runner(self) -> dict[str, set[int]]:
        """The versions each live runner (its lease running) has connected now."""
        by_runner: dict[str, set[int]] = {}
        for runner, version in self.rows(sql.LIVE_SESSIONS, {"now": self.clock()}):
            by_runner.setdefault(str(runner), set()).add(int(version))
        return by_runner

    def connected_together(self, versions: Sequence[int]) -> list[str]:
        """The live runners (their leases running) on which every one of
        ``versions`` is connected now: those that can play a set of them."""
        by_runner = self.connected_by_runner()
        return sorted(r for r, connected in by_runner.items() if set(versions) <= connected)

    # -- sets ---------------------------------------------------------------------------

    def new_set(
        self, seats: Sequence[int], runner: str, lease: float, secret: str
    ) -> tuple[int, str]:
        """A new duplicate set among versions ``seats`` (in table order),
        claimed by ``runner``; its deal follows from the season's secret
        and the set's id. The set's id and deal seed."""
        with self.db.transaction():
            now = self.clock()
            (set_id,) = self.rows(
                sql.ADD_SET,
                {
                    "seats": json.dumps(list(seats)),
                    "now": now,
                    "runner": runner,
                    "expires": now + lease,
                },
            )[0]
            deal = deal_seed(secret, int(set_id))
            self.run(sql.SET_DEAL, {"id": set_id, "deal": deal})
        return int(set_id), deal

    def claim(self, set_id: int, runner: str, lease: float) -> bool:
        """Take a suspended set to play it on: locked first (``FOR UPDATE SKIP
        LOCKED``), so that of processes claiming it at once one has it.
        False: it is not suspended now, or another process is taking it."""
        with self.db.transaction():
            if not self.rows(self.db.locked(sql.SUSPENDED_SET), {"id": set_id}):
                return False
            expires = self.clock() + lease
            params = {"id": set_id, "runner": runner, "expires": expires}
            return self.run(sql.CLAIM_SUSPENDED, params) == 1

    def claimed(self, runner: str) -> list[int]:
        """The sets ``runner`` claims (``playing``)."""
        return [int(r[0]) for r in self.rows(sql.OWN_SETS, {"runner": runner})]

    def _hold_claim(self, set_id: int, runner: str) -> None:
        """Inside a transaction: lock set ``set_id`` as ``runner``'s claim
        (:class:`ClaimLost` if it is not, any more)."""
        if not self.rows(self.db.locked(sql.CLAIMED), {"id": set_id, "runner": runner}):
            raise ClaimLost(
                f"set {set_id} is no longer claimed by this ladder process (its claim lapsed "
                "and another process took it): it is left to that one"
            )

    def suspend(self, set_id: int, why: str, runner: str) -> None:
        with self.db.transaction():
            params = {"id": set_id, "now": self.clock(), "why": why, "runner": runner}
            self.run(sql.SUSPEND_SET, params)

    def void(self, set_id: int, why: str, runner: str = "") -> bool:
        """Void a set that has not finished (one waiting for its members, or
        one ``runner`` plays): none of its games counts."""
        with self.db.transaction():
            params = {"id": set_id, "now": self.clock(), "why": why, "runner": runner}
            return self.run(sql.VOID_SET, params) == 1

    def suspended(self) -> list[tuple[int, list[int], str, float, str, str]]:
        """Sets waiting for a member: id, seats, deal seed, since when, why,
        and the runner that suspended it (its holder; "" for a set whose
        runner stopped or was killed)."""
        return [
            (int(r[0]), json.loads(r[1]), str(r[2]), float(r[3]), str(r[4] or ""), str(r[5] or ""))
            for r in self.rows(sql.SUSPENDED_SETS)
        ]

    def abandon(self, set_id: int, versions: Sequence[int]) -> bool:
        """Record that ``versions`` left set ``set_id`` (waiting for them,
        suspended) and did not come back within the return window: the
        rest of the set is played with their seats' default action. False:
        the set is not suspended now (another process settled it)."""
        with self.db.transaction():
            if not self.rows(self.db.locked(sql.SUSPENDED_SET), {"id": set_id}):
                return False
            now = self.clock()
            self.run_many(
                sql.ADD_ABANDON, [{"set": set_id, "version": v, "now": now} for v in versions]
            )
        return True

    def abandoned(self, set_id: int) -> set[int]:
        """The versions that abandoned set ``set_id`` (their seats are played
        by the default action)."""
        if not self._abandons:
            return set()
        return {int(v) for (v,) in self.rows(sql.ABANDONED_IN, {"set": set_id})}

    def abandon_counts(self) -> dict[int, int]:
        """Sets each version abandoned."""
        if not self._abandons:
            return {}
        return {int(v): int(n) for v, n in self.rows(sql.ABANDON_COUNTS)}

    @functools.cached_property
    def _abandons(self) -> bool:
        """Whether the store records abandons (a reader of a store of an
        older schema, not migrated, finds none)."""
        return not self.db.read_only or "abandons" in self.db.tables()

    def running_seconds(self, since: float, now: float) -> float:
        """Seconds between ``since`` and ``now`` during which a ladder process
        was running (its lease held): the time an interrupted set's members
        had to come back. A clean stop, a process killed (from the end of
        its lease) and a database lost for longer than a lease (from the end
        of the lease to its renewal: :meth:`renew`) do not count."""
        spans = sorted(
            (max(float(a), since), min(float(b), now))
            for a, b in self.rows(sql.RUNNING_SINCE, {"since": since})
        )
        total, reach = 0.0, since
        for a, b in spans:
            a = max(a, reach)
            if b > a:
                total += b - a
                reach = b
        return total

    def set_row(self, set_id: int) -> dict[str, Any] | None:
        rows = self.rows(sql.SET_ROW, {"id": set_id})
        if not rows:
            return None
        r = rows[0]
        keys = ("id", "seats", "deal_seed", "status", "created_at", "suspended_at", "ended_at")
        out = dict(zip(keys, r, strict=False))
        out["seats"] = json.loads(r[1])
        out["finish_seq"], out["why"] = r[7], r[8]
        return out

    def set_counts(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self.rows(sql.SET_COUNTS)}

    def stored_games(self, set_id: int) -> dict[int, str]:
        """The games of a set stored so far: seating -> status."""
        return {int(s): str(st) for s, st in self.rows(sql.GAMES_OF_SET, {"set": set_id})}

    def save_game(
        self,
        set_id: int,
        seating: int,
        seats: Sequence[int],
        record: GameRecord,
        *,
        runner: str,
    ) -> int:
        """A game of a set ``runner`` claims, with its seats' results when it
        finished, in one transaction; a game stored already is refused
        (never counted twice), and so is one of a set whose claim another
        process took (:class:`ClaimLost`). The bytes of its record."""
        game = PlayedGame.of(record)
        with self.db.transaction():
            self._hold_claim(set_id, runner)
            write_game(
                self.db,
                game,
                planned=False,
                seats=seats,
                columns={"set_id": set_id, "seating": seating},
                seat_columns=[{"version_id": version} for version in seats],
            )
            self.run(sql.GAME_STORED, {"set": set_id})
        return len(game.record)

    def finish_set(
        self,
        set_id: int,
        seats: Sequence[int],
        rate: Callable[[list[Rating | None], list[int]], list[Rating]],
        *,
        runner: str,
    ) -> tuple[int, dict[int, int], list[Rating]]:
        """Finish a set whose every game is stored, in one transaction: its
        place in the order of finishing, each member's summed score, and the
        live ratings ``rate`` gives from the members' last ones (None: no
        set yet) and the scores, in table order. Returns the place, the
        scores by version and the new ratings."""
        with self.db.transaction():
            self._hold_claim(set_id, runner)
            (seq,) = self.rows(sql.NEXT_FINISH)[0]
            scores = {int(v): int(s) for v, s in self.rows(sql.SET_SCORES, {"set": set_id})}
            prior: list[Rating | None] = []
            for v in seats:
                last = self.rows(sql.LAST_RATING, {"version": v})
                prior.append((float(last[0][0]), float(last[0][1])) if last else None)
            after = rate(prior, [scores[v] for v in seats])
            params = {"id": set_id, "now": self.clock(), "seq": seq, "runner": runner}
            if self.run(sql.FINISH_SET, params) != 1:
                raise StoreError(f"set {set_id} is not being played: it cannot finish")
            self.run_many(
                sql.ADD_SET_RESULT,
                [
                    {
                        "set": set_id,
                        "version": v,
                        "seq": seq,
                        "score": scores[v],
                        "mu": m,
                        "sigma": s,
                    }
                    for v, (m, s) in zip(seats, after, strict=True)
                ],
            )
        return int(seq), scores, after

    # -- reading ------------------------------------------------------------------------

    def finished_sets(self) -> Iterator[tuple[int, list[int], dict[int, tuple[int, Rating]]]]:
        """Each finished set in the order of finishing: its id, seats and
        each member's summed score and live rating after it."""
        for _, set_id, seats, results in self.finished_after(0):
            yield set_id, seats, results

    def finished_after(
        self, after: int, limit: int | None = None
    ) -> list[tuple[int, int, list[int], dict[int, tuple[int, Rating]]]]:
        """The sets finished after place ``after`` in the order of finishing
        (whichever process finished them), in that order, the first
        ``limit`` of them (None: all): place, id, seats, each member's
        summed score and live rating after it."""
        every = 2**62 if limit is None else limit
        sets = self.rows(sql.FINISHED_SETS, {"after": after, "limit": every})
        if not sets:
            return []
        upto = max(int(r[2]) for r in sets)  # (read first: each has its results)
        results: dict[int, dict[int, tuple[int, Rating]]] = {}
        found = self.rows(sql.SET_RESULTS, {"after": after, "upto": upto})
        for set_id, version, _, score, mu, sigma in found:
            results.setdefault(int(set_id), {})[int(version)] = (
                int(score),
                (float(mu), float(sigma)),
            )
        return [
            (int(seq), int(set_id), json.loads(seats), results.get(int(set_id), {}))
            for set_id, seats, seq in sets
        ]

    def rated_games(self, labels: dict[int, str]) -> list[GameResult]:
        """The games of every finished set, each a result of the entries'
        labels and totals in its duplicate set: the official ratings' input
        (checked when they were stored: read back unchecked)."""
        games: list[GameResult] = []
        current: str | None = None
        players: list[str] = []
        totals: list[int] = []
        unit = 0
        make = GameResult.unchecked
        for set_id, game_id, version, total in self.rows(sql.RATED_SEATS):
            if game_id != current:
                if current is not None:
                    games.append(make(tuple(players), tuple(totals), unit))
                current, players, totals, unit = game_id, [], [], set_id
            players.append(labels[version])
            totals.append(total)
        if current is not None:
            games.append(make(tuple(players), tuple(totals), unit))
        return games

    def set_counts_by_version(self) -> dict[int, int]:
        """Finished sets each version played."""
        return {int(v): int(n) for v, n in self.rows(sql.SETS_BY_VERSION)}

    def game_counts(self) -> dict[int, int]:
        """Games each version played in finished sets."""
        return {int(v): int(n) for v, n in self.rows(sql.GAME_COUNTS)}

    def game(self, game_id: str) -> tuple[GameRecord, str] | None:
        """A stored game's record and its set's status."""
        text, found = game_record(self.db, game_id), self.game_set(game_id)
        if text is None or found is None:
            return None
        return GameRecord.from_json(text), found[1]

    def game_set(self, game_id: str) -> tuple[int, str] | None:
        """The set of a stored game and the set's status."""
        rows = self.rows(sql.GAME_SET, {"id": game_id})
        return None if not rows else (int(rows[0][0]), str(rows[0][1]))

    def set_statuses(self, set_ids: Sequence[int]) -> dict[int, str]:
        """The status of each of sets ``set_ids`` (those that exist)."""
        out = {}
        for set_id in set(set_ids):
            found = self.rows(sql.SET_STATUS, {"id": set_id})
            if found:
                out[set_id] = str(found[0][0])
        return out

    def history(self, entrant_id: int) -> list[tuple[int, int, Rating]]:
        """An entrant's live rating after each of its finished sets: the
        set's place in the season's order, the version, (mu, sigma)."""
        return [
            (int(seq), int(v), (float(mu), float(sigma)))
            for seq, v, mu, sigma in self.rows(sql.HISTORY_OF, {"entrant": entrant_id})
        ]


def deal_seed(secret: str, set_id: int) -> str:
    """The deal of set ``set_id``: from the season's secret, so that no bot
    can rebuild the deals from anything it is told.

    >>> deal_seed("k" * 64, 7) == deal_seed("k" * 64, 7) != deal_seed("k" * 64, 8)
    True
    """
    return hashlib.sha256(f"ladder deal\0{secret}\0{set_id}".encode()).hexdigest()[:32]


def _json(text: str | None) -> Any:
    return json.loads(text) if text else None
