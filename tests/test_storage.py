"""The storage room on both backends: portable SQL, transactions, row
locks, versioned schemas and their migrations (an older store migrated
after a note, a newer one refused), and the errors of a store that cannot
be used, each one line. The PostgreSQL cases run on the worker's throwaway
cluster (tests/postgres.py), one database per test."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from wizard_referee.storage import (
    VERSION_TABLE,
    DatabaseError,
    Migration,
    Schema,
    SchemaTooNew,
    StorageError,
    StoreExists,
    open_database,
    open_store,
    remove_store,
    shown,
    store_exists,
    stored_version,
)

from .conftest import NEEDS_POSTGRES

V1 = Migration(
    1,
    (
        "CREATE TABLE birds (name TEXT PRIMARY KEY, seen DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE sightings (bird TEXT NOT NULL REFERENCES birds(name), note TEXT)",
    ),
)
V2 = Migration(
    2,
    (
        "ALTER TABLE birds ADD COLUMN colour TEXT NOT NULL DEFAULT 'grey'",
        "CREATE INDEX sightings_bird ON sightings(bird)",
    ),
)
V3 = Migration(3, ("CREATE TABLE nests (bird TEXT NOT NULL, place TEXT NOT NULL)",))


def schema(*migrations: Migration, **kw: object) -> Schema:
    tables = ("nests",) if len(migrations) > 2 else ()
    return Schema(
        component="birds",
        what="a bird list",
        noun="a bird database",
        migrations=migrations,
        tables=(*tables, "sightings", "birds"),
        marks=frozenset({"birds", "sightings"}),
        **kw,  # type: ignore[arg-type]
    )


def test_a_new_store_is_made_at_the_current_version(database: str) -> None:
    notes: list[str] = []
    db = open_store(database, schema(V1, V2), note=notes.append)
    try:
        assert {"birds", "sightings", VERSION_TABLE} <= db.tables()
        assert stored_version(db, schema(V1, V2)) == (2, True)
        db.execute("INSERT INTO birds (name, seen) VALUES (?, ?)", ("wren", 1.7e9 + 0.25))
        row = db.execute("SELECT name, seen, colour FROM birds").fetchone()
        assert tuple(row) == ("wren", 1.7e9 + 0.25, "grey")  # a timestamp to the quarter second
    finally:
        db.close()
    assert notes == []  # nothing to migrate: nothing said
    assert store_exists(database, schema(V1, V2))


def test_an_older_store_is_migrated_after_a_note(database: str) -> None:
    db = open_store(database, schema(V1))
    db.execute("INSERT INTO birds (name, seen) VALUES (?, ?)", ("robin", 1.0))
    db.close()
    notes: list[str] = []
    db = open_store(database, schema(V1, V2, V3), note=notes.append)
    try:
        assert stored_version(db, schema(V1, V2, V3)) == (3, True)
        assert db.execute("SELECT name, colour FROM birds").fetchall() == [("robin", "grey")]
        assert db.execute("SELECT COUNT(*) FROM nests").fetchone()[0] == 0
    finally:
        db.close()
    (note,) = notes
    where = shown(database)
    assert note.startswith(
        f"{where} holds a bird list of schema version 1; this wizard-arena writes version 3: "
    )
    assert note.endswith("; migrating it now")
    if db.backend == "sqlite":  # a copy of the file as it was, at version 1
        copy = Path(f"{database}.schema-1.bak")
        assert f"a copy of it as it was is kept in {copy}" in note
        with sqlite3.connect(copy) as old:
            assert old.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
            assert old.execute("SELECT * FROM birds").fetchall() == [("robin", 1.0)]
        old.close()
    else:
        assert "one transaction, which changes nothing if it fails" in note
    # opened again: at the version written, nothing more said
    open_store(database, schema(V1, V2, V3), note=notes.append).close()
    assert len(notes) == 1


def test_a_newer_store_is_refused_in_one_line_and_left_alone(database: str) -> None:
    open_store(database, schema(V1, V2)).close()
    for read_only in (False, True):
        with pytest.raises(SchemaTooNew) as refused:
            open_store(database, schema(V1), read_only=read_only)
        assert str(refused.value) == (
            f"{shown(database)} holds a bird list of schema version 2, newer than this "
            "wizard-arena knows (1): upgrade wizard-arena to use it"
        )
    db = open_database(database)
    assert stored_version(db, schema(V1, V2)) == (2, True)
    db.close()


def test_a_reader_migrates_nothing(database: str) -> None:
    open_store(database, schema(V1)).close()
    # schema 2 reads version 1 as it is: opened, nothing written
    db = open_store(database, schema(V1, V2), read_only=True, note=None)
    assert stored_version(db, schema(V1, V2)) == (1, True)
    with pytest.raises(DatabaseError):  # and it cannot write
        db.execute("INSERT INTO birds (name, seen) VALUES ('tit', 2.0)")
    db.close()
    # a reader of a schema that reads version 2 and up refuses version 1
    with pytest.raises(StorageError, match=r"older than this wizard-arena reads \(2\): open it"):
        open_store(database, schema(V1, V2, readable_from=2), read_only=True)


def test_an_unversioned_store_is_its_version_written_down(database: str) -> None:
    db = open_database(database)
    for step in V1.steps:
        db.execute(step)
    db.close()
    unversioned = schema(V1, unversioned=1)
    reader = open_store(database, unversioned, read_only=True)
    assert stored_version(reader, unversioned) == (1, False)  # read as it is
    reader.close()
    notes: list[str] = []
    writer = open_store(database, unversioned, note=notes.append)
    assert stored_version(writer, unversioned) == (1, True) and notes == []
    writer.close()
    with pytest.raises(StorageError, match="holds a bird list without a schema version"):
        db = open_database(database)
        db.execute("DROP TABLE schema_version")
        db.close()
        open_store(database, schema(V1))


def test_a_database_that_is_not_a_store_is_left_as_it_was(database: str) -> None:
    db = open_database(database)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.close()
    for read_only in (False, True):
        with pytest.raises(StorageError) as refused:
            open_store(database, schema(V1), create=False, read_only=read_only)
        assert str(refused.value) == (
            f"{shown(database)} is {db.described} but not a bird list (no birds or sightings table)"
        )
    db = open_database(database)
    assert db.tables() == {"notes"}
    db.close()


def test_sql_is_written_once_for_both(database: str) -> None:
    db = open_store(database, schema(V1, V2))
    try:
        db.executemany(
            "INSERT INTO birds (name, seen) VALUES (?, ?)", [("50% grey", 1.0), ("what?", 2.0)]
        )
        # ? inside quotes and % anywhere are themselves
        rows = db.execute(
            "SELECT name FROM birds WHERE name LIKE '%?' OR name LIKE ? ORDER BY name", ("50%",)
        ).fetchall()
        assert rows == [("50% grey",), ("what?",)]
        note = '{"tags": {"who": "jay", "n": 3}}'
        db.execute("INSERT INTO sightings (bird, note) VALUES (?, ?)", ("what?", note))
        tag, n = db.json_text("note", "tags", "who"), db.json_text("note", "tags", "n")
        assert db.execute(f"SELECT {tag}, {n} FROM sightings").fetchone() == ("jay", "3")
        with pytest.raises(ValueError, match="plain name"):
            db.json_text("note", "x') OR (1=1")
    finally:
        db.close()


def test_named_parameters_are_bound_from_a_mapping(database: str) -> None:
    """``:name`` placeholders take their values from a mapping, a name used
    twice taking its value twice; a ``:word`` inside quotes and a
    PostgreSQL ``::type`` cast are no parameters; ``?`` with a sequence
    works in the same connection."""
    db = open_store(database, schema(V1, V2))
    try:
        db.executemany(
            "INSERT INTO birds (name, seen, colour) VALUES (:name, :seen, :colour)",
            [
                {"name": "wren", "seen": 1.0, "colour": "brown"},
                {"colour": "blue", "seen": 2.0, "name": "jay", "unused": "is ignored"},
            ],
        )
        db.execute("INSERT INTO birds (name, seen) VALUES (?, ?)", ("robin", 3.0))
        rows = db.execute(
            "SELECT name, ':seen' FROM birds WHERE seen >= :low AND seen < :low + 2"
            " AND colour <> ':colour' ORDER BY seen",
            {"low": 1.0},
        ).fetchall()
        assert rows == [("wren", ":seen"), ("jay", ":seen")]
        changed = db.execute(
            "UPDATE birds SET colour = :c WHERE name = :n OR colour = :c",
            {"c": "red", "n": "robin"},
        )
        assert changed.rowcount == 1
        if db.backend == "postgresql":  # (a cast, not a parameter named text)
            (seen,) = db.execute("SELECT seen::text FROM birds WHERE name = :n", {"n": "jay"})
            assert seen == ("2",)
        with pytest.raises(KeyError, match="missing"):
            db.execute("SELECT name FROM birds WHERE name = :missing", {"n": "jay"})
    finally:
        db.close()


def test_the_database_clock_is_the_epoch_in_seconds(database: str) -> None:
    db = open_database(database)
    try:
        before = time.time()
        (now,) = db.execute(f"SELECT {db.now()}").fetchone()
        assert isinstance(now, float) and before - 1 < now < time.time() + 1
    finally:
        db.close()


def test_a_transaction_is_all_or_nothing(database: str) -> None:
    db = open_store(database, schema(V1))
    try:
        with pytest.raises(DatabaseError) as failed, db.transaction():
            db.execute("INSERT INTO birds (name, seen) VALUES ('owl', 1.0)")
            db.execute("INSERT INTO birds (name, seen) VALUES ('owl', 2.0)")
        assert str(failed.value).startswith(f"{shown(database)}: ")
        assert db.execute("SELECT COUNT(*) FROM birds").fetchone()[0] == 0
        with db.transaction():
            db.execute("INSERT INTO birds (name, seen) VALUES ('owl', 1.0)")
        assert db.execute("SELECT COUNT(*) FROM birds").fetchone()[0] == 1
    finally:
        db.close()


def test_a_claim_skips_the_rows_another_transaction_holds(database: str) -> None:
    """``locked``: two connections each claim a different row (PostgreSQL's
    row locks); on SQLite a second writer waits for the first's transaction."""
    a = open_store(database, schema(V1))
    b = open_database(database)
    try:
        a.executemany("INSERT INTO birds (name, seen) VALUES (?, ?)", [("ant", 1.0), ("bee", 2.0)])
        claim = a.locked("SELECT name FROM birds ORDER BY seen LIMIT 1")
        with a.transaction():
            assert a.execute(claim).fetchall() == [("ant",)]
            if a.backend == "sqlite":
                b.execute("PRAGMA busy_timeout = 0")  # (the test's: fail at once, not wait)
                with pytest.raises(DatabaseError, match="database is locked"), b.transaction():
                    pass
            else:
                with b.transaction():
                    assert b.execute(claim).fetchall() == [("bee",)]
                    assert b.execute(claim.replace("LIMIT 1", "")).fetchall() == [("bee",)]
    finally:
        a.close()
        b.close()


@NEEDS_POSTGRES
def test_two_processes_opening_a_new_store_at_once_make_it_once(postgres_url: str) -> None:
    """The migrations run under a lock: the second opener waits, then finds
    the schema made (no 'already exists')."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def opener() -> None:
        try:
            barrier.wait()
            open_store(postgres_url, schema(V1, V2, V3)).close()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    db = open_database(postgres_url)
    assert db.execute("SELECT component, version FROM schema_version").fetchall() == [("birds", 3)]
    db.close()


def test_of_processes_making_one_new_store_at_once_one_makes_it(database: str) -> None:
    """``new=True``: checked under the schema's lock, so one opener makes the
    store and the others are refused having written nothing (a loser that
    removed 'its' store on failing would remove the winner's)."""
    made: list[str] = []
    refused: list[BaseException] = []
    barrier = threading.Barrier(3)

    def opener() -> None:
        try:
            barrier.wait()
            db = open_store(database, schema(V1), new=True)
        except StoreExists as e:
            refused.append(e)
        else:
            made.append(db.where)
            db.close()

    threads = [threading.Thread(target=opener) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and len(refused) == 2
    assert all("holds a bird list already" in str(e) for e in refused)
    with pytest.raises(StoreExists):
        open_store(database, schema(V1), new=True)
    assert store_exists(database, schema(V1))


def test_removing_a_store_leaves_what_is_not_its(database: str) -> None:
    db = open_store(database, schema(V1))
    db.execute("CREATE TABLE notes (text TEXT)")
    remove_store(db, schema(V1))
    if database.startswith("postgresql://"):  # the database is the organiser's: kept
        db = open_database(database)
        assert db.tables() == {"notes"}
        db.close()
    else:  # the file was the store's
        assert not Path(database).exists()
    assert not store_exists(database, schema(V1))


#: A schema that rides with the bird list's (as the games' with a store's):
#: its version 1 is the tables the bird list makes; its version 2 adds a column.
RINGS = Migration(2, ("ALTER TABLE birds ADD COLUMN ring TEXT",))


def rings(*migrations: Migration) -> Schema:
    return Schema(
        component="rings",
        what="the birds' rings",
        noun="a ring list",
        migrations=(Migration(1, ()), *migrations),
        tables=(),
        marks=frozenset({"birds"}),
        unversioned=1,
    )


def test_a_shared_schema_is_migrated_refused_removed_and_made_with_its_store(
    database: str,
) -> None:
    with_rings = schema(V1, shared=(rings(RINGS),))
    # a store made before the shared schema had its column: migrated on
    # opening, after one note naming what is older
    open_store(database, schema(V1)).close()
    notes: list[str] = []
    db = open_store(database, with_rings, note=notes.append)
    assert stored_version(db, rings(RINGS)) == (2, True)
    db.execute("INSERT INTO birds (name, seen, ring) VALUES ('tit', 1.0, 'A1')")
    db.close()
    (note,) = notes
    assert note.startswith(f"{shown(database)} holds the birds' rings of schema version 1; ")
    assert "this wizard-arena writes version 2" in note
    open_store(database, with_rings, note=notes.append).close()
    assert len(notes) == 1  # at its version: nothing more said
    # a newer shared schema is refused, to a writer and a reader alike
    for read_only in (False, True):
        with pytest.raises(SchemaTooNew, match="holds the birds' rings of schema version 2, new"):
            open_store(database, schema(V1, shared=(rings(),)), read_only=read_only)
    # removed with its store: nothing of either is left
    db = open_store(database, with_rings)
    db.execute("CREATE TABLE notes (text TEXT)")
    remove_store(db, with_rings)
    if database.startswith("postgresql://"):
        db = open_database(database)
        assert db.tables() == {"notes"}  # the version table went with its last rows
        db.close()
    else:
        assert not Path(database).exists()
    # and a new store is made with it at its version
    db = open_store(database, with_rings, note=notes.append)
    assert stored_version(db, rings(RINGS)) == (2, True)
    assert stored_version(db, with_rings) == (1, True)
    db.close()
    assert len(notes) == 1


@NEEDS_POSTGRES
def test_postgres_errors_are_one_line_without_the_password(postgres_url: str) -> None:
    # (a password no random socket folder name can hold)
    secret = "Secret-Pass-0xC0FFEE"
    missing = postgres_url.replace(
        "postgresql://postgres@/", f"postgresql://postgres:{secret}@/nope_"
    )
    with pytest.raises(StorageError) as refused:
        open_store(missing, schema(V1))
    line = str(refused.value)
    assert "\n" not in line and secret not in line
    assert line.startswith("cannot open postgresql://postgres:***@/nope_")
    assert line.endswith("(create it first: createdb, or CREATE DATABASE as its owner)")


@NEEDS_POSTGRES
def test_postgres_connections_notice_a_lost_database_within_30_s(postgres_url: str) -> None:
    """TCP keepalives and tcp_user_timeout on every connection (a URL's own
    values kept): a dead server or network is noticed, not waited on."""
    db = open_database(postgres_url)
    try:
        given = db.con.info.get_parameters()  # type: ignore[attr-defined]
    finally:
        db.close()
    assert given["keepalives"] == "1" and given["tcp_user_timeout"] == "30000"
    assert (
        int(given["keepalives_idle"])
        + int(given["keepalives_interval"]) * int(given["keepalives_count"])
        <= 30
    )
    db = open_database(f"{postgres_url}&keepalives_idle=20")
    try:
        assert db.con.info.get_parameters()["keepalives_idle"] == "20"  # type: ignore[attr-defined]
    finally:
        db.close()


def test_a_store_that_cannot_be_opened_says_why(tmp_path: Path) -> None:
    with pytest.raises(
        StorageError, match="not a kind of database this stores to; give an SQLite file's path"
    ):
        open_database("mysql://db.example/season")
    with pytest.raises(StorageError, match="no such file"):
        open_store(tmp_path / "none.sqlite", schema(V1), create=False)
    with pytest.raises(StorageError, match="is a folder"):
        open_store(tmp_path, schema(V1), read_only=True)
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    with pytest.raises(StorageError) as refused:
        open_store(text, schema(V1), create=False)
    assert str(refused.value) == f"{text} is not a bird database (file is not a database)"
    with pytest.raises(ValueError, match=r"versions 1, 2, \.\.\. in order"):
        schema(V2)
