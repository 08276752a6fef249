"""The guides' tables and snippets agree with the code (docs/configuration.md,
docs/tournament.md, ...)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import shlex
import tomllib
from typing import Any

import pytest

from wizard_arena.cli import COMMANDS, verb_parser
from wizard_referee.tournament.config import EntrantConfig, TournamentConfig
from wizard_referee.tournament.config_keys import ENTRANT_KEYS, TOURNAMENT_KEYS
from wizard_referee.tournament.seating import DEFAULT_SEATING

from .conftest import ROOT

TOURNAMENT = (ROOT / "docs" / "tournament.md").read_text(encoding="utf-8")
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def _value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def test_every_tournament_key_is_documented_with_its_default() -> None:
    """The ``[tournament]`` table of docs/configuration.md: one row per key of
    TOURNAMENT_KEYS (``workdir`` was missing), with the default it has."""
    table = CONFIGURATION.split("| key | default | meaning |", 1)[1].split("\n\n", 1)[0]
    documented: dict[str, str] = {}
    for keys, default in re.findall(r"^\| (`\w+`(?:, `\w+`)*) \| (.+?) \| ", table, re.M):
        names = re.findall(r"`(\w+)`", keys)
        values = [v.strip().strip("`") for v in default.split(",")]  # `host`, `port`
        if len(values) != len(names):
            values = [default.strip("`")] * len(names)
        documented.update(zip(names, values, strict=True))
    assert sorted(documented) == sorted(TOURNAMENT_KEYS)
    effective = {"seating": DEFAULT_SEATING, "workdir": "."}  # None / "" resolved later
    for field in dataclasses.fields(TournamentConfig):
        if field.name not in documented:
            continue
        text, actual = documented[field.name], effective.get(field.name, field.default)
        if text.startswith("("):  # "(drawn)", "(all rounds)": nothing given
            assert actual is None, (field.name, actual)
        else:
            assert _value(text) == actual, (field.name, text, actual)


def test_every_entrant_key_is_documented_with_its_default() -> None:
    """The ``[[entrant]]`` table of docs/configuration.md: one row per key of
    ENTRANT_KEYS, a confined entrant's limits with the defaults they have,
    and the same defaults in the how-to for untrusted bots."""
    table = CONFIGURATION.split("The keys of an `[[entrant]]` table:", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| (`\w+`(?:, `\w+`)*) \| (.*?) \| ", table, re.M)
    documented = {name: default for keys, default in rows for name in re.findall(r"`(\w+)`", keys)}
    assert sorted(documented) == sorted(ENTRANT_KEYS)
    howto = (ROOT / "docs" / "untrusted-bots.md").read_text(encoding="utf-8")
    for key in ("memory_limit", "max_processes", "cpu_limit"):
        default = getattr(EntrantConfig, key)
        assert _value(documented[key]) == default, (key, documented[key], default)
        assert f"| `{key}` | {documented[key]}" in howto, key


def test_the_sdk_reference_has_whole_attribute_comments() -> None:
    """An attribute's ``#:`` comment of several lines is rendered whole (only
    its last line was: Bot.event_stream's read "...'s members) chooses.")."""
    reference = (ROOT / "docs" / "sdk-reference.md").read_text(encoding="utf-8")
    entry = reference.split("- attribute `event_stream` = `None`\n\n", 1)[1].split("\n\n", 1)[0]
    assert entry.startswith("  The messages the bot receives over the network")
    assert entry.endswith("`wizard_arena.protocol.codes.EventStream`'s members) chooses.")


@pytest.mark.parametrize("name", ["tutorial.md", "course.md"])
def test_a_guide_that_runs_server_verbs_installs_the_server_extra(name: str) -> None:
    """The tutorial installed the SDK alone (``pip install -e .``), then ran
    ``wizard-arena serve``, which asks for the ``server`` extra; the course
    installed ``rl`` alone, then ran ``compare``, ``check`` and ``serve``."""
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    verbs = set(re.findall(r"^\s*(?:\$ )?wizard-arena (\w+)", text, re.M))
    server = {v for v in verbs if COMMANDS[v][0].startswith("wizard_referee.")}
    assert server, verbs  # the check has something to check
    extras = {
        extra.strip()
        for group in re.findall(r"pip install (?:-e )?'[^'\s]*\[([^\]]*)\]'", text)
        for extra in group.split(",")
    }
    assert extras & {"server", "dev"}, (sorted(server), extras)


def test_the_ratings_example_is_what_the_command_prints(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/tournament.md's ``wizard-arena ratings cycle.jsonl`` table (the
    cycle of "Bradley-Terry" in docs/statistics.md: alice beats bob 75-25, bob beats carol 75-25,
    carol beats alice 90-10) with its neighbours' columns, as printed."""
    import json

    from wizard_arena.cli import main

    lines = []
    for a, b, wins in (("alice", "bob", 75), ("bob", "carol", 75), ("carol", "alice", 90)):
        lines += [{"players": [a, b], "scores": [1, 0]}] * wins
        lines += [{"players": [a, b], "scores": [0, 1]}] * (100 - wins)
    path = tmp_path / "cycle.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["ratings", str(path)]) == 0
    printed = capsys.readouterr().out
    block = TOURNAMENT.split("$ wizard-arena ratings cycle.jsonl", 1)[1].split("```", 1)[0]
    assert printed == block.split("\n", 1)[1]


def _doc_commands() -> list[tuple[str, list[str]]]:
    """Every ``wizard-arena`` command of the docs' shell blocks: (page, words
    after ``wizard-arena``, up to a pipe, a redirection or a ``&``)."""
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```(?:sh|bash|console)\n(.*?)^```", text, re.M | re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip().removeprefix("$ ")
                if not line.startswith("wizard-arena "):
                    continue
                words: list[str] = []
                for w in shlex.split(line, comments=True)[1:]:
                    if w in ("&", "|", "&&", "||", ";") or w.startswith((">", "2>", "<")):
                        break
                    words.append(w)
                out.append((page.name, words))
    return out


DOC_COMMANDS = _doc_commands()


@pytest.mark.parametrize(
    ("page", "words"), DOC_COMMANDS, ids=[f"{p}:{' '.join(w)[:60]}" for p, w in DOC_COMMANDS]
)
def test_every_command_in_the_docs_parses(page: str, words: list[str]) -> None:
    """A command a guide shows runs as written: its verb exists and the
    verb's own parser takes its options (a renamed or removed option fails
    here, not on a reader's machine)."""
    assert words and (words[0] in COMMANDS or words[0] in ("--version", "--help")), words
    if words[0] not in COMMANDS:
        return
    parser, _ = verb_parser(words[0])
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(words[1:])
    except SystemExit as e:
        why = (err.getvalue().strip().splitlines() or [""])[-1]
        assert not e.code, f"{page}: wizard-arena {' '.join(words)}: {why}"


def test_the_docs_show_many_commands() -> None:
    """The extraction above finds the guides' commands (it would pass on none)."""
    assert len(DOC_COMMANDS) >= 30
    assert {"serve", "bot", "tournament", "compare", "ladder"} <= {w[0] for _, w in DOC_COMMANDS}


def test_the_docs_install_from_a_clone_or_a_wheel_of_this_version() -> None:
    """The package is not on PyPI: no page tells to ``pip install
    wizard-arena`` from it (``wizard-arena[EXTRA]`` in prose names an extra,
    README.md says how), and the wheel a page names is the one ``pip wheel``
    builds of this version."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(
            r"pip install wizard-arena\b|^\s*pip install '?wizard-arena", text, re.M
        ), page.name
        for found in re.findall(r"wizard_arena-([^-\s]+)-py3-none-any\.whl", text):
            assert found == version, (page.name, found)
            named += 1
    assert named >= 3


def test_the_tutorial_enters_the_bot_in_a_tournament() -> None:
    """docs/index.md promises it: the tutorial's TOML is a valid tournament
    that enters the tutorial's bot file (the README and the demo's next
    steps name the same file)."""
    from wizard_referee.tournament.cmd_demo import closing_lines

    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert "enter it in a tournament" in (ROOT / "docs" / "index.md").read_text()
    section = text[text.index("## 5. Enter it in a tournament") :]
    block = section[section.index("```toml\n") + 8 :]
    config = TournamentConfig.from_dict(tomllib.loads(block[: block.index("```")]))
    mine = next(e for e in config.entrants if e.name == "my_bot")
    assert "my_bot.py:MyBot" in " ".join(mine.command)
    assert config.deal_sets >= 10
    assert "mybot" not in text.replace("my_bot", "")
    assert "my_bot.py:MyBot" in (ROOT / "README.md").read_text()
    assert any("my_bot.py:MyBot" in line for line in closing_lines(None))


def test_the_docs_stop_their_referee_whatever_the_bot_exits_with() -> None:
    """``wait %2 && kill %1`` left the referee running when the bot exited
    with an error; the recipes stop it with ``wait %2; kill %1``."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    recipes = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"wait %\d+ *&& *kill", text), page.name
        recipes += len(re.findall(r"wait %\d+; kill %\d+", text))
    assert recipes >= 2
