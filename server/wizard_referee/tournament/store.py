"""The results store: one SQLite file per tournament (no server needed),
or a PostgreSQL database (a ``postgresql://`` URL: several processes, on
several machines, may share it), through :mod:`wizard_referee.storage`.

Tables (:data:`TOURNAMENT_SCHEMA`, version 1; ``schema_version`` says so):

- ``tournament``: one row, the configuration as JSON.
- ``entrants``: name, kind (``command`` or ``external``) and command line.
- ``games``: one row per planned game (table, deal set, rotation, deal seed,
  seats, rules, status ``pending``/``finished``/``aborted``/``failed``), and once it
  ends its complete record (every action with its timing) as JSON.
- ``seat_results``: per finished game and seat, the entrant, final total,
  rank, per-round bids/tricks/points and fault counts.

``games`` and ``seat_results`` are the storage room's shared tables of
played games (:mod:`wizard_referee.storage.games`) with the tournament's
own columns: a game is written and read back as every store's is.

A game's results are written in one transaction when it ends, so a crash
(even SIGKILL) never leaves a half-written game: on ``--resume`` every game
not ``finished`` is played again from its deal. SQLite runs in WAL mode
with ``synchronous=FULL``; PostgreSQL commits as its server is configured
(by default: durably).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from wizard_referee import storage
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import (
    GAMES_SCHEMA,
    VERSION_TABLE,
    Migration,
    PlayedGame,
    Schema,
    StoreExists,
    game_columns,
    game_counts,
    game_record,
    games_fingerprint,
    games_table,
    is_url,
    open_store,
    remove_store,
    seat_results_table,
    shown,
    write_game,
)
from wizard_referee.storage import StorageError as StoreError

__all__ = [
    "TOURNAMENT_SCHEMA",
    "GameSpec",
    "ResultsStore",
    "SeatResult",
    "StoreError",
    "export_games",
    "game_tags",
    "open_existing",
    "start_problem",
    "store_exists",
]

#: The results store's tables, version 1 (the tables of every store made
#: before versions were kept, which are opened as version 1).
TOURNAMENT_SCHEMA = Schema(
    component="tournament",
    what="a tournament's results",
    noun="a results database",
    migrations=(
        Migration(
            1,
            (
                "CREATE TABLE tournament ("
                " id INTEGER PRIMARY KEY CHECK (id = 1),"
                " name TEXT NOT NULL,"
                " config TEXT NOT NULL,"
                " created_at DOUBLE PRECISION NOT NULL)",
                "CREATE TABLE entrants (name TEXT PRIMARY KEY, kind TEXT NOT NULL, command TEXT)",
                games_table(
                    [
                        "seq INTEGER NOT NULL UNIQUE",
                        "table_idx INTEGER NOT NULL",
                        "deal_set INTEGER NOT NULL",
                        "rotation INTEGER NOT NULL",
                        "seed TEXT NOT NULL",
                    ],
                    with_seats=["rules TEXT NOT NULL"],
                    planned=True,
                ),
                seat_results_table(
                    "entrant TEXT NOT NULL",
                    rounds=["bids TEXT NOT NULL", "tricks TEXT NOT NULL", "points TEXT NOT NULL"],
                ),
                "CREATE INDEX seat_results_entrant ON seat_results(entrant)",
            ),
        ),
    ),
    tables=("seat_results", "games", "entrants", "tournament", VERSION_TABLE),
    marks=frozenset({"tournament", "games", "seat_results"}),
    unversioned=1,
    shared=(GAMES_SCHEMA,),
)


@dataclass(frozen=True)
class GameSpec:
    """One planned game of a tournament."""

    id: str
    seq: int
    table_idx: int
    deal_set: int
    rotation: int
    seed: str
    seats: tuple[str, ...]
    """Entrant name by seat."""

    @property
    def duplicate_set(self) -> str:
        """Games sharing the deal: the same table and deal set, every rotation."""
        return f"t{self.table_idx}-d{self.deal_set}"


def game_tags(spec: GameSpec, tournament: str) -> dict[str, Any]:
    """The tags a tournament game's record carries."""
    return {
        "table": spec.table_idx,
        "deal_set": spec.deal_set,
        "rotation": spec.rotation,
        "duplicate_set": spec.duplicate_set,
        "tournament": tournament,
    }


@dataclass(frozen=True)
class SeatResult:
    game_id: str
    seat: int
    entrant: str
    total: int
    rank: int
    bids: list[int]
    tricks: list[int]
    points: list[int]
    faults: dict[str, int]


def open_existing(database: str | Path) -> ResultsStore:
    """The store ``database`` (a path or a URL), which must exist (the
    ``replay`` and ``export`` verbs); StoreError with one line saying why not."""
    if not is_url(database) and not Path(database).exists():
        raise StoreError(f"no database {database}")
    return ResultsStore(database, create=False)


def store_exists(database: str | Path) -> bool:
    """Whether a new tournament must not be written to ``database``: an
    SQLite file that exists, or a PostgreSQL database holding one already
    (StoreError when it cannot be reached)."""
    return storage.store_exists(database, TOURNAMENT_SCHEMA)


def start_problem(database: str | Path, *, resume: bool, what: str) -> str | None:
    """Why a new ``what`` (``tournament``, ``comparison``) cannot be written
    to ``database`` (it holds one: resume it), or why there is nothing to
    resume; None when the run can go ahead. StoreError when the database
    cannot be reached."""
    exists, where, url = store_exists(database), shown(database), is_url(database)
    if exists and not resume:
        return (
            f"{where} {f'holds a {what}' if url else 'exists'}: continue that {what} with "
            "--resume, or give another database (--database PATH)"
        )
    if resume and not exists:
        return f"{where} {f'holds no {what}' if url else 'does not exist'}: nothing to resume"
    return None


class ResultsStore:
    """A tournament's results store: an SQLite file (``database`` a path) or
    a PostgreSQL database (a ``postgresql://`` URL), at the schema this
    program writes (an older one is migrated after a note on standard
    error; :mod:`wizard_referee.storage`). ``create=False`` opens only an
    existing results store (StoreError for a missing file, a file that is
    not SQLite, or a database without a tournament) and changes nothing in
    one that is not. ``read_only`` (the web pages, while a tournament may
    be writing) changes nothing at all. ``new``: a store this call makes,
    or StoreError having written nothing (another process made one there
    first: its store is not this one's to remove)."""

    def __init__(
        self,
        database: str | Path,
        *,
        create: bool = True,
        read_only: bool = False,
        new: bool = False,
    ) -> None:
        try:
            self.db = open_store(
                database, TOURNAMENT_SCHEMA, create=create, read_only=read_only, new=new
            )
        except StoreExists as e:
            raise StoreError(f"{e}: give another database (--database PATH)") from None
        self.target = str(database)
        """The store as given: a path or a URL."""
        self.where = self.db.where
        """The store as it may be printed: a path, or a URL without its password."""

    def close(self) -> None:
        self.db.close()

    def close_and_remove_if_unplayed(self) -> bool:
        """Close; remove the store if no game in it has been played, i.e.
        every game is still pending (the SQLite file and its WAL files; a
        PostgreSQL database's tables). True if removed."""
        try:
            unplayed = set(self.counts()) <= {"pending"}
        except StoreError:
            unplayed = False
        if unplayed:
            remove_store(self.db, TOURNAMENT_SCHEMA)
        else:
            self.close()
        return unplayed

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- setup ------------------------------------------------------------------------

    def tournament_config(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT config FROM tournament WHERE id = 1").fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def create(
        self,
        name: str,
        config: dict[str, Any],
        entrants: Sequence[tuple[str, str, str | None]],
        games: Sequence[GameSpec],
        rules: dict[str, Any],
    ) -> None:
        """Record a new tournament and its planned games, in one transaction."""
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO tournament (id, name, config, created_at) VALUES (1, ?, ?, ?)",
                (name, json.dumps(config, sort_keys=True), time.time()),
            )
            self.db.executemany(
                "INSERT INTO entrants (name, kind, command) VALUES (?, ?, ?)", entrants
            )
            self._insert_games(games, rules)

    def add_games(self, games: Sequence[GameSpec], rules: dict[str, Any]) -> None:
        """Plan more games (pending) in a stored tournament, in one transaction."""
        with self.db.transaction():
            self._insert_games(games, rules)

    def _insert_games(self, games: Sequence[GameSpec], rules: dict[str, Any]) -> None:
        rules_json = json.dumps(rules, sort_keys=True)
        self.db.executemany(
            "INSERT INTO games (id, seq, table_idx, deal_set, rotation, seed, seats, rules)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    g.id,
                    g.seq,
                    g.table_idx,
                    g.deal_set,
                    g.rotation,
                    g.seed,
                    json.dumps(list(g.seats)),
                    rules_json,
                )
                for g in games
            ],
        )

    def update_config(self, config: dict[str, Any]) -> None:
        """Replace the stored configuration (a tournament stored before a key existed)."""
        with self.db.transaction():
            self.db.execute(
                "UPDATE tournament SET config = ? WHERE id = 1",
                (json.dumps(config, sort_keys=True),),
            )

    # -- games ------------------------------------------------------------------------

    def games(self, status: str | None = None) -> list[GameSpec]:
        sql = "SELECT id, seq, table_idx, deal_set, rotation, seed, seats FROM games"
        args: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status = ?"
            args = (status,)
        rows = self.db.execute(sql + " ORDER BY seq", args).fetchall()
        return [GameSpec(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6]))) for r in rows]

    def unfinished(self) -> list[GameSpec]:
        rows = self.db.execute("SELECT id FROM games WHERE status != 'finished' ORDER BY seq")
        wanted = {r[0] for r in rows}
        return [g for g in self.games() if g.id in wanted]

    def counts(self) -> dict[str, int]:
        return game_counts(self.db)

    def save_game(self, spec: GameSpec, record: GameRecord) -> None:
        """Store a finished (or aborted) game and its seat results in one transaction.

        Saving the same game twice is refused (a result is never counted twice).
        """
        res = record.results
        with self.db.transaction():
            write_game(
                self.db,
                PlayedGame.of(record),
                planned=True,
                seat_columns=[
                    {
                        "entrant": entrant,
                        "bids": json.dumps([r[0][seat] for r in res]),
                        "tricks": json.dumps([r[1][seat] for r in res]),
                        "points": json.dumps([r[2][seat] for r in res]),
                    }
                    for seat, entrant in enumerate(spec.seats)
                ],
            )

    def mark_failed(self, game_id: str) -> None:
        """A game that could not be played for a reason outside the bots
        (its cluster worker was lost again and again): status ``failed``,
        no record, never rated; ``--resume`` plays it again."""
        with self.db.transaction():
            self.db.execute(
                "UPDATE games SET status = 'failed' WHERE id = ? AND status != 'finished'",
                (game_id,),
            )

    def record_tags(self, name: str) -> dict[str, str]:
        """One tag of every stored record (``record.tags[name]``, a plain
        name) as text, by game id, read by the database without decoding the
        records in Python (games without it: absent)."""
        tag = self.db.json_text("record", "tags", name)
        rows = self.db.execute(
            f"SELECT id, {tag} FROM games WHERE record IS NOT NULL AND {tag} IS NOT NULL"
        ).fetchall()
        return dict(rows)

    def record(self, game_id: str) -> GameRecord | None:
        text = game_record(self.db, game_id)
        return None if text is None else GameRecord.from_json(text)

    def planned(self, game_id: str) -> bool:
        """Whether ``game_id`` is a game of this tournament."""
        row = self.db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone()
        return row is not None

    def find_game_ids(self, prefix: str) -> list[str]:
        """The recorded games whose id starts with ``prefix`` (exactly: SQLite's
        LIKE ignores case, PostgreSQL's does not), in plan order."""
        rows = self.db.execute(
            "SELECT id FROM games WHERE id LIKE ? ESCAPE '\\' AND record IS NOT NULL ORDER BY seq",
            (prefix.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + "%",),
        )
        return [r[0] for r in rows if r[0].startswith(prefix)]

    def games_told(self, bot_game_id: str) -> list[str]:
        """The recorded game whose bots were told ``bot_game_id`` (the tag
        :func:`~.host.run_game` records), as a list of its planned id."""
        told = self.db.json_text("record", "tags", "bot_game_id")
        rows = self.db.execute(
            f"SELECT id FROM games WHERE record IS NOT NULL AND {told} = ? ORDER BY seq",
            (bot_game_id,),
        )
        return [r[0] for r in rows]

    def seat_results(self) -> list[SeatResult]:
        # one JSON text per row, decoded at once: a quarter of the decoder calls
        rows = self.db.execute(
            "SELECT s.game_id, s.seat, s.entrant, s.total, s.rank,"
            " '[' || s.bids || ',' || s.tricks || ',' || s.points || ',' || s.faults || ']'"
            " FROM seat_results s JOIN games g ON g.id = s.game_id ORDER BY g.seq, s.seat"
        ).fetchall()
        decode = json.JSONDecoder().decode
        return [SeatResult(r[0], r[1], r[2], r[3], r[4], *decode(r[5])) for r in rows]

    def finished_games(self) -> Iterator[tuple[GameSpec, list[SeatResult], bool]]:
        """Finished games in plan order with their seat results and faulted flag."""
        by_game: dict[str, list[SeatResult]] = {}
        for sr in self.seat_results():
            by_game.setdefault(sr.game_id, []).append(sr)
        faulted = dict(self.db.execute("SELECT id, faulted FROM games").fetchall())
        for spec in self.games("finished"):
            yield spec, by_game.get(spec.id, []), bool(faulted.get(spec.id))

    # -- reading (the web pages) ----------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """The tournament's name, creation time and games by status."""
        row = self.db.execute("SELECT name, created_at FROM tournament WHERE id = 1").fetchone()
        name, created = (row[0], row[1]) if row is not None else ("", None)
        return {"name": name, "created_at": created, "games": self.counts()}

    def entrant_names(self) -> list[tuple[str, str]]:
        """Every entrant's name and kind, by name."""
        return [(r[0], r[1]) for r in self.db.execute("SELECT name, kind FROM entrants ORDER BY 1")]

    def same_deal_unfinished(self, game_id: str) -> list[str]:
        """The other games dealt the same cards as ``game_id`` (its deal
        set's rotations: one deal seed) that have not finished, in plan order."""
        rows = self.db.execute(
            "SELECT g.id FROM games g JOIN games me ON me.seed = g.seed"
            " WHERE me.id = ? AND g.id != me.id AND g.status != 'finished' ORDER BY g.seq",
            (game_id,),
        )
        return [r[0] for r in rows]

    def finished_awaiting_deal(self) -> dict[str, list[str]]:
        """Each finished game whose deal (seed) is shared by games that have
        not finished, with those games in plan order (the web pages show
        nothing of such a game: docs/web.md)."""
        rows = self.db.execute(
            "SELECT g.id, o.id FROM games g JOIN games o ON o.seed = g.seed AND o.id != g.id"
            " WHERE g.status = 'finished' AND o.status != 'finished' ORDER BY g.seq, o.seq"
        )
        out: dict[str, list[str]] = {}
        for gid, other in rows:
            out.setdefault(gid, []).append(other)
        return out

    def records_of(self, entrant: str) -> Iterator[GameRecord]:
        """The records of the finished games ``entrant`` played, in plan order."""
        rows = self.db.execute(
            "SELECT g.record FROM games g JOIN seat_results s ON s.game_id = g.id"
            " WHERE s.entrant = ? AND g.record IS NOT NULL ORDER BY g.seq",
            (entrant,),
        )
        for (text,) in rows:
            yield GameRecord.from_json(text)

    def fingerprint(self) -> tuple[int, float]:
        """Finished games and the last finish time: changes when a game is stored."""
        return games_fingerprint(self.db)


def export_games(store: ResultsStore, out: TextIO) -> int:
    """Write ``store``'s finished games to ``out``, one JSON line each (with
    the games' shared columns added since their first version,
    :data:`.storage.ADDED`); how many."""
    count = 0
    added = game_columns(store.db, where="status = 'finished'")
    for spec, seats, faulted in store.finished_games():
        line = {
            "players": [s.entrant for s in seats],
            "scores": [s.total for s in seats],
            "game_id": spec.id,
            "duplicate_set": spec.duplicate_set,
            "faulted": faulted,
            **added.get(spec.id, {}),
        }
        out.write(json.dumps(line) + "\n")
        count += 1
    return count
