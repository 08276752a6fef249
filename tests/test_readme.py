"""The README's promises: two set-up commands, a first bot that really plays."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from wizard_arena import cli
from wizard_arena.local import play_local
from wizard_bots.heuristic import HeuristicBot

from .cli_here import cli_here
from .conftest import ROOT
from .support import first_install_extra

README = (ROOT / "README.md").read_text()


def test_readme_opens_with_two_setup_commands() -> None:
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block is not None
    lines = block.group(1).strip().splitlines()
    assert len(lines) == 2
    first, second = lines
    # the first installs what the demo needs (tests/test_packaging.py runs the
    # demo without the other extras), the second what the tests need
    assert first_install_extra() == "server" and first.endswith("wizard-arena demo")
    assert "pip install -e '.[dev]'" in second and "python -m pytest" in second


def test_ci_runs_the_development_tools_after_the_second_command() -> None:
    """.ci/run runs the README's commands as written; ruff, mypy and the
    generated-code check need the development tools, which only the second
    command installs (the first installs what the demo needs)."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if 'bash -c "${cmds[0]}"' in line)
    second = next(i for i, line in enumerate(lines) if 'bash -c "${cmds[1]}"' in line)
    assert first < second
    for tool in ("ruff check", "mypy", "scripts/gen_proto.py --check"):
        uses = [
            i
            for i, line in enumerate(lines)
            if tool in line and not line.lstrip().startswith(("#", "echo"))
        ]
        assert uses and min(uses) > second, (tool, uses, second)


def test_readme_first_bot_plays_without_faults() -> None:
    code = re.search(r"```python\n(.*?)```", README, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "README.md", "exec"), namespace)
    bot_class = namespace["MyBot"]
    result = play_local([bot_class(), HeuristicBot(), HeuristicBot(), HeuristicBot()], seed=3)  # type: ignore[operator]
    assert result.faults == []
    assert len(result.results) == 15


def test_every_documented_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    """In-process, one interpreter for all verbs (a subprocess each cost about
    0.6 s of CPU); the console script itself runs in .ci/run (the README's
    ``wizard-arena demo``) and in subprocesses in tests/test_packaging.py."""
    names = re.findall(r"^\| `wizard-arena (\w+)", README, re.M)
    assert len(names) >= 10, names
    for name in names:
        with pytest.raises(SystemExit) as done:
            cli.main([name, "--help"])
        out, err = capsys.readouterr()
        assert done.value.code == 0, (name, err)
        assert out.startswith(f"usage: wizard-arena {name}"), (name, out[:200])


def test_play_takes_the_rule_variants(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "wizard_arena.cli",
            "play",
            "--players",
            "3",
            "--tricksy",
            "--blind-first-round",
            "--round-sizes",
            "1,2,3",
            "--seed",
            "2",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "blind_first_round, tricksy, round_sizes 1,2,3" in ok.stdout
    bad = cli_here(["play", "--maximus", "--round-sizes", "2"], capsys, monkeypatch)
    assert bad.returncode == 2 and "cannot be combined" in bad.stderr
