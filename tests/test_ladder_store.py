"""The ladder's store and its registry commands, on SQLite and PostgreSQL: a
season created, entrants added, versioned, retired, tokens rotated (only
their hashes kept); bad input one line and nothing written; a store of a
newer schema refused, another program's file refused in one line; one
ladder process at a time on an SQLite store."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from wizard_referee.ladder.sql import LADDER_SCHEMA
from wizard_referee.ladder.store import Busy, LadderStore, new_token, token_hash
from wizard_referee.storage import NotThisStore, open_database

from .cli_here import Ran, cli_here
from .conftest import ROOT


def ladder(capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch, *args: str) -> Ran:
    return cli_here(["ladder", *args], capsys, mp)


def dump(target: Path | str) -> list[str]:
    """Everything the store holds, as text, table by table (SQLite's WAL included)."""
    db = open_database(target, create=False)
    try:
        out = []
        for table in sorted(db.tables()):
            rows = db.execute(f"SELECT * FROM {table}").fetchall()
            out += sorted(f"{table} {row!r}" for row in rows)
        return out
    finally:
        db.close()


def _create(
    target: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    ran = ladder(
        capsys, monkeypatch, "create", "-d", target, "--players", "3", "--round-sizes", "1,2"
    )
    assert ran.returncode == 0, ran.stderr
    assert "3 players" in ran.stdout and "duplicate sets of 6 games" in ran.stdout
    return target


@pytest.fixture
def season(
    database: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """A new season on each backend."""
    return _create(database, capsys, monkeypatch)


@pytest.fixture
def sqlite_season(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    return Path(_create(str(tmp_path / "season.sqlite"), capsys, monkeypatch))


def test_registry_keeps_hashes_of_tokens_and_every_version(
    season: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = ladder(capsys, monkeypatch, "add", "alice", "-d", str(season))
    assert ran.returncode == 0
    token = ran.stdout.strip()
    assert len(token) == 48 and "shown once" in ran.stderr
    text = "\n".join(dump(season))
    assert token not in text and token_hash(token) in text
    with LadderStore.open(season) as store:
        assert store.token(token) is not None and store.token(token)[1] is None  # type: ignore[index]
    again = ladder(capsys, monkeypatch, "rotate-token", "alice", "-d", str(season))
    new = again.stdout.strip()
    v2 = ladder(capsys, monkeypatch, "version", "alice", "-d", str(season)).stdout.strip()
    with LadderStore.open(season) as store:
        assert store.token(token) == (1, "rotated")
        assert store.token(new) == (1, "replaced by version 2")
        assert store.token(v2) is not None and store.token(v2)[1] is None  # type: ignore[index]
        labels = [v.label for v in store.versions()]
        assert labels == ["alice@v1", "alice@v2"]
        assert [v.active for v in store.versions()] == [False, True]
    ran = ladder(capsys, monkeypatch, "retire", "alice", "-d", str(season))
    assert ran.returncode == 0
    with LadderStore.open(season) as store:
        assert store.token(v2) == (2, "retired")
        assert not any(v.active for v in store.versions())
    listed = json.loads(ladder(capsys, monkeypatch, "list", "-d", str(season), "--json").stdout)
    assert [v["entry"] for v in listed[0]["versions"]] == ["alice@v1", "alice@v2"]
    assert listed[0]["retired_at"] is not None


def test_new_tokens_go_to_a_private_file_when_asked(
    sqlite_season: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """add, version and rotate-token write the token to --token-file (0600,
    replaced whole), print none, and say how a bot reads it."""
    file = tmp_path / "alice.token"
    seen = []
    for verb in ("add", "rotate-token", "version"):
        ran = ladder(
            capsys, monkeypatch, verb, "alice", "-d", str(sqlite_season), "--token-file", str(file)
        )
        assert ran.returncode == 0, ran.stderr
        token = file.read_text().strip()
        assert token not in ran.stdout + ran.stderr and str(file) in ran.stdout
        assert "--token-file" in ran.stdout and stat.S_IMODE(file.stat().st_mode) == 0o600
        seen.append(token)
    with LadderStore.open(sqlite_season) as store:
        assert [store.token(t) for t in seen] == [
            (1, "rotated"),
            (1, "replaced by version 2"),
            (2, None),
        ]
    nowhere = ladder(
        capsys, monkeypatch, "rotate-token", "alice", "-d", str(sqlite_season),
        "--token-file", str(tmp_path / "no" / "such"),
    )  # fmt: skip
    assert nowhere.returncode == 2 and "nothing was changed" in nowhere.stderr
    with LadderStore.open(sqlite_season) as store:
        assert store.token(seen[-1]) == (2, None)
    # a change the store refuses leaves the file (the bot's current token) as it was
    refused = ladder(
        capsys, monkeypatch, "rotate-token", "nobody", "-d", str(sqlite_season),
        "--token-file", str(file),
    )  # fmt: skip
    assert refused.returncode != 0 and file.read_text().strip() == seen[-1]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("alice.token")] == [
        "alice.token"
    ]


def test_hosted_entrants_and_their_versions(
    season: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "entries" / "bob"
    folder.mkdir(parents=True)
    ran = ladder(
        capsys, monkeypatch, "add", "bob", "-d", str(season), "--command", "python bot.py {server}",
        "--folder", str(folder), "--memory-limit", "256M",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "{token}" not in ran.stderr
    assert ladder(capsys, monkeypatch, "version", "bob", "-d", str(season)).returncode == 0
    ran = ladder(
        capsys, monkeypatch, "version", "bob", "-d", str(season), "--command",
        "python bot2.py --token {token}",
    )  # fmt: skip
    assert ran.stdout.strip() == "entrant bob: version 3"
    # it is kept (a bot may take its token only so), with a note on what ps shows
    assert "note: {token} puts the entrant's token in its command line" in ran.stderr
    with LadderStore.open(season) as store:
        v1, v2, v3 = store.versions()
    assert v1.command == v2.command == ("python", "bot.py", "{server}")
    assert v3.command == ("python", "bot2.py", "--token", "{token}")
    assert v1.folder == v2.folder == v3.folder == str(folder.resolve())
    assert v3.limits is not None and v3.limits["memory_limit"] == 256 * 2**20
    ran = ladder(capsys, monkeypatch, "list", "-d", str(season))
    assert "bob" in ran.stdout and "hosted" in ran.stdout and "python bot2.py" in ran.stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["add", "alice"], "an entrant named 'alice' exists"),
        (["add", "a b"], "'a b' cannot name an entrant"),
        (["add", "x", "--folder", "."], "--folder is the folder of a hosted entrant's --command"),
        (["add", "x", "--command", "no-such-program-here x"], "program 'no-such-program-here'"),
        (["add", "x", "--command", "python b.py", "--folder", "nowhere"], "does not exist"),
        (["version", "carol"], "no entrant named 'carol'"),
        (["version", "alice", "--command", "python b.py"], "dials in: a new version is a new"),
        (["retire", "carol"], "no entrant named 'carol'"),
        (["rotate-token", "carol"], "no entrant named 'carol'"),
        (["rotate-token", "hosted"], "is hosted: the ladder gives its processes a fresh token"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    sqlite_season: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    error: str,
) -> None:
    season = sqlite_season
    ladder(capsys, monkeypatch, "add", "alice", "-d", str(season))
    ladder(capsys, monkeypatch, "add", "hosted", "-d", str(season), "--command", "python b.py")
    before = dump(season)
    ran = ladder(capsys, monkeypatch, *args, "-d", str(season))
    assert ran.returncode == 2
    assert ran.stderr.count("\n") == 1 and ran.stderr.startswith("error: "), ran.stderr
    assert error in ran.stderr
    assert dump(season) == before


def test_a_retired_entrant_takes_no_version_and_no_token(
    season: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ladder(capsys, monkeypatch, "add", "alice", "-d", str(season))
    ladder(capsys, monkeypatch, "retire", "alice", "-d", str(season))
    before = dump(season)
    for args, error in (
        (["version", "alice"], "is retired: it takes no new version"),
        (["rotate-token", "alice"], "is retired: it has no token to rotate"),
        (["retire", "alice"], "is retired already"),
        (["add", "alice"], "names are never reused"),
    ):
        ran = ladder(capsys, monkeypatch, *args, "-d", str(season))
        assert ran.returncode == 2 and error in ran.stderr, ran.stderr
    assert dump(season) == before


def test_stores_it_cannot_use_are_named_in_one_line(
    sqlite_season: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    season = sqlite_season
    ran = ladder(capsys, monkeypatch, "add", "x", "-d", str(tmp_path / "none.sqlite"))
    assert ran.returncode == 2 and "no ladder at" in ran.stderr
    assert not (tmp_path / "none.sqlite").exists()
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    ran = ladder(capsys, monkeypatch, "list", "-d", str(other))
    assert "not a ladder's" in ran.stderr and ran.stderr.count("\n") == 1, ran.stderr
    ran = ladder(capsys, monkeypatch, "create", "-d", str(season))
    assert ran.returncode == 2 and "exists" in ran.stderr
    ran = ladder(capsys, monkeypatch, "create", "-d", str(tmp_path / "b.sqlite"), "--players", "3",
                 "--round-sizes", "1,21")  # fmt: skip
    assert ran.returncode == 2 and "round_sizes" in ran.stderr
    assert not (tmp_path / "b.sqlite").exists()


def test_a_store_of_a_newer_schema_is_refused_and_left_as_it_is(
    season: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    newer = LADDER_SCHEMA.version + 1
    db = open_database(season, create=False)
    db.execute("UPDATE schema_version SET version = ? WHERE component = 'ladder'", (newer,))
    db.close()
    before = dump(season)
    for args in (["add", "alice"], ["list"], ["standings"]):
        ran = ladder(capsys, monkeypatch, *args, "-d", season)
        assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
        assert f"schema version {newer}, newer than" in ran.stderr and "upgrade" in ran.stderr
    assert dump(season) == before
    ran = ladder(capsys, monkeypatch, "create", "-d", season)
    assert ran.returncode == 2 and ("exists" in ran.stderr or "holds a ladder" in ran.stderr)


def test_a_file_that_is_not_a_ladders_store_is_one_line_naming_the_right_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program's database, or a version table of another form: one
    line, nothing written, told by the error's type (not its words)."""
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.executescript(
        "CREATE TABLE season (x); CREATE TABLE schema_version (version INTEGER NOT NULL);"
    )
    db.close()
    before = dump(other)
    for verb in ("list", "standings"):
        ran = ladder(capsys, monkeypatch, verb, "-d", str(other))
        assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
        assert "not a ladder's" in ran.stderr, ran.stderr
        assert "give the file 'wizard-arena ladder create' made" in ran.stderr
    with pytest.raises(NotThisStore):
        LadderStore.open(other, read_only=True)
    assert dump(other) == before


def test_one_ladder_process_holds_an_sqlite_store(
    sqlite_season: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    season = sqlite_season
    first = LadderStore.open(season)
    first.hold()
    try:
        second = LadderStore.open(season)
        with pytest.raises(Busy, match="PostgreSQL"):
            second.hold()
        second.close()
        ran = ladder(capsys, monkeypatch, "run", "-d", str(season), "--port", "0", "--quiet")
        assert ran.returncode == 2, ran.stderr
        assert ran.stderr.count("\n") == 1 and "in use by another ladder process" in ran.stderr
        assert "PostgreSQL" in ran.stderr
        # a registry command may run meanwhile
        assert ladder(capsys, monkeypatch, "add", "late", "-d", str(season)).returncode == 0
    finally:
        first.close()
    again = LadderStore.open(season)
    again.hold()  # released with its holder
    again.close()


def test_the_courses_term_project_registers_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/course.md's last chapter: its season is created and its entrants,
    the baseline, a dial-in student and a student's learned bot with its own
    weights (hosted), registered by its own command lines."""
    import re
    import shlex

    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    chapter = course[course.index("## 5. The term project") :]
    lines = [
        shlex.split(line, comments=True)[1:]
        for block in re.findall(r"```sh\n(.*?)```", chapter, re.S)
        for line in block.splitlines()
        if line.startswith("wizard-arena ladder ") and " run " not in line
    ]
    assert [w[1] for w in lines] == ["create", "add", "add", "add"], lines
    (tmp_path / "entries" / "bob").mkdir(parents=True)
    for words in lines:
        ran = cli_here(words, capsys, monkeypatch, tmp_path)
        assert ran.returncode == 0, (words, ran.stderr)
    with LadderStore.open(tmp_path / "course.sqlite") as store:
        season, _, _ = store.season()
        versions = {v.label: v for v in store.versions()}
    assert season.sandbox == "bwrap" and season.players == 4
    assert sorted(versions) == ["alice@v1", "baseline@v1", "bob@v1"]
    bob = versions["bob@v1"].command
    assert bob is not None and "wizard_bots.learned:LearnedBot" in bob
    assert "weights=bob_weights.npz" in bob


def test_the_return_window_counts_only_time_a_ladder_process_ran(season: str) -> None:
    """A set's members had time to come back only while a ladder process
    ran: a clean stop counts from its stop, a killed process from the end
    of its lease, and overlapping processes once."""
    from wizard_referee.ladder import sql

    with LadderStore.open(season) as store:
        t = store.clock()
        spans = [
            ("stopped", t + 0, t + 10),
            ("killed", t + 100, t + 130),
            ("other", t + 120, t + 200),
        ]
        for runner, start, end in spans:
            params = {"id": runner, "host": "h", "pid": 1, "now": start, "expires": end}
            store.run(sql.ADD_RUNNER, params)
        store.run(sql.STOP_RUNNER, {"id": "stopped", "now": t + 10})
        assert store.running_seconds(t + 5, t + 150) == pytest.approx(5 + 50)
        assert store.running_seconds(t + 20, t + 90) == 0  # the ladder was down meanwhile
        assert store.running_seconds(t + 150, t + 300) == pytest.approx(50)


def test_a_session_row_stored_again_is_no_error(season: str) -> None:
    """A session's row whose insert committed as the connection went (its
    runner never learnt it) is stored again without an error after the
    reconnect, within its entry's limit or without one."""
    with LadderStore.open(season) as store:
        store.add_entrant("someone", token=new_token())
        (v,) = [v.id for v in store.versions() if v.label == "someone@v1"]
        store.start_runner("r", "h", 1, lease=30.0)
        for limit in (0, 2):
            row = f"r/{limit}"
            assert store.add_session(row, "r", v, 30.0, limit)
            assert store.add_session(row, "r", v, 30.0, limit)
        assert store.online()[v] == 2


def test_the_return_window_does_not_count_a_database_outage(
    season: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process cut off from its database past its lease was not running
    meanwhile (members could not come back: their Hello is refused), also
    once it renews its lease again."""
    with LadderStore.open(season) as store:
        t = store.clock()
        now = [t]
        monkeypatch.setattr(store, "clock", lambda: now[0])
        store.start_runner("r", "h", 1, lease=5.0)
        now[0] = t + 3
        store.renew("r", 5.0)  # (its lease runs to t + 8)
        now[0] = t + 100  # (the database answers again after 92 s)
        store.renew("r", 5.0)
        now[0] = t + 104
        store.renew("r", 5.0)
        assert store.running_seconds(t, t + 104) == pytest.approx(8 + 4)
        assert store.running_seconds(t + 20, t + 90) == 0


def test_standings_open_each_group_and_name_only_known_versions(
    sqlite_season: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groups of the official fit (an order only between them) each opened
    by a line, as on the tournament's leaderboard; NAME@vN of a version
    the entrant does not have is an error."""
    from wizard_referee.ladder.standings import standings_text

    def row(entry: str, rank: int | None, rating: float | None, group: int | None) -> dict:
        return {
            "entry": entry, "rank": rank, "rating": rating, "low": None, "high": None,
            "group": group, "mu": None, "sigma": None, "sets": 1, "games": 6, "online": 0,
            "abandons": 0,
            "active": True,
        }  # fmt: skip

    table = [row("a@v1", 1, 1800.0, 1), row("b@v1", 2, 1300.0, 1), row("c@v1", 3, 1199.0, 2)]
    table += [row("d@v1", 4, 1529.0, 2), row("e@v1", None, None, None)]
    point = {"groups": 2, "finished_sets": 3, "games": 18, "computed_at": 0.0, "notes": []}
    lines = standings_text(table, point, point, 0.0).splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip().startswith("-- group")]
    assert [lines[i].strip() for i in heads] == [
        "-- group 1 of 2 (order only between groups) --",
        "-- group 2 of 2 (order only between groups) --",
    ]
    assert "a@v1" in lines[heads[0] + 1] and "c@v1" in lines[heads[1] + 1]
    one = standings_text(table[:2], {**point, "groups": 1}, None, 0.0)
    assert "-- group" not in one

    ladder(capsys, monkeypatch, "add", "alice", "-d", str(sqlite_season))
    ladder(capsys, monkeypatch, "version", "alice", "-d", str(sqlite_season))
    for entry, says in (("alice@v99", "entrant 'alice' has no version 99 (versions 1-2)"),
                        ("bob", "no entrant 'bob'")):  # fmt: skip
        ran = ladder(capsys, monkeypatch, "standings", entry, "-d", str(sqlite_season))
        assert ran.returncode == 2 and says in ran.stderr
    v2 = ladder(capsys, monkeypatch, "standings", "alice@v2", "-d", str(sqlite_season), "--json")
    assert [r["entry"] for r in json.loads(v2.stdout)["entries"]] == ["alice@v2"]
