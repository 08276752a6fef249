"""Reproducible games: every bot gets a per-game seed (GameStarted.bot_seed)
from a secret, the game id and the seat, never from the deal's seed; the
example bots draw from it, so the same tournament gives the same results.

The tournament tests run the real runner (the bots are ``wizard-arena bot``
subprocesses over gRPC on loopback); the seed tests use the real referee.
"""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.client import run_bot, serve_bot
from wizard_arena.local import play_local
from wizard_arena.protocol.seeds import bot_seed, local_secret
from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.montecarlo import MonteCarloBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.tournament.runner import TournamentConfig, TournamentError, run_tournament
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .conftest import ROOT
from .support import ServerThread, arena_config, scaled
from .tournaments import entrant, seat_results, stored_moves

# -- the derivation --------------------------------------------------------------------


def test_bot_seed_is_per_seat_and_game_and_keyed_by_the_secret() -> None:
    games = [f"t{t}-d0-r{r}" for t in range(3) for r in range(4)]
    seeds = {(g, s): bot_seed("secret", g, s) for g in games for s in range(6)}
    assert len(set(seeds.values())) == len(seeds)  # a different seed for every game and seat
    assert all(0 < v < 2**64 for v in seeds.values())
    assert bot_seed("secret", "g", 2) == bot_seed(b"secret", "g", 2)  # text is its UTF-8
    other = {k: bot_seed("another secret", *k) for k in seeds}
    assert all(other[k] != seeds[k] for k in seeds)  # changing the secret changes every seed
    # the game id and the seat are not merely concatenated
    assert bot_seed("k", "g1", 1) != bot_seed("k", "g", 11)


def test_local_play_derives_the_seeds_from_its_seed() -> None:
    class Seeds(RandomBot):
        def on_game_start(self, info: GameInfo) -> None:
            super().on_game_start(info)
            self.seed_seen = info.seed

    def seeds(**kw: Any) -> list[int | None]:
        bots = [Seeds() for _ in range(3)]
        play_local(bots, Rules(players=3, hand_sizes=(1,)), game_id="g", **kw)
        return [b.seed_seen for b in bots]

    first = seeds(seed=1)
    assert first == seeds(seed=1)
    assert first == [bot_seed(local_secret(1), "g", s) for s in range(3)]
    assert len(set(first)) == 3
    assert seeds(seed=2) != first
    # with a secret of its own, the deal's seed no longer enters the bots' seeds
    assert seeds(seed=1, bot_seed_secret="k") == seeds(seed=2, bot_seed_secret="k")
    assert seeds(seed=1, bot_seed_secret="k") == [bot_seed("k", "g", s) for s in range(3)]
    assert seeds(seed=None) != seeds(seed=None)  # no seed: random secrets


def test_unseeded_example_bots_replay_a_seeded_local_game() -> None:
    rules = Rules(players=3, hand_sizes=(3, 5, 7))

    def game(seed: int) -> tuple[tuple[int, ...], list[Any]]:
        bots = [RandomBot(), MonteCarloBot(samples=2), HeuristicBot()]
        result = play_local(bots, rules, seed=seed)
        return result.totals, result.events

    assert game(5) == game(5)
    assert game(5)[1] != game(6)[1]


# -- through the referee ------------------------------------------------------------------


class SeedRecorder(RandomBot):
    """Records, per game, its seat, the seed the referee gave and its first hand."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, int, int | None]] = []
        self.hands: list[tuple[str, ...]] = []

    def on_game_start(self, info: GameInfo) -> None:
        super().on_game_start(info)
        self.seen.append((info.game_id, info.seat, info.seed))

    def bid(self, view: Any) -> int:
        if view.round == 1:
            self.hands.append(tuple(str(c) for c in view.hand))
        return super().bid(view)


@pytest.mark.e2e
def test_the_referee_gives_each_seat_a_seed_from_its_secret_not_from_the_deal() -> None:
    """Same secret and game id, another deal: the same seeds. Another game id:
    others. Both SDK forms (blocking and trio) receive them."""
    rules = Rules(players=3, hand_sizes=(2,))
    config = arena_config(rules=rules, matchmaking=False, bot_seed_secret="k")
    plays = [("g", "deal-A"), ("g", "deal-B"), ("h", "deal-A")]
    bots = [SeedRecorder() for _ in range(3)]
    with ServerThread(config) as server:
        arena = server.arena
        assert arena is not None and arena.bot_seed_secret == "k"
        done: list[Any] = []
        threads = [
            threading.Thread(
                target=lambda b=b, i=i: done.append(
                    run_bot(b, server.address, name=f"b{i}", games=len(plays))
                ),
                daemon=True,
            )
            for i, b in enumerate(bots[:2])
        ]
        threads.append(
            threading.Thread(
                target=lambda: done.append(
                    trio.run(partial(serve_bot, bots[2], server.address, "b2", games=len(plays)))
                ),
                daemon=True,
            )
        )
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while len(arena.sessions) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        sessions = sorted(arena.sessions.values(), key=lambda s: s.name)
        assert [s.name for s in sessions] == ["b0", "b1", "b2"]
        for game_id, deal in plays:
            rec = trio.from_thread.run(
                partial(arena.play_game, sessions, game_id=game_id, seed=deal),
                trio_token=server._token,
            )
            assert rec.status == "finished" and all(f == {} for f in rec.faults)
        for t in threads:
            t.join(20)
    assert len(done) == 3
    for b in bots:
        assert [(g, seat) for g, seat, _ in b.seen] == [(g, b.seen[0][1]) for g, _ in plays]
        (_, seat, s1), (_, _, s2), (_, _, s3) = b.seen
        assert s1 == bot_seed("k", "g", seat)  # from the secret, the game id and the seat
        assert s1 == s2  # the deal changed (below), the bot's seed did not
        assert s3 == bot_seed("k", "h", seat) and s3 != s1
    assert len({b.seen[0][2] for b in bots}) == 3  # one seed per seat
    assert any(b.hands[0] != b.hands[1] for b in bots)  # deal-A and deal-B differ


# -- the same tournament twice ---------------------------------------------------------------


def _tournament(db: Path, secret: str | None, **kw: Any) -> TournamentConfig:
    section: dict[str, Any] = {
        "name": "repro",
        "players": 3,
        "deal_sets": 1,
        "move_time": scaled(5.0),  # generous: no decision may time out on a busy machine
        "seed": 3,
        "parallel": 2,  # two copies of each bot: which one plays a game must not matter
        "round_sizes": [1, 3, 5, 7],
        "database": str(db),
        **kw,
    }
    if secret is not None:
        section["bot_seed_secret"] = secret
    entrants = [
        entrant("random", "wizard_bots.random_bot:RandomBot"),
        entrant("montecarlo", "wizard_bots.montecarlo:MonteCarloBot", "--arg", "samples=2"),
        entrant("heuristic", "wizard_bots.heuristic:HeuristicBot"),
    ]
    return TournamentConfig.from_dict({"tournament": section, "entrant": entrants})


@pytest.fixture
def bots_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))


@pytest.mark.slow(seconds=10)
@pytest.mark.e2e
@pytest.mark.usefixtures("bots_importable")
def test_the_same_tournament_twice_gives_identical_results(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        db = tmp_path / f"{name}.sqlite"
        trio.run(run_tournament, _tournament(db, "not a secret")).close()
        runs.append((seat_results(db), stored_moves(db)))
    (results_a, moves_a), (results_b, moves_b) = runs
    assert len(results_a) == 6 * 3 and len(moves_a) == 6  # one deal, 6 seatings of 3 seats
    for moves in moves_a.values():  # every decision the bot's own: no timeout, no fault
        assert moves and all(fault is None for _, _, fault in moves)
    assert results_b == results_a
    assert moves_b == moves_a

    # the seeds are what makes it so: another secret, other random draws
    other = tmp_path / "c.sqlite"
    trio.run(run_tournament, _tournament(other, "another secret")).close()
    assert stored_moves(other) != moves_a

    # the secret is kept with the tournament: --resume uses it, and refuses another
    with ResultsStore(tmp_path / "a.sqlite") as store:
        stored = store.tournament_config()
    assert stored is not None and stored["bot_seed_secret"] == "not a secret"
    assert "bot_seed_secret" not in stored["config"]
    with pytest.raises(TournamentError, match="bot_seed_secret differs"):
        trio.run(
            partial(run_tournament, _tournament(db_a := tmp_path / "a.sqlite", "x"), resume=True)
        )
    trio.run(partial(run_tournament, _tournament(db_a, None), resume=True)).close()


def test_a_tournament_without_a_secret_draws_one_and_keeps_it(tmp_path: Path) -> None:
    """No bot_seed_secret: a random one (256 bits) is stored when the tournament
    is created, and a tournament stored without one gets one on --resume."""
    from wizard_referee.tournament.plan import bot_seed_secret

    config = _tournament(tmp_path / "t.sqlite", None)
    with ResultsStore(config.database) as store:
        store.create(config.name, {"plan": config.plan_key()}, [], [], config.rules.to_dict())
        drawn = bot_seed_secret(config, store)
        assert len(drawn) == 64 and int(drawn, 16) >= 0
        assert bot_seed_secret(config, store) == drawn  # kept
        assert store.tournament_config() == {"plan": config.plan_key(), "bot_seed_secret": drawn}
    with ResultsStore(tmp_path / "u.sqlite") as other:
        other.create(config.name, {"plan": config.plan_key()}, [], [], config.rules.to_dict())
        assert bot_seed_secret(config, other) != drawn


# -- the serve command ----------------------------------------------------------------------


def test_serve_takes_a_secret_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from wizard_referee.referee.cmd_serve import read_bot_seed_secret

    secret = tmp_path / "secret"
    secret.write_text("  from the file  \nsecond line\n")
    args = _Args(bot_seed_secret=None, bot_seed_secret_file=secret)
    assert read_bot_seed_secret(args) == "from the file"
    assert read_bot_seed_secret(_Args(bot_seed_secret="x", bot_seed_secret_file=None)) == "x"
    assert read_bot_seed_secret(_Args(bot_seed_secret=None, bot_seed_secret_file=None)) is None
    empty = tmp_path / "empty"
    empty.write_text("\n")
    serve = ["serve", "--port", "0", "--bot-seed-secret-file", str(empty)]
    proc = cli_here(serve, capsys, monkeypatch)  # refused before serving: in this process
    assert proc.returncode == 2
    assert "error: bot seed secret:" in proc.stderr and "first line is empty" in proc.stderr


class _Args:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)
