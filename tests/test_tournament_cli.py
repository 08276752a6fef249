"""What a user sees from the tournament runner and its neighbours: one
``error: ...`` line (exit status 2) naming the problem and the fix instead of a
traceback, entrants that cannot start reported at once with their log, the
example tournament on a fresh clone, logs kept apart from the progress line,
and a ``--resume`` mismatch named key by key."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from wizard_referee.referee.listen import serve_failure
from wizard_referee.storage import DatabaseError
from wizard_referee.tournament.cli_errors import TOURNAMENT_FIXES, runner_error
from wizard_referee.tournament.config_keys import TOURNAMENT_KEYS, plan_differences
from wizard_referee.tournament.runner import (
    TournamentConfig,
    TournamentError,
    plan_games,
    run_tournament,
)
from wizard_referee.tournament.store import ResultsStore, store_exists

from .cli_here import Ran, cli_here
from .conftest import NEEDS_POSTGRES, ROOT
from .node_packages import NODE, NPM, node_bot_copy
from .support import interruptible_cli, scaled, wait_for_finished_games
from .tournaments import BOT, entrant, write_toml


def _env() -> dict[str, str]:
    """The tests' modules importable, and the venv's ``wizard-arena`` on PATH
    (as after ``. .venv/bin/activate``)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    pythonpath = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PATH": path, "PYTHONPATH": pythonpath}


def _cli(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=_env(),
        check=False,
    )


def _here(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    cwd: Path = ROOT,
) -> Ran:
    """``wizard-arena ARGS`` in this process, with :func:`_env`'s PATH and
    PYTHONPATH: for what is refused before a game starts (a subprocess each
    cost 0.4 s of CPU to start)."""
    for key in ("PATH", "PYTHONPATH"):
        monkeypatch.setenv(key, _env()[key])
    return cli_here(list(args), capsys, monkeypatch, cwd=cwd)


def _one_error(proc: subprocess.CompletedProcess[str] | Ran) -> str:
    """The run failed with exit status 2 and one ``error:`` line, no traceback."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def _det(n: int) -> list[dict[str, object]]:
    return [
        entrant(f"det-{i}", "tests.bots.det_bot:DeterministicBot", "--arg", f"salt=s{i}")
        for i in range(n)
    ]


# -- 6. configuration: every bad key at once ----------------------------------------------


def test_every_bad_key_is_reported_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = write_toml(
        tmp_path / "bad.toml",
        {"players": "four", "move_time": "fast", "database": 5, "dealsets": 2},
        [{"name": "a", "command": "x"}, {"name": "b"}, {"name": "c", "command": "x"}],
    )
    proc = _here(capsys, monkeypatch, "tournament", str(toml))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "error: 5 problems:",
        "  unknown [tournament] key dealsets (did you mean deal_sets?)",
        '  players must be a whole number from 3 to 6 (e.g. players = 4), not "four"',
        "  database must be a file path or a postgresql:// URL, a string "
        '(e.g. database = "results.sqlite"), not 5',
        '  move_time must be a number of seconds above 0 (e.g. move_time = 1.0), not "fast"',
        "  entrant 'b' needs a command, or a token for an external bot",
    ]
    assert not list(tmp_path.glob("*.sqlite*"))


def test_too_few_entrants_is_reported_with_the_bad_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = write_toml(
        tmp_path / "few.toml",
        {"players": 4, "move_time": "fast"},
        [{"name": "a", "command": "x"}, {"name": "b", "command": "x"}],
    )
    proc = _here(capsys, monkeypatch, "tournament", str(toml))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: 2 problems:",
        '  move_time must be a number of seconds above 0 (e.g. move_time = 1.0), not "fast"',
        "  2 entrants cannot fill a table of 4 (add entrants, or set a smaller players)",
    ]


def test_one_table_names_every_key_and_accepts_the_defaults() -> None:
    fields = {f.name: f for f in dataclasses.fields(TournamentConfig)}
    assert list(TOURNAMENT_KEYS) == [name for name in fields if name != "entrants"]
    for name, key in TOURNAMENT_KEYS.items():
        assert key.accepts(fields[name].default), name
    assert not TOURNAMENT_KEYS["players"].accepts(True)  # a bool is not a number here
    assert not TOURNAMENT_KEYS["move_time"].accepts(float("nan"))


# -- 6. and 7. entrants that cannot start -------------------------------------------------


def test_a_missing_program_with_parallel_2_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = write_toml(
        tmp_path / "t.toml",
        {"players": 3, "parallel": 2, "database": "t.sqlite"},
        [*_det(2), {"name": "ghost", "command": "no-such-bot-program-xyz --server {server}"}],
    )
    line = _one_error(_here(capsys, monkeypatch, "tournament", str(toml)))
    assert line.startswith(
        "error: entrant 'ghost': program 'no-such-bot-program-xyz' not found on PATH"
    )
    assert not list(tmp_path.glob("t.sqlite*"))


@pytest.mark.e2e
def test_an_entrant_that_cannot_start_costs_only_its_own_seats(tmp_path: Path) -> None:
    """A bot that dies before it connects (here at import) is its entrant's
    fault alone: it is reported at once with its log's last lines, not
    restarted and not waited for (connect_timeout 600 s, far past the
    subprocess timeout); its seats are played by the default action and
    recorded as ``crash`` ("never connected"), every game is played and
    stored, and the leaderboard counts its faulted games. Its log keeps
    ``output_limit`` bytes (its 1000 bytes of output, flushed after the
    traceback, are cut, one line saying so)."""
    noisy = "import atexit; atexit.register(print, 'n' * 1000); import no_such_module_xyz"
    broken = {"name": "broken", "command": [sys.executable, "-c", noisy]}
    toml = write_toml(
        tmp_path / "t.toml",
        {
            "players": 3,
            "parallel": 2,
            "connect_timeout": 600,
            "database": "t.sqlite",
            "round_sizes": [1],
            "deal_sets": 1,
            "output_limit": 300,
        },
        [*_det(3), broken],
    )
    proc = _cli("tournament", str(toml), "--json", cwd=tmp_path, timeout=scaled(120))
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert (
        "entrant 'broken' cannot start: its process exited with status 1 before it connected\n"
        in err
    ), err
    assert "its seats are played by the referee's default action" in err
    assert "| ModuleNotFoundError: No module named 'no_such_module_xyz'" in err
    logs = list((tmp_path / "t.sqlite.logs").glob("broken-*.log"))
    assert len(logs) == 2
    for path in logs:
        marker, *output = path.read_text().splitlines(keepends=True)
        assert marker.startswith("--- wizard-arena: ") and "starting broken" in marker
        assert output[-1] == "--- wizard-arena: output past 300 bytes dropped ---\n"
        assert len("".join(output[:-1])) == 300 + 1  # (and the newline before that line)
    with ResultsStore(str(tmp_path / "t.sqlite")) as store:
        counts = store.counts()
        records = [r for g in store.games() if (r := store.record(g.id)) is not None]
    assert counts == {"finished": len(records)} and records, counts
    seen = 0
    for rec in records:
        for seat, name in enumerate(rec.names):
            if name == "broken":
                seen += 1
                assert rec.fault_details[seat] == {
                    "crash": "never connected: its process exited with status 1"
                }
            else:
                assert not rec.faults[seat], (name, rec.faults)
    assert 0 < seen < len(records) * 3  # games without it were played too
    board = {row["name"]: row for row in json.loads(proc.stdout)}
    assert board["broken"]["faulted_games"] == seen and board["det-0"]["faulted_games"] == 0


@pytest.mark.e2e
def test_a_bot_given_up_between_games_costs_only_its_own_seats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot that leaves after its first game, past its restarts (none here),
    is not waited for (connect_timeout 600 s): its later seats are played by
    the default action at once, recorded as ``crash`` with the reason, and
    every game is played and stored."""
    from wizard_referee.hosting import entrants

    monkeypatch.setattr(entrants, "MAX_RESTARTS", 0)
    once = entrant("once", "tests.bots.det_bot:DeterministicBot", "--games", "1")
    config = TournamentConfig.from_toml(
        write_toml(
            tmp_path / "t.toml",
            {
                "players": 3,
                "parallel": 1,
                "round_sizes": [1],
                "connect_timeout": 600,
                "database": "t.sqlite",
            },
            [*_det(3), once],
        )
    )
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    stream = io.StringIO()

    async def run() -> ResultsStore:
        with trio.fail_after(100):  # (not the 600 s of connect_timeout)
            return await run_tournament(config, progress_stream=stream)

    store = trio.run(run)
    with store:
        counts = store.counts()
        faults = [rec.fault_details[rec.names.index("once")] for rec in store.records_of("once")]
    assert counts == {"finished": len(plan_games(config))}, counts
    assert faults[0] == {}, faults  # its one game, played
    reason = "its process ended 1 time(s) and is not restarted again; the last exited with status 0"
    # (a game seated as it left records its exit; every later one, the reason)
    later = [f["crash"] for f in faults[1:]]
    assert later[-1] == reason and all(c == reason or "process exited" in c for c in later)
    assert "entrant 'once' (instance 0) exited with status 0" in stream.getvalue()


def test_a_tournament_that_cannot_start_leaves_no_empty_logs_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store of a run in which no game was played is removed, and so is
    its logs' folder when it holds no file (a Ray worker makes its own
    folder in it before it knows it cannot play); a file keeps it."""
    absent = [{"name": f"x{i}", "token": f"never-used-{i}"} for i in range(3)]
    toml = write_toml(
        tmp_path / "t.toml", {"players": 3, "connect_timeout": 0.2, "database": "t.sqlite"}, absent
    )
    (tmp_path / "t.sqlite.logs" / "worker-0").mkdir(parents=True)
    line = _one_error(_here(capsys, monkeypatch, "tournament", str(toml), "--quiet", cwd=tmp_path))
    assert "did not connect" in line
    assert not (tmp_path / "t.sqlite.logs").exists() and not (tmp_path / "t.sqlite").exists()
    (tmp_path / "t.sqlite.logs" / "worker-0").mkdir(parents=True)
    (tmp_path / "t.sqlite.logs" / "worker-0" / "worker.log").write_text("kept\n")
    _one_error(_here(capsys, monkeypatch, "tournament", str(toml), "--quiet", cwd=tmp_path))
    assert (tmp_path / "t.sqlite.logs" / "worker-0" / "worker.log").read_text() == "kept\n"


@NEEDS_POSTGRES
def test_a_postgresql_store_is_refused_resumed_and_removed_as_a_file_is(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--database postgresql://...``: nothing to resume in an empty
    database; a run in which no game was played leaves the database as it
    was (its tables dropped, the database kept), its logs in DBNAME.logs
    in the current folder; a database holding a tournament is not
    overwritten."""
    absent = {"name": "absent", "token": "never-used"}
    toml = write_toml(
        tmp_path / "t.toml",
        {"players": 3, "round_sizes": [1], "connect_timeout": 1},
        [*_det(2), absent],
    )
    run = ("tournament", str(toml), "--database", postgres_url)
    line = _one_error(_here(capsys, monkeypatch, *run, "--resume", cwd=tmp_path))
    assert line == f"error: {postgres_url} holds no tournament: nothing to resume"
    err = _here(capsys, monkeypatch, *run, "--quiet", cwd=tmp_path).stderr
    assert err.startswith("error: entrant(s) ") and "absent did not connect" in err, err
    name = postgres_url.split("/")[3].split("?")[0]
    assert list((tmp_path / f"{name}.logs").glob("det-*.log"))
    assert not store_exists(postgres_url)  # nothing was played: run it again
    with ResultsStore(postgres_url) as store:
        store.create("t", {}, [], [], {})
    line = _one_error(_here(capsys, monkeypatch, *run, cwd=tmp_path))
    assert line == (
        f"error: {postgres_url} holds a tournament: continue that tournament with --resume, "
        "or give another database (--database PATH)"
    )


def test_a_store_failing_mid_run_is_one_line_that_says_resume() -> None:
    """A lost connection to the PostgreSQL server (or a full disk) while a
    game is stored: one line, inside trio's groups as the runner gets it."""
    lost = DatabaseError("postgresql://arena@db/league", "terminating connection")
    group = BaseExceptionGroup("x", [BaseExceptionGroup("y", [lost])])
    error = runner_error(group, "127.0.0.1", 0)
    assert isinstance(error, TournamentError)
    assert str(error) == (
        "the results store failed: postgresql://arena@db/league: terminating connection "
        "(every game stored before is kept: resume with --resume once the store works again)"
    )


# -- 8. the example tournament on a fresh clone ------------------------------------------


def _fresh_example(tmp: Path) -> Path:
    """example_bots/tournament.toml and the Node bot as a fresh clone has them."""
    dest = tmp / "example_bots"
    (dest / "node").mkdir(parents=True)
    shutil.copy(ROOT / "example_bots" / "tournament.toml", dest)
    for name in ("bot.js", "package.json", "package-lock.json"):
        shutil.copy(ROOT / "example_bots" / "node" / name, dest / "node")
    return dest


def test_the_example_without_node_packages_says_the_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh_example(tmp_path)
    line = _one_error(
        _here(capsys, monkeypatch, "tournament", "example_bots/tournament.toml", cwd=tmp_path)
    )
    if NODE is None:
        assert "program 'node' not found on PATH: install Node.js" in line
    else:
        command = "npm ci --prefix example_bots/node"
        assert (
            f"entrant 'node' needs its Node.js packages, which are not installed: run `{command}`"
            in line
        )
        assert command in (ROOT / "docs" / "tournament.md").read_text()
    assert not list((tmp_path / "example_bots").glob("examples.sqlite*"))  # nor its logs


@pytest.mark.e2e
@pytest.mark.skipif(NODE is None or NPM is None, reason="the example has a Node.js entrant")
def test_the_example_tournament_runs_as_the_guide_says(tmp_path: Path) -> None:
    """The guide's commands (npm ci once, then the example) on a shorter plan;
    standard error has the progress and where the results are, no log lines.

    The example's own file, entrants and settings, copied with rounds of 1 to 3
    cards (``round_sizes``, an option the Node bot then declares with
    ``--rule-options``), beside a link to a copy of the example's ``node``
    folder with its packages (tests/node_packages.py: ``npm ci`` outside the
    source tree): whole games of 15 rounds took 11 s of CPU, mostly the Monte
    Carlo bot's."""
    node_dir = node_bot_copy(tmp_path / "clone")  # npm ci, not into the source tree
    db = tmp_path / "ex.sqlite"
    example = (ROOT / "example_bots" / "tournament.toml").read_text()
    node = 'command = "node node/bot.js '
    assert example.count(node) == 1 and example.count("[tournament]\n") == 1
    short = example.replace(node, node + "--rule-options round_sizes ").replace(
        "[tournament]\n", "[tournament]\nround_sizes = [1, 2, 3]\n"
    )
    (tmp_path / "tournament.toml").write_text(short)
    # the entrants run in the file's folder (the default workdir), as the example's
    (tmp_path / "node").symlink_to(node_dir)
    proc = _cli(
        "tournament",
        str(tmp_path / "tournament.toml"),
        "--deal-sets",
        "1",
        "--seating",
        "cyclic",
        "--database",
        str(db),
        timeout=scaled(280),
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.splitlines()
    assert err[0] == f"examples: 4 games; results in {db}, logs in {db}.logs/"
    assert err[-1].startswith(f"results in {db} (a game: wizard-arena replay GAME_ID")
    assert not [line for line in err if line.lstrip("\r").startswith("{")]
    assert "fork_posix" not in proc.stderr
    assert {"random", "heuristic", "montecarlo", "node"} <= set(proc.stdout.split())
    assert (tmp_path / "ex.sqlite.logs" / "node-0.log").exists()


# -- 10. logs apart from the progress line ----------------------------------------------


@pytest.mark.e2e
def test_logs_go_to_a_file_and_progress_to_standard_error(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    crashy = entrant("crashy", "tests.bots.crash_bot:CrashOnceBot", "--arg", f"marker={marker}")
    toml = write_toml(
        tmp_path / "t.toml",
        {
            "name": "apart",
            "players": 3,
            "round_sizes": [1, 2, 3],
            "move_time": scaled(5.0),
            "database": "t.sqlite",
        },
        [*_det(2), crashy],
    )
    proc = _cli("tournament", str(toml), timeout=scaled(200))
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()  # a bot crashed, was restarted: a warning in the log
    db = tmp_path / "t.sqlite"
    err = proc.stderr.splitlines()
    assert err[0] == f"apart: 6 games; results in {db}, logs in {db}.logs/"
    assert err[-1].startswith(f"results in {db} ")
    assert not [line for line in err if "{" in line or "entrant_exited" in line], err
    assert "fork_posix" not in proc.stderr
    log = [json.loads(line) for line in (tmp_path / "t.sqlite.logs" / "runner.log").open()]
    assert "entrant_exited" in {entry["event"] for entry in log}


@pytest.mark.e2e
def test_any_name_is_a_log_file_in_the_logs_folder_and_bots_see_opaque_ids(
    tmp_path: Path,
) -> None:
    """Entrant names with "..", "/", "#", "%" and spaces: each bot's log is a
    file of DATABASE.logs/ (nothing written beside or above it; "a/b" once
    aborted the run), and every game id a bot was told is the record's
    opaque ``bot_game_id``, never the planned id naming deal and rotation."""
    from wizard_referee.hosting.entrants import log_name

    names = ["../../escaped", "a/b", "c #1 100%"]
    entrants = [
        entrant(n, "tests.bots.det_bot:IdTellingBot", "--arg", f"salt=s{i}")
        for i, n in enumerate(names)
    ]
    folder = tmp_path / "in" / "here"
    folder.mkdir(parents=True)
    toml = write_toml(
        folder / "t.toml",
        {"players": 3, "round_sizes": [1, 2], "deal_sets": 1, "database": "t.sqlite"},
        entrants,
    )
    proc = _cli("tournament", str(toml), timeout=scaled(200))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    logs = folder / "t.sqlite.logs"
    assert {log_name(n, 0) for n in names} <= {p.name for p in logs.iterdir()}
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file() and logs not in p.parents) == [
        "t.sqlite",
        "t.toml",
    ]
    told = "".join((logs / log_name(n, 0)).read_text() for n in names)
    with ResultsStore(folder / "t.sqlite", read_only=True) as store:
        records = [store.record(g.id) for g in store.games()]
    opaque = {r.tags["bot_game_id"] for r in records if r is not None}
    assert len(opaque) == len(records) >= 6
    assert set(re.findall(r"game id told: (\S+)", told)) == opaque
    assert not any(r.game_id in told for r in records if r is not None)
    # the organiser finds a game by the id its bots were told
    first = next(r for r in records if r is not None)
    shown = _cli("replay", first.tags["bot_game_id"], "--database", str(folder / "t.sqlite"))
    assert shown.returncode == 0 and first.game_id in shown.stdout, shown.stderr


# -- 6. ports in use, a database that is not one, the demo -------------------------------


def test_serve_and_tournament_on_a_port_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = _one_error(_cli("serve", "--port", str(port)))
        assert line == (
            f"error: cannot serve on 127.0.0.1:{port}: the port is in use (another "
            "wizard-arena serve or tournament?): choose another port with --port N "
            "(port 0 takes any free port)"
        )
        toml = write_toml(tmp_path / "t.toml", {"players": 3, "database": "t.sqlite"}, _det(3))
        line = _one_error(_here(capsys, monkeypatch, "tournament", str(toml), "--port", str(port)))
        assert line.startswith(f"error: cannot serve on 127.0.0.1:{port}: the port is in use")
        assert "port = N in [tournament], or --port N" in line
        assert not (tmp_path / "t.sqlite").exists()
        # the same message when the server's own bind fails (inside trio's groups)
        group = BaseExceptionGroup("x", [BaseExceptionGroup("y", [OSError("cannot serve on")])])
        message = serve_failure(group, "127.0.0.1", port, *TOURNAMENT_FIXES)
        assert message is not None and "the port is in use" in message


def test_replay_of_a_file_that_is_not_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    line = _one_error(_here(capsys, monkeypatch, "replay", "t0-d0-r0", "--database", str(text)))
    assert line.startswith(f"error: {text} is not a results database (file is not a database)")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE birds (name TEXT)")
    line = _one_error(_here(capsys, monkeypatch, "replay", "t0-d0-r0", "--database", str(other)))
    assert "is an SQLite database but not a tournament's results" in line
    with sqlite3.connect(other) as con:  # left as it was: no tables added
        tables = con.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("birds",)]


def test_the_demo_names_the_database_it_kept() -> None:
    from wizard_referee.tournament.cmd_demo import closing_lines

    kept = closing_lines("d.sqlite")
    assert kept[:2] == [
        "The results are kept in d.sqlite; a game, trick by trick:",
        "  wizard-arena replay GAME_ID --database d.sqlite",
    ]
    assert "--database" in closing_lines(None)[1]  # how to keep them (the demo's run: e2e)


def test_the_demo_explains_its_leaderboards_columns() -> None:
    from wizard_referee.tournament.cmd_demo import LEGEND

    legend = " ".join(line.strip() for line in LEGEND)
    for column in ("rating:", "vs next:", "LOS:", "won:", "bid acc:"):
        assert column in legend, column
    assert "likelihood of superiority" in legend and "finished first" in legend


def test_demo_refuses_an_existing_database_without_suggesting_resume(tmp_path: Path) -> None:
    existing = tmp_path / "existing.sqlite"
    existing.write_bytes(b"")
    line = _one_error(_cli("demo", "--database", str(existing)))
    assert f"{existing} exists" in line and "--resume" not in line


# -- 11. --resume names the keys that differ ---------------------------------------------


def _config(tmp: Path, **section: object) -> TournamentConfig:
    return TournamentConfig.from_dict(
        {
            "tournament": {"players": 3, "seed": 7, "database": str(tmp / "r.sqlite"), **section},
            "entrant": [{"name": f"e{i}", "command": [*BOT, "x"]} for i in range(3)],
        }
    )


def test_a_resume_mismatch_names_each_differing_key(tmp_path: Path) -> None:
    stored = _config(tmp_path)
    with ResultsStore(stored.database) as store:
        store.create(
            "t",
            {"plan": stored.plan_key()},
            [(e.name, e.kind, None) for e in stored.entrants],
            plan_games(stored),
            stored.rules.to_dict(),
        )
    given = _config(tmp_path, seed=99, tricksy=True)
    with pytest.raises(TournamentError) as err:
        trio.run(lambda: run_tournament(given, resume=True))
    assert str(err.value) == (
        f"the configuration does not match the stored tournament in {stored.database} "
        "(seed: stored 7, given 99; tricksy: stored (not set), given true): resume with "
        "the stored values, or start a new tournament with another database"
    )
    assert Path(stored.database).exists()  # a stored tournament is never removed


def test_plan_differences() -> None:
    stored = {"entrants": ["a", "b"], "round_sizes": [1, 2], "seed": 7}
    assert plan_differences(stored, {**stored, "round_sizes": (1, 2)}) == []
    assert plan_differences(stored, {**stored, "entrants": ["a", "c"]}) == [
        'entrants: stored ["a", "b"], given ["a", "c"]'
    ]


# -- 11. git ignores what a tournament writes ----------------------------------------------


def test_git_ignores_databases_and_their_logs() -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = [
        "example_bots/examples.sqlite",
        "example_bots/examples.sqlite-wal",
        "example_bots/examples.sqlite-shm",
        "example_bots/examples.sqlite.logs/node-0.log",
        "example_bots/examples.sqlite.logs/runner.log",
    ]
    proc = subprocess.run(
        [git, "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.stdout.split() == paths


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGINT, True), (signal.SIGTERM, True), (signal.SIGTERM, False)],
    ids=["ctrl-c", "sigterm-to-all", "sigterm-to-the-runner"],
)
def test_ctrl_c_says_how_to_resume(tmp_path: Path, sig: int, group: bool) -> None:
    """Ctrl-C (to the whole process group, as a terminal sends it) or a
    SIGTERM (to all, or to the runner alone): the runner stops its bots,
    keeps its games and says how to resume; nothing else on standard error
    (no warning of a coroutine left unstarted: the signal cancels the run,
    never raises into its code), and no process of it is left."""
    toml = write_toml(
        tmp_path / "t.toml",
        {"players": 3, "round_sizes": [1, 2], "deal_sets": 50, "database": "t.sqlite"},
        _det(3),
    )
    db = tmp_path / "other db.sqlite"  # given on the command line, with an override
    typed = ["tournament", str(toml), "--quiet", "--database", str(db), "--seed", "5"]
    proc = subprocess.Popen(
        interruptible_cli(*typed),
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Ctrl-C goes to the terminal's foreground group
    )
    wait_for_finished_games(db, 1, 120, proc)
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=scaled(60))
    assert proc.returncode == 130, err
    assert err.strip() == (
        f"interrupted: the finished games are kept in {db}; continue with: "
        f"wizard-arena {shlex.join([*typed, '--resume'])}"
    )
    with pytest.raises(ProcessLookupError):  # the launcher and the bots are gone too
        os.killpg(proc.pid, 0)


@pytest.mark.e2e
def test_a_crashing_entrant_is_shown_on_standard_error(tmp_path: Path) -> None:
    """A bot process that dies mid-game is restarted, its games record
    ``crash``, and the user sees one line saying so (not only the log file)."""
    marker = tmp_path / "crashed"
    crashy = entrant("crashy", "tests.bots.crash_bot:CrashOnceBot", "--arg", f"marker={marker}")
    toml = write_toml(
        tmp_path / "t.toml",
        {"players": 3, "round_sizes": [1, 2, 3], "move_time": 5.0, "database": "t.sqlite"},
        [crashy, *_det(2)],
    )
    proc = _cli("tournament", str(toml), "--json", timeout=scaled(180))
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    lines = [ln for ln in proc.stderr.splitlines() if "exited with status" in ln]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("entrant 'crashy' (instance 0) exited with status 3 (restart 1 of")
    assert "its games record the fault 'crash'" in lines[0]
    assert str(tmp_path / "t.sqlite.logs" / "crashy-0.log") in lines[0]
