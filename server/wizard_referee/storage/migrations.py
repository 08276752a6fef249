"""Versioned schemas and their migrations, the same for SQLite and PostgreSQL.

A :class:`Schema` is a list of :class:`Migration` s, version 1 upwards, each
a few portable statements. The table ``schema_version`` holds, for each
schema in the database (its ``component``: ``tournament``, ...), the
version it is at. :func:`open_store` opens a store and brings it to the
schema this program writes:

- a new store (no table of the schema): every migration, in one transaction;
- an older one: a note first (SQLite: a copy of the file is kept, named in
  the note), then the missing migrations, in one transaction, under a lock
  that makes a second process wait and then find nothing left to do;
- a newer one: refused in one line (this program cannot know its tables);
- a store made before versions were kept (:attr:`Schema.unversioned`):
  the version its tables are, written down.

Tables every kind of store has (the played games': :mod:`.games`) evolve
apart from any one store's: their own schema (:attr:`Schema.shared`),
with its own row in ``schema_version``, which rides with each store's:
made, migrated (in the same transaction, after the same note) or refused
with it.

A read-only open changes nothing: it reads a store of any version from
:attr:`Schema.readable_from` to the current one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wizard_referee.storage.database import (
    Database,
    DatabaseError,
    StorageError,
    is_url,
    open_database,
)

__all__ = [
    "VERSION_TABLE",
    "Migration",
    "NotThisStore",
    "Schema",
    "SchemaTooNew",
    "StoreExists",
    "open_store",
    "remove_store",
    "store_exists",
    "stored_version",
    "written_version",
]

VERSION_TABLE = "schema_version"
_VERSION_DDL = (
    f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} ("
    " component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


class SchemaTooNew(StorageError):
    """A store written by a newer program, of a schema this one does not know."""


class NotThisStore(StorageError):
    """The database is there but does not hold the schema asked for (another
    program's file, another kind of store)."""


class StoreExists(StorageError):
    """A new store was asked for (``open_store(new=True)``) where one is."""


@dataclass(frozen=True)
class Migration:
    """What brings a store to ``version`` from the version before it."""

    version: int
    steps: tuple[str, ...]
    """Portable SQL statements, run in order in one transaction; ``{id}``
    in one is the column of an id the database assigns
    (:attr:`.Database.id_column`)."""


@dataclass(frozen=True)
class Schema:
    """A store's tables, as the migrations that make them."""

    component: str
    """Its row in ``schema_version`` (several schemas may share a database)."""
    what: str
    """What a store of it holds, for messages: ``a tournament's results``."""
    noun: str
    """What a store of it is called, for messages: ``a results database``."""
    migrations: tuple[Migration, ...]
    tables: tuple[str, ...]
    """Every table of the current version, those that refer to others first
    (the order they are dropped in)."""
    marks: frozenset[str]
    """Tables whose presence says a database holds this schema."""
    unversioned: int | None = None
    """The version of a store made before ``schema_version`` existed (its
    :attr:`marks` present, no version row); None: there is no such store."""
    readable_from: int = 1
    """The oldest version a reader of this program reads without migrating."""
    shared: tuple[Schema, ...] = ()
    """Schemas of tables this store shares with other kinds of store (the
    played games': :data:`.GAMES_SCHEMA`), each with its own row in
    ``schema_version`` and its own migrations: brought to their versions
    with this one by :func:`open_store` (after this one's migrations, in
    the same transaction), or refused with it. Their tables are made by
    this schema (their version 1 is what its first migration makes, or
    no steps) and are among its :attr:`tables`."""

    def __post_init__(self) -> None:
        versions = [m.version for m in self.migrations]
        if versions != list(range(1, len(versions) + 1)):
            raise ValueError(f"{self.component}: migrations must be versions 1, 2, ... in order")

    @property
    def version(self) -> int:
        """The version this program writes."""
        return self.migrations[-1].version


def written_version(db: Database, component: str, tables: set[str] | None = None) -> int | None:
    """The version ``db``'s version table gives ``component`` (None: none;
    ``tables``: ``db.tables()``, where the caller has them)."""
    if VERSION_TABLE not in (db.tables() if tables is None else tables):
        return None
    row = db.execute(
        f"SELECT version FROM {VERSION_TABLE} WHERE component = ?", (component,)
    ).fetchone()
    return None if row is None else int(row[0])


def stored_version(db: Database, schema: Schema) -> tuple[int, bool] | None:
    """The version of ``schema`` in ``db`` and whether it is written down
    (False: an unversioned store's); None: ``db`` does not hold it.
    StorageError for a store with the schema's tables and no version."""
    tables = db.tables()
    version = written_version(db, schema.component, tables)
    if version is not None:
        return version, True
    if not schema.marks <= tables:
        return None
    if schema.unversioned is None:
        raise StorageError(
            f"{db.where} holds {schema.what} without a schema version: "
            f"not a store this program made"
        )
    return schema.unversioned, False


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def open_store(
    target: str | Path,
    schema: Schema,
    *,
    create: bool = True,
    read_only: bool = False,
    new: bool = False,
    note: Callable[[str], None] | None = _stderr,
) -> Database:
    """Open the store at ``target`` (:func:`.open_database`) at the version
    of ``schema`` this program writes: created (``create``), migrated after
    a ``note`` (standard error by default), or only checked (``read_only``).
    ``new``: made by this call, or :class:`StoreExists` (checked under the
    schema's lock: of processes making one store at once, one makes it and
    the others are refused having written nothing, so that a caller who
    fails later removes only a store it made). StorageError, one line, when
    it cannot be used; a database found not to be a store is left as it was."""
    db = open_database(target, create=create or new, read_only=read_only)
    try:
        _prepare(db, schema, create=(create or new) and not read_only, new=new, note=note)
    except BaseException:
        db.abandon()
        raise
    return db


def _exists(db: Database, schema: Schema) -> StoreExists:
    return StoreExists(f"{db.where} holds {schema.what} already")


def _prepare(
    db: Database,
    schema: Schema,
    *,
    create: bool,
    new: bool = False,
    note: Callable[[str], None] | None,
) -> None:
    try:
        found = stored_version(db, schema)
        shared = [None if found is None else stored_version(db, s) for s in schema.shared]
    except DatabaseError as e:
        raise NotThisStore(f"{db.where} is not {schema.noun} ({e.reason})") from None
    parts = [(schema, found), *zip(schema.shared, shared, strict=True)]
    if found is None:
        if not create:
            raise NotThisStore(
                f"{db.where} is {db.described} but not {schema.what} "
                f"(no {' or '.join(sorted(schema.marks))} table)"
            )
    elif new:
        raise _exists(db, schema)
    else:
        for part, at in parts:
            _check(db, part, at)
        if db.read_only:
            return
    db.ready_for_writes()
    # at its versions: nothing written (a shared schema at its version but
    # not yet written down, as every store made before it, is left so: a
    # store opened to read without a read-only open, e.g. by export, takes
    # no write lock and needs no right to write)
    versions = [None if v is None else v[0] for v in shared]
    if found == (schema.version, True) and versions == [s.version for s in schema.shared]:
        return
    if found is not None and note is not None:
        older = [
            f"{part.what} of schema version {at[0]}; this wizard-arena writes "
            f"version {part.version}"
            for part, at in parts
            if at is not None and at[0] < part.version
        ]
        if older:
            note(
                f"{db.where} holds {', and '.join(older)}: "
                f"{db.backup_note(found[0], schema.version)}; migrating it now"
            )
    with db.transaction():
        db.lock_schema()
        again = stored_version(db, schema)  # (another process may have been first)
        if new and again is not None:
            raise _exists(db, schema)
        fresh = again is None
        _migrate(db, schema, again)
        for part in schema.shared:
            _migrate(db, part, None if fresh else stored_version(db, part))


def _check(db: Database, schema: Schema, found: tuple[int, bool] | None) -> None:
    """Refuse a store whose ``schema`` is ``found`` newer than this program
    knows, or (read-only) older than it reads."""
    if found is None:
        return
    version, _ = found
    if version > schema.version:
        raise SchemaTooNew(
            f"{db.where} holds {schema.what} of schema version {version}, newer than "
            f"this wizard-arena knows ({schema.version}): upgrade wizard-arena to use it"
        )
    if db.read_only and version < schema.readable_from:
        raise StorageError(
            f"{db.where} holds {schema.what} of schema version {version}, older "
            f"than this wizard-arena reads ({schema.readable_from}): open it once "
            "to write (e.g. resume it) and it is migrated"
        )


def _migrate(db: Database, schema: Schema, found: tuple[int, bool] | None) -> None:
    """Bring ``schema`` from ``found`` (None: nothing of it yet) to its
    version and write that down, inside the caller's transaction."""
    if found == (schema.version, True):
        return
    start = 0 if found is None else found[0]
    for migration in schema.migrations[start:]:
        for step in migration.steps:
            db.execute(step.replace("{id}", db.id_column))
    db.execute(_VERSION_DDL)
    db.execute(
        f"INSERT INTO {VERSION_TABLE} (component, version) VALUES (?, ?)"
        " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        (schema.component, schema.version),
    )


def store_exists(target: str | Path, schema: Schema) -> bool:
    """Whether ``target`` holds something a new store must not overwrite:
    an SQLite file that exists (whatever it holds), or a PostgreSQL
    database with ``schema``'s tables. StorageError when the database
    cannot be reached."""
    if not is_url(target):
        return Path(str(target)).exists()
    db = open_database(target)
    try:
        return stored_version(db, schema) is not None
    finally:
        db.close()


def remove_store(db: Database, schema: Schema) -> None:
    """Remove ``schema``'s store from ``db`` and close it: an SQLite file
    entirely, a PostgreSQL database's tables of the schema (and
    ``schema_version`` unless another store's schema is recorded in it)."""
    tables: tuple[str, ...] = schema.tables
    components = (schema.component, *(s.component for s in schema.shared))
    ours = ", ".join("?" * len(components))
    try:
        others = db.execute(
            f"SELECT COUNT(*) FROM {VERSION_TABLE} WHERE component NOT IN ({ours})", components
        ).fetchone()[0]
    except DatabaseError:
        others = 0  # (no version table)
    if others:
        db.execute(f"DELETE FROM {VERSION_TABLE} WHERE component IN ({ours})", components)
    else:
        tables += (VERSION_TABLE,)
    db.remove(tables)
