"""docs/cli.md is made from the verbs' parsers: current, and every option explained."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from wizard_arena.cli import COMMANDS, verb_parser

from .conftest import ROOT


def test_the_cli_reference_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                out += _options(child)
        elif not isinstance(action, argparse._HelpAction):
            out.append((parser.prog, action))
    return out


@pytest.mark.parametrize("verb", list(COMMANDS))
def test_every_option_of_every_verb_is_explained(verb: str) -> None:
    parser, _ = verb_parser(verb)
    bare = [
        f"{prog} {'/'.join(a.option_strings) or a.dest}"
        for prog, a in _options(parser)
        if not a.help and a.help != argparse.SUPPRESS
    ]
    assert not bare, f"options without help: {bare}"
