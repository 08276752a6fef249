"""An SQLite file as a store's database (the default: no server needed).

A writer runs in WAL mode with ``synchronous=FULL`` (a committed
transaction survives a power cut) and takes the write lock when its
transaction begins (``BEGIN IMMEDIATE``). A reader opens the file
read-only (``mode=ro``) and may read while a writer writes; a file found
not to be a store is left as it was (the ``-wal`` and ``-shm`` files the
read-only connection made beside it are removed again).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from wizard_referee.storage.database import (
    Database,
    DatabaseError,
    Rows,
    StorageError,
    first_line,
)

__all__ = ["SQLiteDatabase"]

_BESIDE = ("-wal", "-shm")
_JOURNALS = ("-wal", "-shm", "-journal")


def _create_private(path: Path) -> None:
    """An empty file at ``path`` that only its owner may read or write (0600),
    unless one is there: SQLite gives the files it makes beside a database
    (its ``-wal``, ``-shm``, ``-journal``) the database file's permissions,
    so a store and its journals are private whatever folder they are in
    (the season's secret, the deals' seeds, the games of a set in play)."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


class SQLiteDatabase(Database):
    backend = "sqlite"
    described = "an SQLite database"
    id_column = "INTEGER PRIMARY KEY"

    def __init__(
        self, path: Path, con: sqlite3.Connection, *, read_only: bool, made: Sequence[Path] = ()
    ) -> None:
        super().__init__(str(path), read_only=read_only)
        self.path = path
        self.con = con
        self._made = list(made)
        """Files beside the database this connection created (read-only)."""

    @classmethod
    def connect(cls, path: Path, *, create: bool, read_only: bool) -> SQLiteDatabase:
        if (read_only or not create) and path.is_dir():
            raise StorageError(f"{path} is a folder, not a database file")
        if (read_only or not create) and not path.is_file():
            raise StorageError(f"{path}: no such file")
        if create and not read_only and not path.parent.is_dir():
            raise StorageError(f"{path}: no folder {path.parent} to create it in")
        made = [p for p in (Path(f"{path}{x}") for x in _BESIDE) if not p.exists()]
        try:
            if create and not read_only:
                _create_private(path)
            if read_only:
                con = sqlite3.connect(
                    path.resolve().as_uri() + "?mode=ro",
                    uri=True,
                    timeout=30,
                    check_same_thread=False,
                )
            else:
                con = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        except (sqlite3.Error, OSError) as e:
            raise StorageError(f"{path}: cannot open it ({first_line(e)})") from None
        return cls(path, con, read_only=read_only, made=made if read_only else ())

    def _fail(self, error: sqlite3.Error) -> DatabaseError:
        return DatabaseError(self.where, first_line(error))

    def _execute(self, sql: str, params: Sequence[Any]) -> Rows:
        try:
            return self.con.execute(sql, params)
        except sqlite3.Error as e:
            raise self._fail(e) from e

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.con.executemany(sql, rows)
        except sqlite3.Error as e:
            raise self._fail(e) from e

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with suppress(sqlite3.Error):
                self.con.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def lock_schema(self) -> None:
        """Nothing: the transaction (``BEGIN IMMEDIATE``) excludes every other writer."""

    def now(self) -> str:
        return "((julianday('now') - 2440587.5) * 86400.0)"

    def json_text(self, column: str, *keys: str) -> str:
        path = ".".join(self.json_keys(keys))
        return f"CAST(json_extract({column}, '$.{path}') AS TEXT)"

    def tables(self) -> set[str]:
        return {r[0] for r in self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def ready_for_writes(self) -> None:
        self.execute("PRAGMA journal_mode=WAL")
        self.execute("PRAGMA synchronous=FULL")
        self.execute("PRAGMA foreign_keys=ON")

    def backup_note(self, found: int, current: int) -> str:
        copy = Path(f"{self.path}.schema-{found}.bak")
        n = 1
        while copy.exists():
            copy, n = Path(f"{self.path}.schema-{found}.{n}.bak"), n + 1
        try:
            _create_private(copy)
            with sqlite3.connect(str(copy)) as out:
                self.con.backup(out)
            out.close()
        except (sqlite3.Error, OSError) as e:
            copy.unlink(missing_ok=True)
            raise StorageError(
                f"{self.where}: cannot keep a copy before migrating it to schema "
                f"version {current} ({first_line(e)}); nothing was changed"
            ) from None
        return f"a copy of it as it was is kept in {copy}"

    def remove(self, tables: Sequence[str]) -> None:
        self.close()
        for suffix in ("", *_JOURNALS):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        self.con.close()

    def abandon(self) -> None:
        self.close()
        wal = Path(f"{self.path}-wal")
        if wal in self._made and wal.exists() and wal.stat().st_size:
            return  # a WAL with pages in it is a writer's: kept
        for p in self._made:
            p.unlink(missing_ok=True)
