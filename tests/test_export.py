"""``wizard-arena export``: a finished tournament's games as JSON lines, the
input of ``wizard-arena ratings``, from its database alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.runner import plan_games
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .tournaments import plan_config


def _finished(path: str | Path) -> int:
    """A database of a finished tournament (one round a game, e0 wins each); its games."""
    config = plan_config(3, 3, deal_sets=1)
    specs = plan_games(config)
    with ResultsStore(path) as store:
        store.create("t", {"plan": config.plan_key()}, [], specs, config.rules.to_dict())
        for spec in specs:
            winner = spec.seats.index("e0")
            points = [30 if s == winner else -10 for s in range(3)]
            ranks = [1 if s == winner else 2 for s in range(3)]
            bids = [1 if s == winner else 0 for s in range(3)]
            rec = GameRecord(
                spec.id, config.rules.to_dict(), list(spec.seats), spec.seed, 0, 0.0, 1.0,
                "finished", [], [[bids, bids, points, points]], points, ranks,
                [{}, {}, {}], [{}, {}, {}],
            )  # fmt: skip
            store.save_game(spec, rec)
    return len(specs)


def test_export_writes_the_games_that_ratings_reads(
    tmp_path: Path,
    database: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From either store (an SQLite file or a PostgreSQL URL)."""
    db, out = database, tmp_path / "games.jsonl"
    games = _finished(db)
    ran = cli_here(["export", "--database", str(db), "--out", str(out)], capsys, monkeypatch)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines() == [
        f"wrote {games} game(s) to {out} (rate them: wizard-arena ratings {out})"
    ]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == games
    assert set(lines[0]) == {"players", "scores", "game_id", "duplicate_set", "faulted"}
    # to standard output by default: the same lines
    piped = cli_here(["export", "--database", str(db)], capsys, monkeypatch)
    assert piped.returncode == 0 and piped.stdout == out.read_text() and piped.stderr == ""
    rated = cli_here(["ratings", str(out), "--json", "--bootstrap", "0"], capsys, monkeypatch)
    assert rated.returncode == 0, rated.stderr
    assert json.loads(rated.stdout)[0]["name"] == "e0"


def test_export_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = cli_here(["export", "--database", str(tmp_path / "no.sqlite")], capsys, monkeypatch)
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [f"error: no database {tmp_path / 'no.sqlite'}"]
    db = tmp_path / "t.sqlite"
    _finished(db)
    out = tmp_path / "no-such-folder" / "games.jsonl"
    bad = cli_here(["export", "--database", str(db), "--out", str(out)], capsys, monkeypatch)
    assert bad.returncode == 1
    assert bad.stderr.splitlines() == [f"error: cannot write {out}: No such file or directory"]
