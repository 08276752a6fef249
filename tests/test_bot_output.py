"""What ``wizard-arena bot`` prints and how it exits: a bot's error in full
once, then counted (``the same error again (xN)``); status 4 when the bot hit
errors, and ``--report`` has the same as data; ``--connect-timeout`` for a
server that cannot be reached."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from wizard_arena.client.errorlog import ErrorLog
from wizard_arena.client.results import EXIT_BOT_ERRORS, RecordKind, read_report
from wizard_arena.rules import Rules
from wizard_bots.random_bot import RandomBot

from .cli_here import cli_here
from .conftest import ROOT
from .support import ServerThread, arena_config, ok, run_sdk_bots

CRASHING_BOT = """
from wizard_arena.bot import Bot


class Crashing(Bot):
    def bid(self, view):
        return view.legal_bids[0]

    def play(self, view):
        return self.helper(view)

    def helper(self, view):
        raise RuntimeError(f"no idea in round {view.round}")

    def on_trick_end(self, view, trick):
        raise KeyError("hook")
"""


def _bot_cli(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "bot", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


@pytest.mark.e2e
def test_a_bot_failing_at_every_decision_shows_one_traceback_and_exits_4(tmp_path: Path) -> None:
    (tmp_path / "crashing.py").write_text(textwrap.dedent(CRASHING_BOT))
    rules = Rules(players=3, hand_sizes=(3, 5, 7))
    with ServerThread(arena_config(rules=rules, seed=2)) as server:
        box: list[Any] = []
        others = threading.Thread(
            target=lambda: box.append(run_sdk_bots([RandomBot(1), RandomBot(2)], server.address)),
            daemon=True,
        )
        others.start()
        proc = _bot_cli(
            "crashing.py:Crashing", "--server", server.address, "--name", "crash", "--games", "1",
            "--report", "report.jsonl",
            cwd=tmp_path,
        )  # fmt: skip
        others.join(30)
        ok(box[0])
        (rec,) = server.wait_records(1)[:1]
    err = proc.stderr
    assert proc.returncode == EXIT_BOT_ERRORS, err
    plays, tricks = sum(rules.round_sizes), sum(rules.round_sizes)
    # its bids and plays, and a trump choice in a round it dealt a Wizard as the
    # turned card (the seating and the deal decide whether there is one)
    seat = rec.names.index("crash")
    decisions = sum(m.seat == seat for r in rec.rounds for m in r.moves)
    assert plays + 3 <= decisions <= plays + 3 + len(rules.round_sizes)
    assert f"1 game played, {decisions} decisions, {plays} bot errors" in err
    assert f"{tricks} hook errors" in err
    # each error in full once: the play's RuntimeError and the hook's KeyError
    assert err.count("Traceback (most recent call last)") == 2
    assert err.count("RuntimeError: no idea in round") == 1
    assert err.count("the bot raised in game") == 1
    game = rec.game_id
    assert (
        f"game {game}: the same error again (x{plays - 1}): RuntimeError at crashing.py:13 "
        "in helper" in err
    )
    assert f"game {game}: the same error again (x{tricks - 1}): KeyError at crashing.py:16" in err
    assert f"the bot hit errors (see the log above); exit status {EXIT_BOT_ERRORS}" in err
    # the SDK's defaults went out in time: the referee recorded nothing against the bot
    assert rec.status == "finished" and all(f == {} for f in rec.faults)
    # --report: the same, as data
    lines = (tmp_path / "report.jsonl").read_text().splitlines()
    records, summary = read_report(lines)
    assert summary is not None and json.loads(lines[-1]) == summary
    assert (summary["games"], summary["decisions"]) == (1, decisions)
    assert (summary["bot_errors"], summary["hook_errors"]) == (plays, tricks)
    kinds = Counter(r.kind for r in records)
    assert kinds == {
        RecordKind.DECISION: decisions,
        RecordKind.BOT_ERROR: plays,
        RecordKind.HOOK_ERROR: tricks,
    }
    error = next(r for r in records if r.kind is RecordKind.BOT_ERROR)
    assert (error.game_id, error.phase, error.code) == (game, "play", "raised")
    assert error.detail == f"RuntimeError: no idea in round {error.round}"
    assert all(r.seconds is not None and r.seconds >= 0 for r in records if r.seconds is not None)
    plays_sent = [r.action for r in records if r.kind is RecordKind.DECISION and r.phase == "play"]
    assert len(plays_sent) == plays and all(a.startswith("play ") for a in plays_sent)


def _raise(n: int) -> None:
    if n == 0:
        raise ValueError("zero")
    raise ValueError(f"n={n}")


def test_the_error_log_counts_repeats_per_game_and_shows_each_error_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="t")
    errors = ErrorLog(logging.getLogger("t"))
    for game in ("g1", "g2"):
        for n in range(4):
            try:
                _raise(n)
            except ValueError as e:
                errors.exception(e, "raised %d", n)
        errors.report("illegal", "a play that is not legal", "chose %s", "5H")
        errors.flush(f"game {game}")
    full = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    # two places raise ValueError in _raise: two errors, each in full once in the whole run
    assert [r.getMessage() for r in full] == ["raised 0", "raised 1"]
    counted = [r.getMessage() for r in caplog.records if "the same error again" in r.getMessage()]
    assert len(counted) == 1 + 3  # game 1: the second place x2; game 2: every error again
    assert counted[0].startswith("game g1: the same error again (x2): ValueError at ")
    assert "in _raise" in counted[0]
    assert any(
        c.startswith("game g2: the same error again (x1): a play that is not") for c in counted
    )
    # every repeat is still logged, at DEBUG (wizard-arena bot -v)
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert debug.count("raised 3") == 2 and debug.count("chose 5H") == 1


def test_connect_timeout_bounds_the_wait_for_an_unreachable_server() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    t0 = time.monotonic()
    proc = _bot_cli(
        "wizard_bots.random_bot:RandomBot", "--server", f"127.0.0.1:{port}",
        "--connect-timeout", "1", "-q",
    )  # fmt: skip
    took = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    assert "cannot reach the server" in proc.stderr and "Traceback" not in proc.stderr
    assert took < 15  # the default would retry for 60 s
    bad = _bot_cli("wizard_bots.random_bot:RandomBot", "--connect-timeout", "-1")
    assert bad.returncode == 2 and "--connect-timeout must be" in bad.stderr


def test_a_token_file_that_cannot_give_a_token_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty.token"
    empty.write_text("\n")
    for file, says in (
        (empty, "no token on its first line"),
        (tmp_path / "absent", "No such file"),
    ):
        ran = cli_here(
            ["bot", "wizard_bots.random_bot:RandomBot", "--token-file", str(file)],
            capsys, monkeypatch,
        )  # fmt: skip
        assert ran.returncode == 2 and "--token-file" in ran.stderr and says in ran.stderr
    both = cli_here(
        ["bot", "wizard_bots.random_bot:RandomBot", "--token", "t", "--token-file", str(empty)],
        capsys, monkeypatch,
    )  # fmt: skip
    assert both.returncode == 2 and "not allowed with" in both.stderr
