"""A database, SQLite or PostgreSQL, behind one interface.

A store is named by a *target*: a ``postgresql://`` (or ``postgres://``)
URL opens PostgreSQL (:mod:`.postgres`), anything else is the path of an
SQLite file (:mod:`.sqlite`). Callers write portable SQL: ``?``
placeholders with a sequence of values, or ``:name`` ones with a mapping
(:func:`bind`; both translated for psycopg), types both accept (``TEXT``,
``INTEGER``, ``BIGINT``, ``DOUBLE PRECISION``), ``INSERT ... ON CONFLICT``,
no statement of one backend alone (``PRAGMA``); the few expressions that
differ are methods here (:meth:`Database.json_text`,
:meth:`Database.locked`).

Every driver error of a query is a :class:`DatabaseError` (a
:class:`StorageError`: one line, the store's name and the driver's reason),
so that no caller imports ``sqlite3`` or ``psycopg`` to catch one.

>>> is_url("postgresql://arena@db.example/season"), is_url("results.sqlite")
(True, False)
>>> shown("postgresql://arena:s3cret@db.example/season?password=x&sslmode=require")
'postgresql://arena:***@db.example/season?password=***&sslmode=require'
>>> beside_store("runs/t.sqlite", ".logs").as_posix()
'runs/t.sqlite.logs'
>>> beside_store("postgresql://arena@db.example/season", ".logs").as_posix()
'season.logs'
>>> bind("UPDATE t SET a = :x WHERE b = :y AND c < :x - 1", {"x": 1, "y": 2})
('UPDATE t SET a = ? WHERE b = ? AND c < ? - 1', [1, 2, 1])
>>> bind("SELECT ':x', v::text FROM t WHERE k = :k", {"k": 3})
("SELECT ':x', v::text FROM t WHERE k = ?", [3])
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

__all__ = [
    "Database",
    "DatabaseError",
    "Params",
    "Rows",
    "StorageError",
    "beside_store",
    "bind",
    "database_target",
    "is_url",
    "open_database",
    "shown",
]

_SCHEMES = ("postgresql://", "postgres://")
_ANY_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A quoted literal or identifier (kept as it is), or a ``:name`` parameter
#: (not PostgreSQL's ``::type`` cast).
_NAMED = re.compile(r"'[^']*'|\"[^\"]*\"|(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)")

Params = Sequence[Any] | Mapping[str, Any]
"""A statement's parameters: values in the order of its ``?`` placeholders,
or values by the names of its ``:name`` ones."""


class StorageError(ValueError):
    """A store that cannot be used: missing, not a store, unreachable, of a
    newer schema (the message is one line and says which and why)."""


class DatabaseError(StorageError):
    """A query the database refused or could not answer (the driver's
    error, as one line naming the store)."""

    def __init__(self, where: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{where}: {reason}")


class DatabaseLost(DatabaseError):
    """The connection to the database is lost (its server stopped or
    restarted, the network cut): :meth:`Database.reconnect` opens another
    once it answers again."""


def first_line(error: BaseException) -> str:
    """A driver error's message, its first non-empty line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def is_url(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database (else: an SQLite file)."""
    return str(target).startswith(_SCHEMES)


#: The kinds of database a store may be, as a refusal names them.
KINDS = "an SQLite file's path or a postgresql:// (postgres://) URL"


def database_target(text: str) -> str:
    """``--database``'s type: ``text`` unchanged when it is a PostgreSQL URL
    or not a URL at all (an SQLite file's path); a URL of another kind
    (``mysql://x/y``) is refused then, in one line that names the kinds,
    rather than taken for a file's path."""
    if _ANY_URL.match(text) and not is_url(text):
        import argparse

        raise argparse.ArgumentTypeError(
            f"{shown(text)}: not a kind of database this stores to; give {KINDS}"
        )
    return text


def shown(target: str | Path) -> str:
    """``target`` as it may be printed and logged: a URL's password hidden."""
    text = str(target)
    if not _ANY_URL.match(text):
        return text
    text = re.sub(r"^([a-z]+://[^:/@?]*):[^@/?]*@", r"\1:***@", text)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", text)


def beside_store(target: str | Path, suffix: str) -> Path:
    """A path named after the store: ``FILE{suffix}`` beside an SQLite file,
    ``DBNAME{suffix}`` in the current folder for a PostgreSQL database
    (e.g. a tournament's logs folder, ``.logs``)."""
    if not is_url(target):
        return Path(f"{target}{suffix}")
    name = unquote(urlsplit(str(target)).path.lstrip("/")) or "postgres"
    return Path(name.replace("/", "_") + suffix)


@functools.lru_cache(maxsize=512)
def _named(sql: str) -> tuple[str, tuple[str, ...]]:
    names: list[str] = []

    def one(m: re.Match[str]) -> str:
        if m[1] is None:
            return m[0]
        names.append(m[1])
        return "?"

    return _NAMED.sub(one, sql), tuple(names)


def bind(sql: str, params: Params = ()) -> tuple[str, Sequence[Any]]:
    """``sql`` with ``?`` placeholders and its values in their order: as given
    for a sequence, or from a mapping by the ``:name`` placeholders (outside
    quotes) of ``sql``, each ``?`` then (a name may occur more than once)."""
    if not isinstance(params, Mapping):
        return sql, params
    text, names = _named(sql)
    return text, [params[n] for n in names]


class Rows(Protocol):
    """What a query returns (an SQLite or psycopg cursor): rows as tuples."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Database(ABC):
    """One connection to a store's database, SQLite or PostgreSQL.

    Statements run one by one (autocommit) unless inside
    :meth:`transaction`, which is what every write of more than one
    statement uses. Not shared between threads: each thread opens its own.
    """

    backend: str
    """``sqlite`` or ``postgresql``."""
    described: str
    """``an SQLite database`` or ``a PostgreSQL database``, for messages."""
    id_column: str
    """The column type of an id the database assigns on insert (a
    migration's ``{id}``; ``INSERT ... RETURNING id`` reads it back)."""

    def __init__(self, target: str, *, read_only: bool) -> None:
        self.target = target
        self.where = shown(target)
        """The store's name as it may be printed (no password)."""
        self.read_only = read_only

    def execute(self, sql: str, params: Params = ()) -> Rows:
        """Run one statement (``?`` placeholders with a sequence, ``:name``
        ones with a mapping: :func:`bind`); its rows."""
        return self._execute(*bind(sql, params))

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once per row of parameters (each as :meth:`execute`'s)."""
        self._executemany(_named(sql)[0], (bind(sql, row)[1] for row in rows))

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any]) -> Rows:
        """Run one statement with ``?`` placeholders; its rows."""

    @abstractmethod
    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement with ``?`` placeholders once per row of values."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A transaction (not nested in another): committed when the block
        ends, rolled back when it raises. SQLite takes the database's write lock at once (``BEGIN
        IMMEDIATE``: no other writer until it ends); PostgreSQL's is ``READ
        COMMITTED``, with row locks where a statement takes them
        (:meth:`locked`)."""

    def locked(self, select: str) -> str:
        """``select`` made to lock the rows it returns until the transaction
        ends, skipping rows another transaction holds (PostgreSQL: ``FOR
        UPDATE SKIP LOCKED``): how several processes sharing one database
        each claim different rows. SQLite has no row locks and needs none:
        a transaction holds the whole database's write lock, so ``select``
        is returned as it is."""
        return select

    def reconnect(self) -> None:
        """Open the connection again after :class:`DatabaseLost` (StorageError
        while the database does not answer). Nothing for a database that is
        a file (SQLite: never lost)."""
        return

    @abstractmethod
    def lock_schema(self) -> None:
        """Inside a transaction: wait until no other connection changes the
        schema (migrations run one at a time)."""

    @abstractmethod
    def now(self) -> str:
        """The SQL expression of the database's clock, in seconds since the
        epoch (a ``DOUBLE PRECISION``): one clock for every process that
        shares the database, whatever machine it runs on (a lease's expiry)."""

    @abstractmethod
    def json_text(self, column: str, *keys: str) -> str:
        """The SQL expression of the value at ``keys`` in the JSON text of
        ``column``, as text (NULL where absent). Keys are plain names."""

    @abstractmethod
    def tables(self) -> set[str]:
        """The names of the tables in the database (its current schema)."""

    @abstractmethod
    def ready_for_writes(self) -> None:
        """Settings a writer needs, once the database is known to be a store
        (SQLite: WAL and a full sync; nothing is set on a file that is not one)."""

    @abstractmethod
    def backup_note(self, found: int, current: int) -> str:
        """Back the store up before a migration from schema ``found`` to
        ``current`` where this backend can (SQLite: a copy of the file);
        the note that says what was done."""

    @abstractmethod
    def remove(self, tables: Sequence[str]) -> None:
        """Remove what a store made and close: the file and its journals
        (SQLite), or ``tables`` (PostgreSQL: the database is the
        organiser's and stays)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    def abandon(self) -> None:
        """Close a database found not to be a store, leaving it as it was."""
        self.close()

    @staticmethod
    def json_keys(keys: Sequence[str]) -> Sequence[str]:
        """``keys`` checked to be plain names (they are written into SQL)."""
        for key in keys:
            if not _KEY.match(key):
                raise ValueError(f"a JSON key must be a plain name, not {key!r}")
        return keys


def open_database(target: str | Path, *, create: bool = True, read_only: bool = False) -> Database:
    """Connect to ``target``: a ``postgresql://`` URL or an SQLite file's
    path. ``create=False`` (or ``read_only``): the file must exist.
    :class:`StorageError` (one line) when it cannot be opened."""
    text = str(target)
    if is_url(text):
        from wizard_referee.storage.postgres import PostgresDatabase

        return PostgresDatabase.connect(text, read_only=read_only)
    if _ANY_URL.match(text):
        raise StorageError(f"{shown(text)}: not a kind of database this stores to; give {KINDS}")
    from wizard_referee.storage.sqlite import SQLiteDatabase

    return SQLiteDatabase.connect(Path(text), create=create, read_only=read_only)
