"""``wizard-arena play``: one local game between bot classes given as
MODULE:CLASS or path.py:CLASS, the example bots in the other seats."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from wizard_arena import cli


def play(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """``wizard-arena play ARGS`` in this process: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # a bot file's folder is added
    code = cli.main(["play", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def seats(out: str) -> dict[int, str]:
    """Seat -> bot name, from the scoreboard."""
    rows = out.split("rank  seat  bot", 1)[1].strip().splitlines()[1:]
    table = [r.split() for r in rows if not r.startswith("fault")]
    return {int(r[1]): r[2] for r in table}


def test_the_example_bots_fill_the_table_and_a_seed_replays_the_game(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--players", "4", "--seed", "5", "--round-sizes", "2,4,6"]
    code, out, err = play(args, capsys, monkeypatch)
    assert code == 0, err
    assert seats(out) == {0: "heuristic-1", 1: "montecarlo", 2: "random", 3: "heuristic-2"}
    # the same seed: the same game, the random and Monte Carlo bots' draws included
    assert play(args, capsys, monkeypatch)[1] == out


def test_bot_classes_take_the_first_seats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mybot.py").write_text(
        textwrap.dedent(
            """
            from wizard_arena.bot import Bot

            class Mine(Bot):
                name = "mine"

                def bid(self, view):
                    return view.legal_bids[0]

                def play(self, view):
                    return view.legal_cards[0]
            """
        )
    )
    spec = f"{tmp_path / 'mybot.py'}:Mine"
    code, out, err = play(
        [spec, "wizard_bots.random_bot:RandomBot", "--players", "3", "--round-sizes", "3"],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    assert seats(out) == {0: "mine", 1: "random", 2: "heuristic"}
    assert "fault" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["wizard_bots.random_bot:RandomBot"] * 4 + ["--players", "3"], "4 bots for 3 seats"),
        (["no_such_module_q:Bot"], "no module named 'no_such_module_q'"),
        (["wizard_bots.random_bot:Nope"], "has no class 'Nope'"),
        (["tests.bots.ponderer:Ponderer"], "an AsyncBot plays on a server"),
    ],
)
def test_bad_bot_specs_exit_2_with_one_line(
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, _, err = play(args, capsys, monkeypatch)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_bot_that_raises_is_shown_once_per_error_and_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken.py").write_text(
        textwrap.dedent(
            """
            from wizard_arena.bot import Bot

            class Broken(Bot):
                def bid(self, view):
                    raise RuntimeError("no bids today")

                def play(self, view):
                    return view.legal_cards[0]
            """
        )
    )
    args = [f"{tmp_path / 'broken.py'}:Broken", "--players", "3", "--round-sizes", "1,2,3"]
    code, out, err = play(args, capsys, monkeypatch)
    assert code == 4
    faults = [line for line in out.splitlines() if line.startswith("fault:")]
    assert faults == [
        "fault: seat 0 (Broken), round 1: exception: RuntimeError: no bids today "
        "(and 2 more like it)"
    ]
    assert "3 decision(s) were played by the referee for a faulted bot (exit status 4)" in err
