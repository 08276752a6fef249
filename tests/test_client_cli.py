"""The ``wizard-arena bot`` command (specs, arguments, a bot file, Ctrl-C) and
the SDK's documentation (the generated reference is current; the tutorial's
code runs)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wizard_bots.random_bot import RandomBot

from .conftest import ROOT
from .support import (
    ServerThread,
    arena_config,
    interruptible_cli,
    ok,
    run_sdk_bots,
    scaled,
    wait_for,
)


@pytest.fixture
def server() -> Iterator[ServerThread]:
    with ServerThread(arena_config()) as s:
        yield s


# -- the bot command ----------------------------------------------------------------------


def _cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "bot", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=kw.pop("cwd", ROOT),
        **kw,
    )


def _cli_here(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """``wizard-arena bot ARGS`` in this process: (exit status, stderr)."""
    from wizard_arena import cli

    monkeypatch.setattr(sys, "path", list(sys.path))  # a bot file's folder is added
    try:
        code = cli.main(["bot", *args])
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.e2e
def test_the_bot_command_stops_when_the_server_shuts_down() -> None:
    """Without --games the bot plays until the server ends: a clean shutdown
    ends its run at once (exit 0, one line), not a minute of reconnecting."""
    server = ServerThread(arena_config()).__enter__()
    try:
        bot = ["wizard_bots.random_bot:RandomBot", "--server", server.address, "--name", "alone"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "wizard_arena.cli", "bot", *bot],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert server.arena is not None
        arena = server.arena
        wait_for(lambda: server.call(lambda: len(arena.sessions)) == 1 or proc.poll() is not None)
    finally:
        server.stop()
    try:
        _, err = proc.communicate(timeout=scaled(30))
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = [line for line in err.splitlines() if " INFO " not in line]
    assert lines == [
        "wizard-arena bot: the server shut down; 0 games played, 0 decisions, 0 bot errors, "
        "0 overruns, 0 rejected, 0 hook errors"
    ], err


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["play", "--players", "2"], "argument --players: invalid choice: 2"),
        (["serve", "--port", "-5"], "argument --port: a port is 0 to 65535"),
        (["bot", "x:Y", "--arg", "depth"], "argument --arg: expected KEY=VALUE"),
        (["tournament"], "the following arguments are required: config"),
        (["ladder", "add"], "the following arguments are required: name"),
        (["compare", "a"], "the following arguments are required: B"),
        (["ratings", "r.jsonl", "--method", "x"], "argument --method: invalid choice"),
    ],
)
def test_an_argument_error_is_one_line(
    args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the verb: the error and where the usage is, not the usage of
    every option first."""
    from wizard_arena import cli

    with pytest.raises(SystemExit) as exit:
        cli.main(args)
    assert exit.value.code == 2
    prog = "wizard-arena " + " ".join(args[:2] if args[0] == "ladder" else args[:1])
    want = f"{prog}: error: {error}"
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(want) and line.endswith(f"('{prog} --help' lists the options)"), line


@pytest.mark.parametrize(
    "verb",
    [
        ["tournament", "t.toml"],
        ["export"],
        ["web"],
        ["replay", "g1"],
        ["compare", "a", "b"],
        ["ladder", "list"],
    ],
)
def test_a_database_of_another_kind_is_refused_in_one_line(
    verb: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``mysql://`` is not taken for a file's path: refused before anything
    starts (nothing made in the working folder), naming the kinds there are
    (and hiding the password)."""
    from wizard_arena import cli

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        cli.main([*verb, "--database", "mysql://user:secret@host/db"])
    assert exit.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "mysql://user:***@host/db: not a kind of database this stores to; give an " in line
    assert "SQLite file's path or a postgresql:// (postgres://) URL" in line
    assert "secret" not in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:Bot", "no module named 'no_such_module_xyz'"),
        ("wizard_bots.random_bot:Nope", "has no class 'Nope'; it defines RandomBot"),
        ("wizard_bots.random_bot", "expected MODULE:CLASS"),
        ("missing/file.py:Bot", "no such file: missing/file.py"),
        ("wizard_arena.rules:Card", "Card is not a bot"),
    ],
)
def test_cli_bad_spec(
    spec: str, message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err = _cli_here([spec, "--server", "127.0.0.1:1"], capsys, monkeypatch)
    assert code == 2, err
    assert message in err and "Traceback" not in err


def test_cli_bad_args_and_broken_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err = _cli_here(
        ["wizard_bots.random_bot:RandomBot", "--arg", "colour=red"], capsys, monkeypatch
    )
    assert code == 2 and "cannot build RandomBot" in err and "Traceback" not in err
    code, err = _cli_here(["wizard_bots.random_bot:RandomBot", "--arg", "2=x"], capsys, monkeypatch)
    assert code == 2 and "expected KEY=VALUE" in err
    nowhere = str(tmp_path / "no" / "such" / "dir" / "report.jsonl")
    code, err = _cli_here(
        ["wizard_bots.random_bot:RandomBot", "--report", nowhere], capsys, monkeypatch
    )
    assert code == 2 and "--report" in err and "Traceback" not in err
    broken = tmp_path / "broken.py"
    broken.write_text("import definitely_not_installed_zz\n")
    code, err = _cli_here([f"{broken}:Bot"], capsys, monkeypatch)
    assert code == 2 and "definitely_not_installed_zz" in err
    assert f"{broken}:1" in err and "Traceback" not in err
    code, err = _cli_here(
        ["wizard_bots.random_bot:RandomBot", "--server", "127.0.0.1:1", "--no-reconnect"],
        capsys,
        monkeypatch,
    )
    assert code == 1 and "cannot reach the server" in err and "Traceback" not in err


@pytest.mark.e2e
def test_cli_plays_a_bot_file(server: ServerThread, tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("FIRST = 0\n")
    (tmp_path / "mybot.py").write_text(
        textwrap.dedent(
            """
            from helper import FIRST
            from wizard_arena.bot import Bot

            class Mine(Bot):
                def __init__(self, bid=0, tag="x"):
                    self.fixed, self.tag = bid, tag

                def bid(self, view):
                    return min(view.legal_bids, key=lambda b: abs(b - self.fixed))

                def play(self, view):
                    return view.legal_cards[FIRST]
            """
        )
    )
    box: list[Any] = []
    t = threading.Thread(
        target=lambda: box.append(run_sdk_bots([RandomBot(1), RandomBot(2)], server.address)),
        daemon=True,
    )
    t.start()
    proc = _cli(
        "mybot.py:Mine", "--server", server.address, "--name", "mine", "--games", "1",
        "--arg", "bid=1", "--arg", "tag=hello", "-q",
        cwd=tmp_path,
    )  # fmt: skip
    t.join(30)
    ok(box[0])
    assert proc.returncode == 0, proc.stderr
    assert "1 game played" in proc.stderr and "0 bot errors" in proc.stderr
    (rec,) = server.wait_records(1)[:1]
    assert "mine" in rec.names and all(f == {} for f in rec.faults)


@pytest.mark.e2e
def test_cli_ctrl_c_exits_130(server: ServerThread) -> None:
    proc = subprocess.Popen(
        interruptible_cli("bot", "wizard_bots.random_bot:RandomBot",
                          "--server", server.address, "--name", "waiting"),
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )  # fmt: skip
    assert server.arena is not None
    deadline = time.monotonic() + 20
    while not server.arena.sessions and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.arena.sessions, "the bot did not connect"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=scaled(20))
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    deadline = time.monotonic() + 5
    while server.arena.sessions and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not server.arena.sessions  # the stream was closed, the lobby is empty


# -- documentation ---------------------------------------------------------------------------


def test_sdk_reference_is_current() -> None:
    script = ROOT / "scripts" / "gen_sdk_reference.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=scaled(60)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _tutorial_block(after: str) -> str:
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    start = text.index("```python\n", text.index(after)) + len("```python\n")
    return text[start : text.index("```", start)]


def test_tutorial_code_runs() -> None:
    from wizard_arena.local import play_local

    namespace: dict[str, Any] = {}
    exec(compile(_tutorial_block("Save this as `my_bot.py`"), "my_bot.py", "exec"), namespace)
    evaluate = _tutorial_block("Save as\n`evaluate.py`")
    compile(evaluate, "evaluate.py", "exec")
    assert "from my_bot import MyBot" in evaluate
    bot_cls = namespace["MyBot"]
    result = play_local([bot_cls(), RandomBot(seed=1), RandomBot(seed=2)], seed=3)
    assert result.faults == []
