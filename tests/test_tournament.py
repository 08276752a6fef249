"""Tournament planning, the results store, resume after SIGKILL, replay and leaderboards."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import trio

from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.runner import (
    TournamentConfig,
    TournamentError,
    leaderboard,
    plan_games,
    run_tournament,
)
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .support import scaled, wait_for_finished_games
from .tournaments import (
    TOURNEY,
    det_entrants,
    env_with_tests,
    plan_config,
    seat_results,
    write_toml,
)

# -- planning -------------------------------------------------------------------------


@pytest.mark.parametrize("seating", ["balanced", "cyclic"])
@pytest.mark.parametrize(("entrants", "players"), [(3, 3), (4, 3), (5, 4), (6, 6), (7, 5)])
def test_plan_duplicate_sets(entrants: int, players: int, seating: str) -> None:
    specs = plan_games(plan_config(entrants, players, seating=seating))
    assert len({s.id for s in specs}) == len(specs)
    assert [s.seq for s in specs] == list(range(len(specs)))
    sets: dict[str, list] = {}
    for s in specs:
        sets.setdefault(s.duplicate_set, []).append(s)
    per_deal = players * (players - 1) if seating == "balanced" else players
    for games in sets.values():
        # one game per seating of the design, all with the same deal seed
        assert len(games) == per_deal
        assert len({g.seed for g in games}) == 1
        # every entrant of the table holds every seat's hand equally often
        members = set(games[0].seats)
        for seat in range(players):
            held = Counter(g.seats[seat] for g in games)
            assert set(held) == members and set(held.values()) == {per_deal // players}
        # balanced: every other member sits directly after each equally often
        after = Counter(
            (g.seats[i], g.seats[(i + 1) % players]) for g in games for i in range(players)
        )
        if seating == "balanced":
            assert len(after) == players * (players - 1) and set(after.values()) == {players}
        else:
            assert len(after) == players  # cyclic: always the same neighbours
    # every entrant plays the same number of games
    counts = Counter(e for s in specs for e in s.seats)
    assert len(set(counts.values())) == 1


def test_plan_is_deterministic_and_seed_dependent() -> None:
    a = plan_games(plan_config(7, 4, max_tables=10))
    assert a == plan_games(plan_config(7, 4, max_tables=10))
    assert [s.seed for s in a] != [
        s.seed for s in plan_games(plan_config(7, 4, max_tables=10, seed=6))
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"tournament": {"players": 4}, "entrant": [{"name": "a", "command": "x"}] * 1},
            "cannot fill a table",
        ),
        ({"tournament": {"bogus": 1}, "entrant": []}, "unknown [tournament] key"),
        ({"tournament": {}, "entrant": [{"name": "a"}]}, "needs a command, or a token"),
        (
            {"tournament": {"players": 3}, "entrant": [{"name": "a", "command": "x"}] * 3},
            "names must be unique",
        ),
        (
            {
                "tournament": {"players": 3, "bid_restriction": "odd"},
                "entrant": [{"name": n, "command": "x"} for n in "abc"],
            },
            "bid_restriction must be one of",
        ),
    ],
)
def test_config_errors(data: dict, message: str) -> None:
    with pytest.raises(TournamentError, match=message.replace("[", r"\[")):
        TournamentConfig.from_dict(data)


def test_relative_paths_in_the_file_are_relative_to_its_folder(tmp_path: Path) -> None:
    """from_toml's promise (docs/configuration.md: ``database`` "relative to the
    TOML file"), for ``workdir`` and the default database too (both were
    taken from the current folder); ``--database`` on the command line is
    relative to the current folder (it was taken from the file's)."""
    entrants = [{"name": n, "command": "x"} for n in "abc"]
    path = write_toml(tmp_path / "t.toml", {"players": 3, "workdir": "bots"}, entrants)
    config = TournamentConfig.from_toml(path)
    assert Path(config.workdir) == tmp_path / "bots"
    assert Path(config.database) == tmp_path / "tournament.sqlite"
    path = write_toml(tmp_path / "u.toml", {"players": 3, "database": "u.sqlite"}, entrants)
    assert Path(TournamentConfig.from_toml(path).workdir) == tmp_path
    assert Path(TournamentConfig.from_toml(path).database) == tmp_path / "u.sqlite"
    assert TournamentConfig.from_toml(path, database="cli.sqlite").database == "cli.sqlite"


def test_cli_refuses_bad_config_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[tournament\n")
    proc = cli_here(["tournament", str(bad)], capsys, monkeypatch)
    assert proc.returncode == 2
    assert "not valid TOML" in proc.stderr and "Traceback" not in proc.stderr


# -- store ----------------------------------------------------------------------------


def test_store_refuses_counting_a_game_twice(database: str) -> None:
    config = plan_config(3, 3, deal_sets=1)
    specs = plan_games(config)
    store = ResultsStore(database)
    store.create(
        "t", {"plan": config.plan_key()}, [("e0", "command", "true")], specs, config.rules.to_dict()
    )
    rec = GameRecord(
        specs[0].id,
        config.rules.to_dict(),
        list(specs[0].seats),
        specs[0].seed,
        0,
        0.0,
        1.0,
        "finished",
        [],
        [[[0, 0, 0], [1, 0, 0], [-10, 20, 20], [-10, 20, 20]]],
        [-10, 20, 20],
        [3, 1, 1],
        [{}, {}, {}],
        [{}, {}, {}],
    )
    store.save_game(specs[0], rec)
    with pytest.raises(ValueError, match="already finished"):
        store.save_game(specs[0], rec)
    assert len(store.seat_results()) == 3
    assert store.counts() == {"finished": 1, "pending": len(specs) - 1}
    assert [s.id for s in store.unfinished()] == [s.id for s in specs[1:]]
    assert store.record_tags("duplicate_set") == {}  # (none recorded)
    assert store.find_game_ids(specs[0].id[:4]) == [specs[0].id]
    assert store.find_game_ids(specs[0].id[:4].upper()) == []  # ids are exact, on both
    store.close()
    with ResultsStore(database, read_only=True) as reader:  # as the web pages read it
        assert reader.fingerprint()[0] == 1 and reader.record(specs[0].id) == rec


# -- full runs ------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow(seconds=10)
def test_sigkill_and_resume_gives_the_uninterrupted_results(
    tmp_path: Path,
    database: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same on both stores: the killed run's database (``--database``:
    an SQLite file or a PostgreSQL URL) resumed holds what one uninterrupted
    run (SQLite, in this process) stored."""
    monkeypatch.chdir(tmp_path)  # (a PostgreSQL store's logs: DBNAME.logs, here)
    entrants = det_entrants(4)
    # 1. uninterrupted run, in-process
    config_a = TournamentConfig.from_dict(
        {"tournament": {**TOURNEY, "database": str(tmp_path / "a.sqlite")}, "entrant": entrants}
    )
    # the bots the in-process run launches import tests.bots (restored after the test)
    monkeypatch.setenv("PYTHONPATH", env_with_tests()["PYTHONPATH"])
    store = trio.run(run_tournament, config_a)
    store.close()
    full = seat_results(tmp_path / "a.sqlite")
    assert len(full) == len(plan_games(config_a)) * 4

    # 2. the same tournament as a subprocess, killed with SIGKILL mid-way
    toml = write_toml(tmp_path / "b.toml", TOURNEY, entrants)
    db = database
    cmd = [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"]
    cmd += ["--database", db]
    proc = subprocess.Popen(
        cmd, env=env_with_tests(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    finished = wait_for_finished_games(db, 3, 120, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 3 <= finished < len(plan_games(config_a)), "kill did not land mid-tournament"
    partial = seat_results(db)
    assert partial, "finished games were lost"

    # 3. resume completes it; results equal the uninterrupted run
    res = subprocess.run(
        [*cmd, "--resume", "--json"],
        env=env_with_tests(),
        capture_output=True,
        text=True,
        check=False,
        timeout=scaled(300),
    )
    assert res.returncode == 0, res.stderr
    assert seat_results(db) == full
    board = json.loads(res.stdout)
    assert {r["name"] for r in board} == {e["name"] for e in entrants}
    assert all(r["games"] == len(plan_games(config_a)) for r in board)

    # 4. replay --verify each stored game through the rules core (in this
    # process: the replay verb's own subprocess is in test_compare)
    with ResultsStore(db) as store_b:
        ids = [g.id for g in store_b.games("finished")]
    for gid in ids[:2]:
        out = cli_here(["replay", gid, "--database", str(db), "--verify"], capsys, monkeypatch)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "verified, no difference" in out.stdout
    shown = cli_here(["replay", ids[0], "--database", str(db)], capsys, monkeypatch)
    assert shown.returncode == 0, shown.stderr
    assert "trick 1:" in shown.stdout and "final:" in shown.stdout

    # 5. a resumed, complete tournament has nothing left to play (in this process)
    again = cli_here([*cmd[3:], "--resume", "--csv"], capsys, monkeypatch)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0].startswith("rank,name,rating,low,high,games")
    assert seat_results(db) == full


def test_leaderboard_statistics(database: str) -> None:
    config = plan_config(3, 3, deal_sets=1)
    specs = plan_games(config)
    store = ResultsStore(database)
    store.create("t", {"plan": config.plan_key()}, [], specs, config.rules.to_dict())
    # e0 wins every game: 1 round, bid accuracy 1/1 for the winner
    for spec in specs:
        winner = spec.seats.index("e0")
        points = [-10, -10, -10]
        points[winner] = 30
        bids = [0, 0, 0]
        bids[winner] = 1
        tricks = [1 if s == (winner + 1) % 3 else 0 for s in range(3)]
        tricks[winner] = 1
        ranks = [2, 2, 2]
        ranks[winner] = 1
        faults: list[dict[str, int]] = [{}, {}, {}]
        faults[(winner + 2) % 3] = {"timeout": 2}
        rec = GameRecord(
            spec.id,
            config.rules.to_dict(),
            list(spec.seats),
            spec.seed,
            0,
            0.0,
            1.0,
            "finished",
            [],
            [[bids, tricks, points, points]],
            points,
            ranks,
            faults,
            [{}, {}, {}],
        )
        store.save_game(spec, rec)
    board = leaderboard(store, bootstrap=50)
    top = board.rows[0]
    assert top.name == "e0" and top.tables_won == 1.0 and top.mean_points == 30
    assert top.bid_accuracy == 1.0 and top.games == len(specs)
    assert any("only the order of" in n for n in board.notes)  # e0 won every comparison
    assert top.group == 1 and top.low is None  # alone in its group: no interval
    assert sum(r.timeouts for r in board.rows) == 2 * len(specs)
    excluded = leaderboard(store, bootstrap=0, exclude_faulted=True)
    assert excluded.rows and "kept out of the ratings" in excluded.notes[-1]
    store.close()


def test_rule_variants_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variant flags override the file's keys; --no-X turns one off."""
    import argparse

    from wizard_arena.rules import Rules
    from wizard_referee.tournament import cmd_tournament

    path = tmp_path / "t.toml"
    path.write_text(
        "[tournament]\nplayers = 3\ntricksy = true\n"
        + "".join(f'[[entrant]]\nname = "b{i}"\ncommand = "x"\n' for i in range(3)),
        encoding="utf-8",
    )
    parser = argparse.ArgumentParser()
    cmd_tournament.add_arguments(parser)

    def config(*argv: str) -> TournamentConfig:
        args = parser.parse_args([str(path), *argv])
        return TournamentConfig.from_toml(path, **cmd_tournament.overrides_from_args(args))

    assert config().rules == Rules(players=3, tricksy=True)
    assert config("--hidden-bids", "--round-sizes", "1,3,5").rules == Rules(
        players=3, tricksy=True, hidden_bids=True, hand_sizes=(1, 3, 5)
    )
    assert config("--no-tricksy", "--maximus", "--lowest-score-deals").rules == Rules(
        players=3, maximus=True, lowest_score_deals=True
    )
    assert config("--blind-first-round", "--round-sizes", "1,2").rules.blind_first_round
    with pytest.raises(TournamentError, match="rules: "):
        config("--maximus", "--round-sizes", "2,4")
    # on the command line: a clear error and exit status 2 before anything starts
    # (in this process: cli_here restores the logging the command configures)
    for argv, message in (
        (["--round-sizes", "2,x"], "--round-sizes must be whole numbers"),
        (["--maximus", "--round-sizes", "2,4"], "error: rules: "),
    ):
        proc = cli_here(["tournament", str(path), *argv], capsys, monkeypatch)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
