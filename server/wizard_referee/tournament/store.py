"""The results store: one SQLite file per tournament (no server needed).

Tables:

- ``tournament``: one row, the configuration as JSON.
- ``entrants``: name, kind (``command`` or ``external``) and command line.
- ``games``: one row per planned game (table, deal set, rotation, deal seed,
  seats, rules, status ``pending``/``finished``/``aborted``/``failed``), and once it
  ends its complete record (every action with its timing) as JSON.
- ``seat_results``: per finished game and seat, the entrant, final total,
  rank, per-round bids/tricks/points and fault counts.

A game's results are written in one transaction when it ends, so a crash
(even SIGKILL) never leaves a half-written game: on ``--resume`` every game
not ``finished`` is played again from its deal. The database runs in WAL
mode with ``synchronous=FULL``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wizard_referee.referee.record import GameRecord

__all__ = ["GameSpec", "ResultsStore", "SeatResult", "StoreError", "open_existing"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS tournament (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS entrants (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    command TEXT
);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    table_idx INTEGER NOT NULL,
    deal_set INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed TEXT NOT NULL,
    seats TEXT NOT NULL,
    rules TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    started_at REAL,
    finished_at REAL,
    faulted INTEGER NOT NULL DEFAULT 0,
    record TEXT
);
CREATE TABLE IF NOT EXISTS seat_results (
    game_id TEXT NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    total INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    bids TEXT NOT NULL,
    tricks TEXT NOT NULL,
    points TEXT NOT NULL,
    faults TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seat_results_entrant ON seat_results(entrant);
"""


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


class StoreError(ValueError):
    """A file that is not a results database (the message says which and why)."""


def open_existing(path: Path) -> ResultsStore:
    """The store at ``path``, which must exist (the ``replay`` and ``export``
    verbs); StoreError with one line saying why not."""
    if not path.exists():
        raise StoreError(f"no database {path}")
    return ResultsStore(path, create=False)


class ResultsStore:
    """A tournament's SQLite database. ``create=False`` opens only an
    existing results database (StoreError for a missing file, a file that is
    not SQLite, or an SQLite file without a tournament), and changes nothing
    in a file that is not one."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        self.path = Path(path)
        if (read_only or not create) and self.path.is_dir():
            raise StoreError(f"{self.path} is a folder: give the results file a tournament wrote")
        if (read_only or not create) and not self.path.is_file():
            raise StoreError(f"{self.path}: no such file")
        if create and not read_only and not self.path.parent.is_dir():
            raise StoreError(f"{self.path}: no folder {self.path.parent} to create it in")
        if read_only:
            self.db = self._open_read_only()
            return
        self.db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        try:
            if not create:
                tables = {
                    r[0]
                    for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                }
                if not {"tournament", "games", "seat_results"} <= tables:
                    raise StoreError(
                        f"{self.path} is an SQLite database but not a tournament's results "
                        "(no tournament or games table)"
                    )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise StoreError(
                f"{self.path} is not a results database ({e}); "
                "give the database a tournament wrote (--database PATH)"
            ) from None
        except StoreError:
            self.db.close()
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that cannot write (``mode=ro``), to a results database:
        the web pages read a store a tournament may be writing meanwhile.
        A file that is not one is left as it was found: the ``-wal`` and
        ``-shm`` files SQLite made beside it are removed."""
        beside = [Path(f"{self.path}{x}") for x in ("-wal", "-shm")]
        made = [p for p in beside if not p.exists()]
        try:
            return self._connect_read_only()
        except StoreError:
            wal = beside[0]
            if wal not in made or not wal.exists() or wal.stat().st_size == 0:
                for p in made:  # (a WAL with pages in it is a writer's: kept)
                    p.unlink(missing_ok=True)
            raise

    def _connect_read_only(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path.resolve().as_uri() + "?mode=ro",
            uri=True,
            timeout=30,
            check_same_thread=False,
        )
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as e:
            db.close()
            raise StoreError(f"{self.path} is not a results database ({e})") from None
        if not {"tournament", "games", "seat_results", "entrants"} <= tables:
            db.close()
            raise StoreError(
                f"{self.path} is an SQLite database but not a tournament's results "
                "(no tournament or games table)"
            )
        return db

    def close(self) -> None:
        self.db.close()

    def close_and_remove_if_unplayed(self) -> bool:
        """Close; delete the file (and its WAL files) if no game in it has
        been played, i.e. every game is still pending. True if deleted."""
        try:
            unplayed = set(self.counts()) <= {"pending"}
        except sqlite3.Error:
            unplayed = False
        self.close()
        if unplayed:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
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
        with self._tx():
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
        with self._tx():
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
        with self._tx():
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
        rows = self.db.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall()
        return {status: n for status, n in rows}

    def save_game(self, spec: GameSpec, record: GameRecord) -> None:
        """Store a finished (or aborted) game and its seat results in one transaction.

        Saving the same game twice is refused (a result is never counted twice).
        """
        finished = record.status == "finished"
        with self._tx():
            cur = self.db.execute(
                "UPDATE games SET status = ?, started_at = ?, finished_at = ?, faulted = ?,"
                " record = ? WHERE id = ? AND status != 'finished'",
                (
                    record.status,
                    record.started_at,
                    record.finished_at,
                    int(bool(record.faulted_seats)),
                    record.to_json(),
                    spec.id,
                ),
            )
            if cur.rowcount != 1:
                raise ValueError(f"game {spec.id} is unknown or already finished")
            if not finished:
                return
            rows = []
            for seat, entrant in enumerate(spec.seats):
                res = record.results
                rows.append(
                    (
                        spec.id,
                        seat,
                        entrant,
                        record.totals[seat],
                        record.ranks[seat],
                        json.dumps([r[0][seat] for r in res]),
                        json.dumps([r[1][seat] for r in res]),
                        json.dumps([r[2][seat] for r in res]),
                        json.dumps(record.faults[seat], sort_keys=True),
                    )
                )
            self.db.executemany("INSERT INTO seat_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def mark_failed(self, game_id: str) -> None:
        """A game that could not be played for a reason outside the bots
        (its cluster worker was lost again and again): status ``failed``,
        no record, never rated; ``--resume`` plays it again."""
        with self._tx():
            self.db.execute(
                "UPDATE games SET status = 'failed' WHERE id = ? AND status != 'finished'",
                (game_id,),
            )

    def record_tags(self, name: str) -> dict[str, Any]:
        """One tag of every stored record (``record.tags[name]``), by game id,
        read by SQLite without decoding the records (games without it: absent)."""
        rows = self.db.execute(
            "SELECT id, json_extract(record, '$.tags.' || ?) FROM games"
            " WHERE record IS NOT NULL AND json_extract(record, '$.tags.' || ?) IS NOT NULL",
            (name, name),
        ).fetchall()
        return dict(rows)

    def record(self, game_id: str) -> GameRecord | None:
        row = self.db.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None or row[0] is None:
            return None
        return GameRecord.from_json(row[0])

    def planned(self, game_id: str) -> bool:
        """Whether ``game_id`` is a game of this tournament."""
        row = self.db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone()
        return row is not None

    def find_game_ids(self, prefix: str) -> list[str]:
        rows = self.db.execute(
            "SELECT id FROM games WHERE id LIKE ? ESCAPE '\\' AND record IS NOT NULL ORDER BY seq",
            (prefix.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + "%",),
        )
        return [r[0] for r in rows]

    def games_told(self, bot_game_id: str) -> list[str]:
        """The recorded game whose bots were told ``bot_game_id`` (the tag
        :func:`~.host.run_game` records), as a list of its planned id."""
        rows = self.db.execute(
            "SELECT id FROM games WHERE record IS NOT NULL"
            " AND json_extract(record, '$.tags.bot_game_id') = ? ORDER BY seq",
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

    def game_rows(self, entrant: str | None = None) -> list[dict[str, Any]]:
        """Every planned game in plan order (those ``entrant`` sits in): id,
        table, deal set, rotation, seats, status, times, faulted, and for a
        finished game its totals and ranks by seat."""
        sql = (
            "SELECT id, seq, table_idx, deal_set, rotation, seats, status, started_at,"
            " finished_at, faulted FROM games"
        )
        rows = self.db.execute(sql + " ORDER BY seq").fetchall()
        scores: dict[str, dict[int, tuple[int, int]]] = {}
        for gid, seat, total, rank in self.db.execute(
            "SELECT game_id, seat, total, rank FROM seat_results"
        ):
            scores.setdefault(gid, {})[seat] = (total, rank)
        out = []
        for r in rows:
            seats = json.loads(r[5])
            if entrant is not None and entrant not in seats:
                continue
            got = scores.get(r[0], {})
            out.append(
                {
                    "id": r[0],
                    "seq": r[1],
                    "table": r[2],
                    "deal_set": r[3],
                    "rotation": r[4],
                    "seats": seats,
                    "status": r[6],
                    "started_at": r[7],
                    "finished_at": r[8],
                    "faulted": bool(r[9]),
                    "totals": [got[s][0] for s in sorted(got)] if got else None,
                    "ranks": [got[s][1] for s in sorted(got)] if got else None,
                }
            )
        return out

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
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(MAX(finished_at), 0) FROM games WHERE status = 'finished'"
        ).fetchone()
        return int(row[0]), float(row[1])

    # -- internals ----------------------------------------------------------------------

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")

        def __exit__(self, exc_type: object, *rest: object) -> None:
            self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")

    def _tx(self) -> ResultsStore._Tx:
        return ResultsStore._Tx(self.db)
