"""The tournament's live progress keeps its provisional Elo up to date game
by game: the store is read once, when the run starts (a resumed tournament's
earlier games), never again every time the line is shown."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
import trio

from wizard_arena.rules import Rules
from wizard_referee.ratings.models import EloState, GameResult, elo
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.runner import Progress, TournamentConfig, run_tournament
from wizard_referee.tournament.store import GameSpec, ResultsStore

from .conftest import ROOT
from .support import scaled


def _store(path: Path, games: list[tuple[tuple[str, ...], list[int]]]) -> ResultsStore:
    names = sorted({p for players, _ in games for p in players})
    specs = [GameSpec(f"g{k}", k, k, 0, 0, str(k), players) for k, (players, _) in enumerate(games)]
    store = ResultsStore(path)
    store.create("t", {}, [(n, "command", "x") for n in names], specs, {})
    for spec, (players, totals) in zip(specs, games, strict=True):
        n = len(players)
        ranks = [1 + sum(t > x for t in totals) for x in totals]
        record = GameRecord(
            spec.id, Rules(players=n).to_dict(), list(players), spec.seed, 0, 0.0,
            finished_at=1.0, status="finished", totals=totals, ranks=ranks,
            faults=[{} for _ in range(n)], fault_details=[{} for _ in range(n)],
        )  # fmt: skip
        store.save_game(spec, record)
    return store


GAMES = [
    (("a", "b", "c"), [30, 10, 10]),
    (("b", "c", "d"), [0, 20, -10]),
    (("d", "a", "c"), [50, 50, 40]),
    (("c", "a", "b"), [10, -20, 30]),
]


def test_the_live_elo_is_the_elo_of_the_stored_games_then_the_new_ones(tmp_path: Path) -> None:
    with _store(tmp_path / "s.sqlite", GAMES[:2]) as store:
        progress = Progress(total=4)
        progress.load(store)
    for players, totals in GAMES[2:]:  # as the runner adds each game that ends
        progress.elo.add(players, totals)
    whole = elo(GameResult(p, tuple(t)) for p, t in GAMES)
    assert progress.elo.ratings == {r.name: r.rating for r in whole.players}
    assert progress.leader == whole.players[0].name
    assert "leader " + whole.players[0].name in progress.line()
    assert EloState().leader() == "" and "leader -" in Progress(total=1).line()


@pytest.fixture
def bots_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))


@pytest.mark.usefixtures("bots_importable")
def test_a_running_tournament_reads_its_store_once_for_the_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = []
    finished_games = ResultsStore.finished_games

    def counted(self: ResultsStore):  # type: ignore[no-untyped-def]
        reads.append(1)
        return finished_games(self)

    monkeypatch.setattr(ResultsStore, "finished_games", counted)
    bot = [sys.executable, "-m", "wizard_arena.cli", "bot"]
    entrants = [
        {
            "name": name,
            "command": [*bot, target, "--server", "{server}", "--token", "{token}", "--quiet"],
        }
        for name, target in (
            ("heuristic", "wizard_bots.heuristic:HeuristicBot"),
            ("random", "wizard_bots.random_bot:RandomBot"),
            ("det", "tests.bots.det_bot:DeterministicBot"),
        )
    ]
    config = TournamentConfig.from_dict(
        {
            "tournament": {
                "players": 3,
                "round_sizes": [1, 2],
                "deal_sets": 2,
                "database": str(tmp_path / "t.sqlite"),
                "move_time": scaled(5.0),
            },
            "entrant": entrants,
        }
    )
    out = io.StringIO()
    store = trio.run(lambda: run_tournament(config, progress_stream=out, progress_interval=0.01))
    store.close()
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("games 12/12") and "leader -" not in lines[-1], lines
    assert len(lines) > 3  # the line was shown several times ...
    assert reads == [1]  # ... from one read of the store
