"""The played games of a store, whichever made it (a tournament's, a
comparison's, a ladder's): the columns of the tables ``games`` and
``seat_results`` every such store has, which each extends with its own
(:func:`games_table`, :func:`seat_results_table`), the statements that
write a played game (:func:`write_game`) and those that read the games
back (:func:`game_rows`, :func:`game_record`, :func:`game_counts`,
:func:`games_fingerprint`).

- ``games``: ``id``; ``seats``, who sits where as a JSON list in the
  store's own terms (entrants' names, versions' ids); ``status``;
  ``started_at`` and ``finished_at`` (Unix seconds); ``faulted`` (1 when
  a seat faulted); ``record``, the game's complete record as JSON (a
  referee's ``GameRecord``; NULL while a planned game is unplayed).
- ``seat_results``: per finished game and seat, the final ``total``, the
  ``rank`` and the ``faults`` (JSON, fault code -> count).
- the columns added to either since (:data:`ADDED`), each nullable: NULL
  in a game stored before it was added. They are declared here once:
  :data:`GAMES_SCHEMA` (component ``games`` in ``schema_version``, which
  rides with each store's schema: :attr:`.Schema.shared`) adds them to
  every store on opening, a new one at creation; :func:`write_game` writes
  and :func:`game_rows` reads those the store has (an older store opened
  read-only has not all: theirs read as None).

A record is text here: the storage room knows no referee. What it takes of
one is :class:`Recorded` (a ``GameRecord`` is one), and a reader converts
the text it reads back (``GameRecord.from_json``).

>>> games_table(["set_id BIGINT NOT NULL"]).split(", ")[:3]
['CREATE TABLE games (id TEXT PRIMARY KEY', 'set_id BIGINT NOT NULL', 'seats TEXT NOT NULL']
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from wizard_referee.storage.database import Database
from wizard_referee.storage.migrations import Migration, Schema, stored_version

__all__ = [
    "ADDED",
    "GAMES_SCHEMA",
    "Added",
    "GameRow",
    "PlayedGame",
    "Recorded",
    "game_columns",
    "game_counts",
    "game_record",
    "game_rows",
    "games_fingerprint",
    "games_table",
    "record_columns",
    "seat_results_table",
    "stored_columns",
    "write_game",
]

#: Games whose seats' results one query reads (its ``IN`` list).
CHUNK = 500


@dataclass(frozen=True)
class Added:
    """A column added to a shared table after its first version."""

    table: Literal["games", "seat_results"]
    name: str
    type: str
    """Its SQL type, portable (SQLite and PostgreSQL); the column is nullable."""
    holds: str
    """What it holds (NULL: stored before it was added, or not known)."""

    @property
    def step(self) -> str:
        """The statement that adds it."""
        return f"ALTER TABLE {self.table} ADD COLUMN {self.name} {self.type}"


#: The columns added to the shared tables, in the order they were: the
#: ``n``-th (from 1) is version ``n + 1`` of :data:`GAMES_SCHEMA`. A new
#: one is declared here, last, and nowhere else: every store gets it on
#: opening. Where a played game's record gives its value,
#: :func:`record_columns` says how (a ``games`` column), or the store
#: passes it (a ``seat_results`` one: :attr:`PlayedGame.seat_added`).
#: The shared columns migrate after a store's own: a store's migration
#: never refers to one (nor rebuilds the shared tables without them), and
#: no name here is a column a store adds of its own (a test checks it).
ADDED: tuple[Added, ...] = ()


def _games_schema(added: Sequence[Added]) -> Schema:
    return Schema(
        component="games",
        what="the games' shared columns",
        noun="a store of games",
        migrations=(
            Migration(1, ()),
            *(Migration(n, (column.step,)) for n, column in enumerate(added, 2)),
        ),
        tables=("seat_results", "games"),
        marks=frozenset({"games", "seat_results"}),
        unversioned=1,
    )


#: The shared tables' own schema (their row ``games`` in
#: ``schema_version``): version 1 is the tables as :func:`games_table` and
#: :func:`seat_results_table` make them (in each store's first migration),
#: each later version adds one column of :data:`ADDED`. Every store's
#: :class:`.Schema` names it in :attr:`.Schema.shared`.
GAMES_SCHEMA = _games_schema(ADDED)

_STORED: weakref.WeakKeyDictionary[Database, tuple[Added, ...]] = weakref.WeakKeyDictionary()


def stored_columns(db: Database) -> tuple[Added, ...]:
    """The columns of :data:`ADDED` that ``db``'s shared tables have (by
    its ``games`` version; asked once per connection: a column once there
    stays). A store opened to write has them all; one opened read-only,
    of an older version, those of its version."""
    known = _STORED.get(db)
    if known is None:
        found = stored_version(db, GAMES_SCHEMA)
        known = _STORED[db] = ADDED[: (1 if found is None else found[0]) - 1]
    return known


def games_table(
    own: Sequence[str] = (),
    *,
    with_seats: Sequence[str] = (),
    planned: bool = False,
    constraints: Sequence[str] = (),
) -> str:
    """The statement that makes ``games``: the shared columns with the
    store's ``own`` column definitions after ``id`` (where a game is in the
    store's plan), ``with_seats`` after ``seats``, and ``constraints`` last.
    ``planned``: a game's row is written before it is played (its status
    ``pending`` by default, no record yet); else once it was played (its
    record required)."""
    columns = [
        "id TEXT PRIMARY KEY",
        *own,
        "seats TEXT NOT NULL",
        *with_seats,
        "status TEXT NOT NULL DEFAULT 'pending'" if planned else "status TEXT NOT NULL",
        "started_at DOUBLE PRECISION",
        "finished_at DOUBLE PRECISION",
        "faulted INTEGER NOT NULL DEFAULT 0" if planned else "faulted INTEGER NOT NULL",
        "record TEXT" if planned else "record TEXT NOT NULL",
        *constraints,
    ]
    return _create("games", columns)


def seat_results_table(player: str, *, rounds: Sequence[str] = ()) -> str:
    """The statement that makes ``seat_results``: the shared columns with the
    store's ``player`` column definition (who played the seat) after
    ``seat``, and ``rounds`` (per-round columns) before ``faults``."""
    columns = [
        "game_id TEXT NOT NULL REFERENCES games (id)",
        "seat INTEGER NOT NULL",
        player,
        "total INTEGER NOT NULL",
        "rank INTEGER NOT NULL",
        *rounds,
        "faults TEXT NOT NULL",
        "PRIMARY KEY (game_id, seat)",
    ]
    return _create("seat_results", columns)


def _create(table: str, columns: Sequence[str]) -> str:
    return f"CREATE TABLE {table} ({', '.join(columns)})"


class Recorded(Protocol):
    """What is stored of a played game's record (a referee's ``GameRecord``)."""

    @property
    def game_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def started_at(self) -> float: ...
    @property
    def finished_at(self) -> float | None: ...
    @property
    def totals(self) -> list[int]: ...
    @property
    def ranks(self) -> list[int]: ...
    @property
    def faults(self) -> list[dict[str, int]]: ...
    @property
    def faulted_seats(self) -> list[int]: ...
    def to_json(self) -> str: ...


def record_columns(record: Recorded) -> dict[str, Any]:
    """The values of the ``games`` columns of :data:`ADDED` that a played
    game's record gives, by name (one line per such column)."""
    return {}


@dataclass(frozen=True)
class PlayedGame:
    """A played game as the shared columns store it."""

    id: str
    status: str
    started_at: float | None
    finished_at: float | None
    faulted: bool
    record: str
    """The record's JSON."""
    totals: tuple[int, ...] = ()
    ranks: tuple[int, ...] = ()
    faults: tuple[dict[str, int], ...] = ()
    """By seat: fault code -> count."""
    added: Mapping[str, Any] = field(default_factory=dict)
    """The ``games`` columns of :data:`ADDED`, by name (one not given: NULL)."""
    seat_added: tuple[Mapping[str, Any], ...] = ()
    """By seat: the ``seat_results`` columns of :data:`ADDED`, by name."""

    @classmethod
    def of(cls, record: Recorded) -> PlayedGame:
        return cls(
            record.game_id,
            record.status,
            record.started_at,
            record.finished_at,
            bool(record.faulted_seats),
            record.to_json(),
            tuple(record.totals),
            tuple(record.ranks),
            tuple(record.faults),
            record_columns(record),
        )

    @property
    def finished(self) -> bool:
        """Played to its end: its seats have results."""
        return self.status == "finished"


def write_game(
    db: Database,
    game: PlayedGame,
    *,
    planned: bool,
    seats: Sequence[Any] | None = None,
    columns: Mapping[str, Any] | None = None,
    seat_columns: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Write ``game``, inside the caller's transaction (with what else it
    writes): its row, the store's own ``columns`` in it (and ``seats``,
    who sits where, when given), and once it finished its seats' results,
    seat ``i``'s with the store's own ``seat_columns[i]``. ``planned``: the
    row is the game's planned one, not finished yet (ValueError if there
    is none); else a new row (a game stored already is refused: never
    counted twice). Of the columns of :data:`ADDED`, those the store has
    (:func:`stored_columns`) are written: ``game.added``'s and
    ``game.seat_added``'s values, NULL for one not given."""
    present = stored_columns(db)
    values: dict[str, Any] = {
        "status": game.status,
        "started_at": game.started_at,
        "finished_at": game.finished_at,
        "faulted": int(game.faulted),
        "record": game.record,
        **{c.name: game.added.get(c.name) for c in present if c.table == "games"},
        **(columns or {}),
    }
    if seats is not None:
        values["seats"] = json.dumps(list(seats))
    names = Database.json_keys(list(values))
    if planned:
        sets = ", ".join(f"{n} = :{n}" for n in names)
        changed = db.execute(
            f"UPDATE games SET {sets} WHERE id = :id AND status != 'finished'",
            {**values, "id": game.id},
        )
        if changed.rowcount != 1:
            raise ValueError(f"game {game.id} is unknown or already finished")
    else:
        db.execute(_insert("games", ["id", *names]), {**values, "id": game.id})
    if not game.finished:
        return
    rows = [
        {
            "game_id": game.id,
            "seat": seat,
            "total": game.totals[seat],
            "rank": game.ranks[seat],
            "faults": json.dumps(game.faults[seat], sort_keys=True),
            **{
                c.name: game.seat_added[seat].get(c.name) if game.seat_added else None
                for c in present
                if c.table == "seat_results"
            },
            **(seat_columns[seat] if seat_columns else {}),
        }
        for seat in range(len(game.totals))
    ]
    db.executemany(_insert("seat_results", Database.json_keys(list(rows[0]))), rows)


def _insert(table: str, names: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"


@dataclass(frozen=True)
class GameRow:
    """A game as the lists show it: the shared columns and, for a finished
    game, its totals and ranks by seat."""

    id: str
    seats: list[Any]
    status: str
    started_at: float | None
    finished_at: float | None
    faulted: bool
    totals: list[int] | None
    ranks: list[int] | None
    own: dict[str, Any] = field(default_factory=dict)
    """The store's own columns asked for (:func:`game_rows`), by name."""
    added: dict[str, Any] = field(default_factory=dict)
    """Every ``games`` column of :data:`ADDED`, by name (None: NULL, or
    not in the store, an older one opened read-only)."""


def game_rows(
    db: Database,
    *,
    own: Sequence[str] = (),
    where: str = "",
    params: Mapping[str, Any] | None = None,
    order: str = "id",
    limit: int | None = None,
) -> list[GameRow]:
    """The games of ``db`` (those ``where`` holds: a condition on ``games``
    with ``:name`` parameters from ``params``) in ``order``, the first
    ``limit`` of them (None: all), each with the store's ``own`` columns,
    the shared columns of :data:`ADDED` and its seats' totals and ranks."""
    added = _games_added(db)
    picked = ["id", "seats", "status", "started_at", "finished_at", "faulted", *own, *added]
    found = _select(db, Database.json_keys(picked), where, params, order, limit)
    scores = _scores(db, [r[0] for r in found])
    out = []
    for r in found:
        got = scores.get(r[0])
        out.append(
            GameRow(
                r[0],
                json.loads(r[1]),
                str(r[2]),
                r[3],
                r[4],
                bool(r[5]),
                [t for t, _ in got] if got else None,
                [k for _, k in got] if got else None,
                dict(zip(own, r[6 : 6 + len(own)], strict=True)),
                _added(added, r[6 + len(own) :]),
            )
        )
    return out


def game_columns(
    db: Database, *, where: str = "", params: Mapping[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """The ``games`` columns of :data:`ADDED` of the games of ``db`` that
    ``where`` holds (as :func:`game_rows`'s), by game id and name (None:
    NULL, or not in the store); empty when none is declared."""
    if not any(c.table == "games" for c in ADDED):
        return {}
    added = _games_added(db)
    return {r[0]: _added(added, r[1:]) for r in _select(db, ["id", *added], where, params)}


def _select(
    db: Database,
    columns: Sequence[str],
    where: str,
    params: Mapping[str, Any] | None,
    order: str | None = None,
    limit: int | None = None,
) -> list[Any]:
    """The rows of ``games`` (``columns`` of those ``where`` holds, in
    ``order``, the first ``limit``), as :func:`game_rows` asks them."""
    sql = f"SELECT {', '.join(columns)} FROM games"
    if where:
        sql += f" WHERE {where}"
    if order is not None:
        sql += f" ORDER BY {order}"
    args = dict(params or {})
    if limit is not None:
        sql += " LIMIT :limit"
        args["limit"] = limit
    return list(db.execute(sql, args).fetchall())


def _games_added(db: Database) -> list[str]:
    """The ``games`` columns of :data:`ADDED` that ``db`` has."""
    return [c.name for c in stored_columns(db) if c.table == "games"]


def _added(present: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """Every ``games`` column of :data:`ADDED` by name: ``values`` those
    ``present`` in the store, None the others."""
    got = dict(zip(present, values, strict=True))
    return {c.name: got.get(c.name) for c in ADDED if c.table == "games"}


def _scores(db: Database, ids: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """The totals and ranks of the seats of games ``ids``, by game, in seat order."""
    out: dict[str, list[tuple[int, int]]] = {}
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        rows = db.execute(
            "SELECT game_id, total, rank FROM seat_results"
            f" WHERE game_id IN ({', '.join('?' * len(chunk))}) ORDER BY game_id, seat",
            chunk,
        )
        for gid, total, rank in rows:
            out.setdefault(gid, []).append((int(total), int(rank)))
    return out


def game_record(db: Database, game_id: str) -> str | None:
    """The record (JSON) of game ``game_id``; None: no such game, or none
    played yet."""
    row = db.execute("SELECT record FROM games WHERE id = :id", {"id": game_id}).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def game_counts(db: Database) -> dict[str, int]:
    """The games by status."""
    rows = db.execute("SELECT status, COUNT(*) FROM games GROUP BY status")
    return {str(status): int(n) for status, n in rows}


def games_fingerprint(db: Database) -> tuple[int, float]:
    """Finished games and the last finish time: changes when a game is stored."""
    row = db.execute(
        "SELECT COUNT(*), COALESCE(MAX(finished_at), 0) FROM games WHERE status = 'finished'"
    ).fetchone()
    return int(row[0]), float(row[1])
