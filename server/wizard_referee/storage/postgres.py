"""A PostgreSQL database as a store's (psycopg 3, the ``postgres`` extra),
named by a ``postgresql://`` URL: several processes, on one machine or
several, share it.

The connection runs in autocommit; :meth:`PostgresDatabase.transaction` is
``READ COMMITTED``, whose row locks (:meth:`~.Database.locked`: ``FOR
UPDATE SKIP LOCKED``) let processes claim rows without waiting for each
other. The schema's migrations run one at a time under an advisory lock,
and each in one transaction (PostgreSQL's DDL is transactional: a
migration that fails changes nothing). A reader's session is read-only
(``default_transaction_read_only``).

>>> postgres_sql("SELECT a FROM t WHERE b = ? AND c LIKE '%?%'")
"SELECT a FROM t WHERE b = %s AND c LIKE '%%?%%'"
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from wizard_arena.extras import MissingExtraError, require
from wizard_referee.storage.database import (
    Database,
    DatabaseError,
    Rows,
    StorageError,
    first_line,
    shown,
)

__all__ = ["PostgresDatabase", "postgres_sql"]

try:
    require("postgres", "the PostgreSQL store")
    import psycopg
except MissingExtraError as _missing:
    _MISSING: str | None = str(_missing)
else:
    _MISSING = None

#: The advisory lock that serialises schema changes (any constant of our own).
SCHEMA_LOCK = 0x5749_5A41  # "WIZA"


@functools.lru_cache(maxsize=512)
def postgres_sql(sql: str) -> str:
    """``sql`` with its ``?`` placeholders (outside quotes) as psycopg's
    ``%s``, and every literal ``%`` doubled."""
    out: list[str] = []
    quote = ""
    for ch in sql:
        if ch == "%":
            out.append("%%")
        elif quote:
            out.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        else:
            out.append("%s" if ch == "?" else ch)
    return "".join(out)


class PostgresDatabase(Database):
    backend = "postgresql"
    described = "a PostgreSQL database"

    def __init__(self, url: str, con: psycopg.Connection[Any], *, read_only: bool) -> None:
        super().__init__(url, read_only=read_only)
        self.con = con

    @classmethod
    def connect(cls, url: str, *, read_only: bool) -> PostgresDatabase:
        if _MISSING is not None:
            raise StorageError(f"{shown(url)}: {_MISSING}")
        try:
            con = psycopg.connect(url, autocommit=True, connect_timeout=30)
        except psycopg.Error as e:
            reason = first_line(e)
            hint = ""
            if "does not exist" in reason and "database" in reason:
                hint = " (create it first: createdb, or CREATE DATABASE as its owner)"
            raise StorageError(f"cannot open {shown(url)}: {reason}{hint}") from None
        db = cls(url, con, read_only=read_only)
        if read_only:
            try:
                db.execute("SET default_transaction_read_only = on")
            except DatabaseError:
                db.close()
                raise
        return db

    def _fail(self, error: psycopg.Error) -> DatabaseError:
        return DatabaseError(self.where, first_line(error))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        try:
            return self.con.execute(postgres_sql(sql), params)
        except psycopg.Error as e:
            raise self._fail(e) from e

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            with self.con.cursor() as cur:
                cur.executemany(postgres_sql(sql), rows)
        except psycopg.Error as e:
            raise self._fail(e) from e

    @contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self.con.transaction():
                yield
        except psycopg.Error as e:
            raise self._fail(e) from e

    def locked(self, select: str) -> str:
        return f"{select} FOR UPDATE SKIP LOCKED"

    def lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))

    def now(self) -> str:
        return "EXTRACT(EPOCH FROM clock_timestamp())::double precision"

    def json_text(self, column: str, *keys: str) -> str:
        path = ",".join(self.json_keys(keys))
        return f"(({column})::json #>> '{{{path}}}')"

    def tables(self) -> set[str]:
        rows = self.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        )
        return {r[0] for r in rows}

    def ready_for_writes(self) -> None:
        """Nothing: the server's settings are the organiser's."""

    def backup_note(self, found: int, current: int) -> str:
        return (
            "it is migrated in one transaction, which changes nothing if it fails "
            "(pg_dump keeps a copy of a PostgreSQL store: run it before upgrading)"
        )

    def remove(self, tables: Sequence[str]) -> None:
        try:
            with self.transaction():
                for table in tables:
                    self.execute(f"DROP TABLE IF EXISTS {table}")
        finally:
            self.close()

    def close(self) -> None:
        self.con.close()
