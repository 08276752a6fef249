"""The storage room: a database named by a path (SQLite, the default) or a
``postgresql://`` URL (PostgreSQL through psycopg 3, the ``postgres``
extra), behind one small interface (:class:`Database`: portable SQL with
``?`` or ``:name`` placeholders, transactions, a row-locking helper, JSON fields), and
versioned schemas with their migrations (:class:`Schema`, :func:`open_store`:
an older store is migrated on opening after a note saying how it was
backed up; a newer one is refused in one line).

A store's tables are the caller's (the tournament room's results store,
the ladder's; any room that keeps data in a database uses this one the
same way), but for its own ``schema_version`` and the played games'
columns every store of games shares (:mod:`.games`: ``games`` and
``seat_results``, which each store extends with its own columns; writing a
played game, reading the games back). Those shared tables grow here, not
in any store: a column added to them is declared once in :mod:`.games`,
whose schema (``games``) each store's rides with (:attr:`Schema.shared`).

May import: the standard library, psycopg (only when a ``postgresql://``
URL is opened: :mod:`.postgres`) and :mod:`wizard_arena.extras`. Nothing
else of ours, no trio or grpc: the tournament, compare and web rooms (and
their worker threads) use it alike.
"""

from wizard_referee.storage.database import (
    Database,
    DatabaseError,
    DatabaseLost,
    Params,
    Rows,
    StorageError,
    beside_store,
    bind,
    database_target,
    is_url,
    open_database,
    shown,
)
from wizard_referee.storage.games import (
    ADDED,
    GAMES_SCHEMA,
    Added,
    GameRow,
    PlayedGame,
    Recorded,
    game_columns,
    game_counts,
    game_record,
    game_rows,
    games_fingerprint,
    games_table,
    record_columns,
    seat_results_table,
    stored_columns,
    write_game,
)
from wizard_referee.storage.migrations import (
    VERSION_TABLE,
    Migration,
    NotThisStore,
    Schema,
    SchemaTooNew,
    StoreExists,
    open_store,
    remove_store,
    store_exists,
    stored_version,
    written_version,
)

__all__ = [
    "ADDED",
    "GAMES_SCHEMA",
    "VERSION_TABLE",
    "Added",
    "Database",
    "DatabaseError",
    "DatabaseLost",
    "GameRow",
    "Migration",
    "NotThisStore",
    "Params",
    "PlayedGame",
    "Recorded",
    "Rows",
    "Schema",
    "SchemaTooNew",
    "StorageError",
    "StoreExists",
    "beside_store",
    "bind",
    "database_target",
    "game_columns",
    "game_counts",
    "game_record",
    "game_rows",
    "games_fingerprint",
    "games_table",
    "is_url",
    "open_database",
    "open_store",
    "record_columns",
    "remove_store",
    "seat_results_table",
    "shown",
    "store_exists",
    "stored_columns",
    "stored_version",
    "write_game",
    "written_version",
]
