"""The played games every store of games shares (storage/games.py): the
tournament's and the ladder's stores make the tables they made before
(no migration for a store of either), write a game through the one writer
and read it back through the one reader, on SQLite and PostgreSQL. A
column added to the shared tables is declared once and reaches every
store: a new one at creation, an older one on opening (a reader of an
older one reads it as None), and a store whose shared columns are newer is
refused."""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from wizard_arena.rules import Rules
from wizard_referee.ladder import store as ladder_store
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.sql import LADDER_SCHEMA
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.storage import (
    ADDED,
    Added,
    DatabaseError,
    PlayedGame,
    SchemaTooNew,
    game_counts,
    game_record,
    game_rows,
    games,
    games_fingerprint,
    games_table,
    open_database,
    seat_results_table,
    shown,
    stored_columns,
    write_game,
    written_version,
)
from wizard_referee.tournament import store as tournament_store
from wizard_referee.tournament.seating import deal_seatings
from wizard_referee.tournament.store import (
    TOURNAMENT_SCHEMA,
    GameSpec,
    ResultsStore,
    export_games,
)
from wizard_referee.web.games import Showing, game_lines

from .web_support import ENTRANTS, play_record

RULES = Rules(players=3, hand_sizes=(1, 2))

#: The games' tables as the stores made them before they shared their
#: columns (the tournament's schema 1, the ladder's schema 1): a store made
#: then must be the same tables as one made now, or it would need migrating.
TOURNAMENT_BEFORE = (
    "CREATE TABLE games ("
    " id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, table_idx INTEGER NOT NULL,"
    " deal_set INTEGER NOT NULL, rotation INTEGER NOT NULL, seed TEXT NOT NULL,"
    " seats TEXT NOT NULL, rules TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',"
    " started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION,"
    " faulted INTEGER NOT NULL DEFAULT 0, record TEXT)",
    "CREATE TABLE seat_results ("
    " game_id TEXT NOT NULL REFERENCES games(id), seat INTEGER NOT NULL,"
    " entrant TEXT NOT NULL, total INTEGER NOT NULL, rank INTEGER NOT NULL,"
    " bids TEXT NOT NULL, tricks TEXT NOT NULL, points TEXT NOT NULL, faults TEXT NOT NULL,"
    " PRIMARY KEY (game_id, seat))",
)
LADDER_BEFORE = (
    "CREATE TABLE sets (id INTEGER PRIMARY KEY)",
    "CREATE TABLE versions (id INTEGER PRIMARY KEY)",
    "CREATE TABLE games ("
    " id TEXT PRIMARY KEY, set_id BIGINT NOT NULL REFERENCES sets (id),"
    " seating INTEGER NOT NULL, seats TEXT NOT NULL, status TEXT NOT NULL,"
    " started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION, faulted INTEGER NOT NULL,"
    " record TEXT NOT NULL, UNIQUE (set_id, seating))",
    "CREATE TABLE seat_results ("
    " game_id TEXT NOT NULL REFERENCES games (id), seat INTEGER NOT NULL,"
    " version_id BIGINT NOT NULL REFERENCES versions (id), total INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, faults TEXT NOT NULL, PRIMARY KEY (game_id, seat))",
)


def _shape(con: sqlite3.Connection, table: str) -> list[Any]:
    """A table as SQLite has it: its columns (name, type, NOT NULL, default,
    key), foreign keys and unique indexes' columns."""
    columns = con.execute(f"PRAGMA table_info({table})").fetchall()
    keys = [r[2:5] for r in con.execute(f"PRAGMA foreign_key_list({table})")]
    unique = sorted(
        tuple(c[2] for c in con.execute(f"PRAGMA index_info({r[1]})"))
        for r in con.execute(f"PRAGMA index_list({table})")
        if r[2]
    )
    return [columns, keys, unique]


@pytest.mark.parametrize("which", ["tournament", "ladder"])
def test_the_games_tables_are_those_each_store_made_before(which: str, tmp_path: Path) -> None:
    before = sqlite3.connect(":memory:")
    for statement in TOURNAMENT_BEFORE if which == "tournament" else LADDER_BEFORE:
        before.execute(statement)
    for column in ADDED:  # (and each column added to them since, as a migration adds it)
        before.execute(column.step)
    path = tmp_path / "now.sqlite"
    if which == "tournament":
        ResultsStore(path).close()
    else:
        LadderStore.create(path, Season("s", players=3, rules=RULES)).close()
    now = sqlite3.connect(path)
    try:
        for table in ("games", "seat_results"):
            assert _shape(now, table) == _shape(before, table), table
    finally:
        now.close()
        before.close()


def test_a_tournament_store_made_before_opens_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], umpire: Callable[[bool], None]
) -> None:
    """A store of the tables made before, at version 1: opened to write,
    nothing to migrate (no note, no copy; with no column added to the
    shared tables since, which a store gets as the tests below say), and
    its games are read and written as a new store's."""
    umpire(False)
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    other = [s for s in TOURNAMENT_SCHEMA.migrations[0].steps if "TABLE games" not in s]
    for statement in [*other[:2], *TOURNAMENT_BEFORE, *other[-1:]]:
        con.execute(statement)
    con.execute("CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER)")
    con.execute("INSERT INTO schema_version VALUES ('tournament', 1)")
    con.commit()
    con.close()
    spec = GameSpec("g0", 0, 0, 0, 0, "7:0", ("alice", "bob", "carol"))
    # opened, not to write (export, replay): nothing written, not even the
    # games tables' version, which is the one their tables say
    with ResultsStore(path, create=False):
        pass
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT * FROM schema_version").fetchall() == [("tournament", 1)]
    con.close()
    with ResultsStore(path, create=False) as store:
        store.create("old", {"name": "old"}, [], [spec], RULES.to_dict())
        store.save_game(spec, play_record(spec, RULES))
        assert store.counts() == {"finished": 1}
    assert capsys.readouterr().err == ""
    assert not list(tmp_path.glob("*.bak"))


def _rows_match(db: Any, record: Any, **query: Any) -> None:
    (row,) = [r for r in game_rows(db, **query) if r.id == record.game_id]
    assert (row.status, row.started_at, row.finished_at, row.faulted) == (
        "finished",
        record.started_at,
        record.finished_at,
        bool(record.faulted_seats),
    )
    assert row.totals == record.totals and row.ranks == record.ranks
    assert game_record(db, record.game_id) == record.to_json()


def test_a_tournament_writes_and_reads_its_games_through_the_shared_tables(
    database: str,
) -> None:
    names = ("alice", "bob", "carol")
    specs = [GameSpec(f"g{r}", r, 0, 0, r, "7:0", names[r:] + names[:r]) for r in range(3)]
    with ResultsStore(database) as store:
        store.create("t", {"name": "t"}, [(n, "command", None) for n in names], specs, {})
        record = play_record(specs[1], RULES)
        store.save_game(specs[1], record)
        with pytest.raises(ValueError, match="already finished"):
            store.save_game(specs[1], record)
        db = store.db
        _rows_match(db, record, own=("seq",), order="seq")
        rows = game_rows(db, own=("seq", "rules"), order="seq DESC")
        assert [(r.id, r.own["seq"], r.status, r.totals) for r in rows][::2] == [
            ("g2", 2, "pending", None),
            ("g0", 0, "pending", None),
        ]
        assert rows[0].seats == list(specs[2].seats) and rows[0].own["rules"] == "{}"
        assert game_record(db, "g0") is None and game_record(db, "nope") is None
        assert game_counts(db) == {"finished": 1, "pending": 2}
        assert games_fingerprint(db) == (1, record.finished_at)
        # the tournament's own columns of a seat are written with the shared ones
        (bids,) = db.execute(
            "SELECT bids FROM seat_results WHERE game_id = :g AND entrant = :e",
            {"g": "g1", "e": "bob"},
        ).fetchone()
        assert bids == f"[{', '.join(str(r[0][0]) for r in record.results)}]"


def test_a_ladder_writes_and_reads_its_games_through_the_shared_tables(database: str) -> None:
    with LadderStore.create(database, Season("s", players=3, rules=RULES)) as store:
        for name in ("alice", "bob", "carol"):
            store.add_entrant(name, token=new_token())
        store.start_runner("runner", "here", 1, 60.0)
        labels = {v.id: v.label for v in store.versions()}
        set_id, deal = store.new_set([1, 2, 3], "runner", 60.0, "secret")
        seating = deal_seatings([labels[v] for v in (1, 2, 3)])[0]
        spec = GameSpec(f"s{set_id}-r0", 0, set_id, 0, 0, deal, seating)
        classes = {label: ENTRANTS["alice"] for label in labels.values()}
        record = play_record(spec, RULES, classes)
        versions = [next(v for v, label in labels.items() if label == x) for x in seating]
        written = store.save_game(set_id, 0, versions, record, runner="runner")
        assert written == len(record.to_json())
        with pytest.raises(DatabaseError):  # (stored already: never counted twice)
            store.save_game(set_id, 0, versions, record, runner="runner")
        db = store.db
        _rows_match(db, record, own=("set_id", "seating"), order="finished_at DESC")
        (row,) = game_rows(db, own=("set_id", "seating"), where="set_id = :s", params={"s": 1})
        assert row.seats == versions and row.own == {"set_id": set_id, "seating": 0}
        assert game_counts(db) == {"finished": 1}
        assert store.set_statuses([set_id, 99]) == {set_id: "playing"}
        assert store.game(record.game_id) is not None
        assert store.game_set(record.game_id) == (set_id, "playing")


def test_a_played_game_is_what_its_record_says() -> None:
    names = ("alice", "bob", "carol")
    record = play_record(GameSpec("g", 0, 0, 0, 0, "1:x", names), RULES)
    record.add_fault(1, "TIMEOUT", "slow")
    game = PlayedGame.of(record)
    assert game.finished and game.faulted and game.record == record.to_json()
    assert game.faults[1] == {"TIMEOUT": 1} and list(game.totals) == record.totals


def test_the_reader_opens_a_store_it_did_not_make(tmp_path: Path) -> None:
    """The shared reader needs nothing of the store's class: any database
    with the shared tables (here a ladder's, opened read-only)."""
    path = tmp_path / "season.sqlite"
    LadderStore.create(path, Season("s", players=3, rules=RULES)).close()
    db = open_database(path, read_only=True)
    try:
        assert game_rows(db) == [] and game_counts(db) == {}
        assert games_fingerprint(db) == (0, 0.0)
    finally:
        db.close()


# -- a column added to the shared tables --------------------------------------------------

UMPIRE = Added("games", "umpire", "TEXT", "who umpired the game (a test's column)")


@pytest.fixture
def umpire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bool], None]]:
    """Declare :data:`UMPIRE` (True) or nothing added (False), as a
    program of each version would: the games' schema with it, every
    store's schema riding with that, a record's umpire its game's id."""

    def declare(added: bool) -> None:
        declared = (UMPIRE,) if added else ()
        schema = games._games_schema(declared)
        monkeypatch.setattr(games, "ADDED", declared)
        monkeypatch.setattr(games, "GAMES_SCHEMA", schema)
        patched = dataclasses.replace(TOURNAMENT_SCHEMA, shared=(schema,))
        monkeypatch.setattr(tournament_store, "TOURNAMENT_SCHEMA", patched)
        ladder = dataclasses.replace(LADDER_SCHEMA, shared=(schema,))
        monkeypatch.setattr(ladder_store, "LADDER_SCHEMA", ladder)
        umpires = {"umpire": lambda r: f"ump-{r.game_id}"} if added else {}
        monkeypatch.setattr(
            games, "record_columns", lambda r: {k: f(r) for k, f in umpires.items()}
        )

    yield declare


def _tournament(database: str, played: int) -> list[GameSpec]:
    """A tournament of three games in ``database``, its first ``played`` played."""
    names = ("alice", "bob", "carol")
    specs = [GameSpec(f"g{r}", r, 0, 0, r, "7:0", names[r:] + names[:r]) for r in range(3)]
    with ResultsStore(database) as store:
        store.create("t", {"name": "t"}, [(n, "command", None) for n in names], specs, {})
        for spec in specs[:played]:
            store.save_game(spec, play_record(spec, RULES))
    return specs


def _games_version(database: str) -> int | None:
    db = open_database(database)
    try:
        return written_version(db, "games")
    finally:
        db.close()


def _exported(store: ResultsStore) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_games(store, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("which", ["tournament", "ladder"])
def test_a_declared_column_is_in_a_new_store(
    which: str, database: str, umpire: Callable[[bool], None]
) -> None:
    umpire(True)
    if which == "ladder":
        LadderStore.create(database, Season("s", players=3, rules=RULES)).close()
    else:
        _tournament(database, 2)
        with ResultsStore(database) as store:
            rows = game_rows(store.db, order="id")
            assert [r.added for r in rows] == [
                {"umpire": "ump-g0"},
                {"umpire": "ump-g1"},
                {"umpire": None},  # (not played)
            ]
            lines = game_lines(store.db, Showing(lambda _id, _row: None))
            assert [line["umpire"] for line in lines] == ["ump-g0", "ump-g1", None]
            assert [line["umpire"] for line in _exported(store)] == ["ump-g0", "ump-g1"]
    assert _games_version(database) == 2


def test_a_declared_column_reaches_an_older_store_on_opening(
    database: str, umpire: Callable[[bool], None], capsys: pytest.CaptureFixture[str]
) -> None:
    umpire(False)
    specs = _tournament(database, 1)
    assert _games_version(database) == 1
    capsys.readouterr()
    umpire(True)
    with ResultsStore(database) as store:
        store.save_game(specs[1], play_record(specs[1], RULES))
        rows = game_rows(store.db, where="status = 'finished'")
        assert [r.added for r in rows] == [{"umpire": None}, {"umpire": "ump-g1"}]
    assert _games_version(database) == 2
    assert (
        f"{shown(database)} holds the games' shared columns of schema version 1; "
        "this wizard-arena writes version 2: "
    ) in capsys.readouterr().err


def test_an_older_store_opened_read_only_is_read_as_it_is(
    database: str, umpire: Callable[[bool], None]
) -> None:
    umpire(False)
    _tournament(database, 1)
    umpire(True)
    with ResultsStore(database, read_only=True) as store:
        assert stored_columns(store.db) == ()
        (row,) = game_rows(store.db, where="status = 'finished'")
        assert row.id == "g0" and row.added == {"umpire": None}
        (line,) = [x for x in game_lines(store.db, Showing(lambda *_: None)) if x["id"] == "g0"]
        assert line["umpire"] is None
        assert [x["umpire"] for x in _exported(store)] == [None]
    assert _games_version(database) == 1  # (nothing migrated)


def test_a_game_is_written_with_the_columns_its_store_has(
    database: str, umpire: Callable[[bool], None]
) -> None:
    """Tables made as version 1 (no version written: read as 1) hold no
    umpire: a game is written without it, and read back with it None."""
    umpire(True)
    db = open_database(database)
    try:
        db.execute(games_table())
        db.execute(seat_results_table("player TEXT"))
        record = play_record(GameSpec("g", 0, 0, 0, 0, "1:x", ("alice", "bob", "carol")), RULES)
        with db.transaction():
            write_game(db, PlayedGame.of(record), planned=False, seats=[1, 2, 3])
        (row,) = game_rows(db)
        assert row.added == {"umpire": None} and stored_columns(db) == ()
    finally:
        db.close()


def test_a_newer_games_schema_is_refused(database: str, umpire: Callable[[bool], None]) -> None:
    umpire(True)
    _tournament(database, 0)
    umpire(False)
    for read_only in (False, True):
        with pytest.raises(SchemaTooNew) as refused:
            ResultsStore(database, read_only=read_only)
        assert str(refused.value) == (
            f"{shown(database)} holds the games' shared columns of schema version 2, newer "
            "than this wizard-arena knows (1): upgrade wizard-arena to use it"
        )
