"""The Node.js example bot (example_bots/node), built from arena.proto alone,
plays full games against Python bots on the real referee server."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.rules import Rules
from wizard_bots.random_bot import RandomBot
from wizard_referee.tournament.runner import TournamentConfig, run_tournament

from .conftest import ROOT, needs
from .node_packages import NODE, NPM, node_bot_copy
from .support import ServerThread, arena_config, ok, run_sdk_bots, scaled
from .tournaments import entrant, stored_moves

pytestmark = needs(
    "node",
    "node and npm are needed for the Node.js example bot (Node.js 18+)"
    if NODE is None or NPM is None
    else None,
)


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs the Node bot: a copy of it with its packages
    (``npm ci`` outside the source tree: tests/node_packages.py)."""
    assert NODE is not None
    return [NODE, str(node_bot_copy(tmp_path_factory.mktemp("node")) / "bot.js")]


@pytest.mark.e2e
def test_node_bot_plays_full_games(node_bot: list[str]) -> None:
    with ServerThread(arena_config()) as server:
        box: list[Any] = []
        pythons = threading.Thread(
            target=lambda: box.append(
                run_sdk_bots([RandomBot(seed=1), RandomBot(seed=2)], server.address, games=2)
            ),
            daemon=True,
        )
        t0 = time.monotonic()
        node = subprocess.Popen(
            [*node_bot, "--server", server.address, "--name", "node-js", "--games", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        pythons.start()
        try:
            _, err = node.communicate(timeout=scaled(60))
        finally:
            if node.poll() is None:
                node.kill()
        took = time.monotonic() - t0
        pythons.join(30)
        ok(box[0])
        assert node.returncode == 0, err
        assert "done: 2 game(s)" in err
        assert "protocol 1.2" in err and "EVENT_STREAM_LEAN" in err  # the lean stream granted
        assert "clock probes" in err  # and clock probes (answered: no fault below)
        records = server.wait_records(2)[:2]
        for rec in records:
            assert rec.status == "finished"
            seat = rec.names.index("node-js")
            assert rec.faults[seat] == {}, rec.faults  # every answer legal and in time
            assert all(f == {} for f in rec.faults)
        print(f"node bot: 2 games of 3 players in {took:.2f} s (including node start-up)")


def _node_and_pythons_play(
    node_bot: list[str], address: str, *options: str, timeout: float
) -> None:
    """One game at ``address``: the Node.js bot (with ``options``) and two
    Python random bots; both sides end without an error."""
    box: list[Any] = []
    pythons = threading.Thread(
        target=lambda: box.append(
            run_sdk_bots([RandomBot(seed=1), RandomBot(seed=2)], address, games=1)
        ),
        daemon=True,
    )
    node = subprocess.Popen(
        [*node_bot, "--server", address, "--name", "node-js", "--games", "1", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pythons.start()
    try:
        _, err = node.communicate(timeout=timeout)
    finally:
        if node.poll() is None:
            node.kill()
    pythons.join(30)
    ok(box[0])
    assert node.returncode == 0, err


@pytest.mark.e2e
def test_node_and_python_bots_play_over_a_unix_socket(node_bot: list[str], tmp_path: Path) -> None:
    """A confined entrant reaches the referee over a Unix socket only
    (docs/untrusted-bots.md): ``--server unix:PATH`` works for the Node.js
    bot and the Python SDK alike."""
    socket_path = tmp_path / "referee.sock"
    with ServerThread(arena_config(unix_socket=str(socket_path))) as server:
        address = f"unix:{socket_path}"
        assert server.arena is not None and server.arena.unix_address == address
        assert socket_path.stat().st_mode & 0o777 == 0o666  # any uid may connect
        _node_and_pythons_play(node_bot, address, timeout=scaled(60))
        (rec,) = server.wait_records(1)[:1]
        assert rec.status == "finished" and all(f == {} for f in rec.faults)


@pytest.mark.e2e
def test_node_bot_plays_the_rule_forms(node_bot: list[str]) -> None:
    """Listing them with --rule-options, the Node bot plays suited Wizards (a
    card sent back with its wizardSuit), bids revealed after the tricks and a
    drawn first dealer: every answer legal and in time."""
    rules = Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
        hand_sizes=(3, 12, 20),
    )
    with ServerThread(arena_config(rules=rules, move_time=scaled(5.0), seed=11)) as server:
        options = ["--rule-options", ",".join(rules.options)]
        _node_and_pythons_play(node_bot, server.address, *options, timeout=scaled(90))
        (rec,) = server.wait_records(1)[:1]
    assert rec.status == "finished" and Rules.from_dict(rec.rules) == rules
    seat = rec.names.index("node-js")
    assert rec.faults[seat] == {}, rec.fault_details  # every answer legal and in time
    played = [m.action for rr in rec.rounds for m in rr.moves if m.seat == seat]
    assert any(a in {"play WS", "play WH", "play WD", "play WC"} for a in played), played
    assert rec.draw and rec.rounds[0].dealer == rec.first_dealer


@pytest.mark.e2e
def test_node_bot_reports_refusal(node_bot: list[str]) -> None:
    with ServerThread(arena_config(tokens=frozenset({"t0ken"}))) as server:
        proc = subprocess.run(
            [*node_bot, "--server", server.address, "--name", "nobody", "--token", "wrong"],
            capture_output=True,
            text=True,
            timeout=scaled(30),
        )
    assert proc.returncode == 1
    assert "UNAUTHENTICATED" in proc.stderr and "invalid access token" in proc.stderr


@pytest.mark.e2e
def test_node_bot_refused_at_variant_tables(node_bot: list[str]) -> None:
    """The Node bot sends no Hello.rule_options: a server playing rule variants
    refuses it with a clear message, rather than feeding it states it cannot read."""
    rules = Rules(players=3, hidden_bids=True, blind_first_round=True)
    with ServerThread(arena_config(rules=rules)) as server:
        proc = subprocess.run(
            [*node_bot, "--server", server.address, "--name", "node-js", "--games", "1"],
            capture_output=True,
            text=True,
            timeout=scaled(30),
        )
        assert server.records() == []
    assert proc.returncode == 1, proc.stderr
    assert "FAILED_PRECONDITION" in proc.stderr
    assert "rule option(s) hidden_bids, blind_first_round" in proc.stderr
    assert "Hello.rule_options (none)" in proc.stderr


@pytest.mark.e2e
def test_node_bot_bad_arguments(node_bot: list[str]) -> None:
    proc = subprocess.run(
        [*node_bot, "--games", "zero"], capture_output=True, text=True, timeout=scaled(30)
    )
    assert proc.returncode == 2 and "--games must be a positive integer" in proc.stderr


@pytest.mark.slow(seconds=8)
@pytest.mark.e2e
def test_node_bot_draws_from_its_per_game_seed(
    node_bot: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same tournament twice: the Node bot (a random legal card, drawn from
    GameStarted.botSeed) plays every game the same way; another secret, other cards."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    entrants: list[dict[str, Any]] = [
        {
            "name": "node",
            "command": [
                *[*node_bot, "--server", "{server}", "--token", "{token}"],
                *["--rule-options", "round_sizes"],
            ],
        },
        entrant("random", "wizard_bots.random_bot:RandomBot"),
        entrant("heuristic", "wizard_bots.heuristic:HeuristicBot"),
    ]

    def run(name: str, secret: str) -> dict[str, list[tuple[int, str, str | None]]]:
        db = tmp_path / f"{name}.sqlite"
        # cyclic: 3 games per run (the balanced seating would play 6), of
        # eight rounds (1 to 8 cards; the full twenty take three times as long)
        section = {
            "players": 3,
            "move_time": scaled(5.0),
            "seed": 4,
            "parallel": 2,
            "seating": "cyclic",
        }
        section["round_sizes"] = list(range(1, 9))
        config = TournamentConfig.from_dict(
            {
                "tournament": {**section, "database": str(db), "bot_seed_secret": secret},
                "entrant": entrants,
            }
        )
        trio.run(run_tournament, config).close()
        return stored_moves(db)

    first = run("a", "s")
    assert len(first) == 3
    assert all(fault is None for moves in first.values() for _, _, fault in moves)
    assert run("b", "s") == first
    assert run("c", "another") != first
