"""Packaging: who installs what, the license and metadata, the .proto in the
package, and types a bot author's own project can check against.

A bot author's plain ``pip install wizard-arena`` brings the SDK; the referee
and its neighbours come with ``[server]``. The tests that need an
environment without an extra simulate it in a child process with a
meta-path blocker (a finder that refuses the extra's modules), since the
test environment has every extra installed.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

from wizard_arena.cli import main
from wizard_arena.extras import EXTRAS, MissingExtraError, require

from .conftest import ROOT
from .support import first_install_extra, scaled

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

#: Prepended to a child's code: the modules of BLOCKED cannot be imported
#: (nor found), as if their distributions were not installed.
BLOCKER = textwrap.dedent(
    """
    import sys

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocker())
    """
)


def run_without(modules: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child Python in which ``modules`` cannot be imported."""
    child = f"BLOCKED = {set(modules)!r}\n{BLOCKER}\n{textwrap.dedent(code)}"
    return subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        cwd=ROOT,
    )


def _name(requirement: str) -> str:
    """The distribution name of a requirement (``numpy>=1.26`` -> ``numpy``)."""
    for i, ch in enumerate(requirement):
        if not (ch.isalnum() or ch in "-_."):
            return requirement[:i].lower()
    return requirement.lower()


SERVER_MODULES = tuple(module for module, _ in EXTRAS["server"])


# -- extras ------------------------------------------------------------------------------


def test_the_extras_table_matches_pyproject() -> None:
    """Each extra of wizard_arena.extras.EXTRAS is an extra of pyproject.toml
    with the same distributions; ``dev`` installs every extra; a bot's own
    needs are the base dependencies and nothing of an extra."""
    optional = PYPROJECT["project"]["optional-dependencies"]
    base = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert base == {"grpcio", "protobuf", "trio"}
    for extra, pairs in EXTRAS.items():
        own = {_name(r) for r in optional[extra] if not r.startswith("wizard-arena[")}
        assert own == {dist for _, dist in pairs}, extra
        assert not base & {dist for _, dist in pairs}
    extras = [name for name in optional if name != "dev"]
    assert sorted(extras) == sorted(EXTRAS)
    for extra in extras:
        assert f"wizard-arena[{extra}]" in optional["dev"], f"dev must install [{extra}]"


def test_require_names_the_missing_extra() -> None:
    require("server", "the referee")  # installed here
    err = MissingExtraError("server", "the referee", ["numpy"])
    assert isinstance(err, ImportError)
    assert str(err) == (
        "the referee needs the [server] extra (missing: numpy): pip install 'wizard-arena[server]'"
    )


@pytest.mark.e2e
def test_a_part_without_its_extra_says_which_in_one_line() -> None:
    proc = run_without(
        ("numpy",),
        """
        try:
            import wizard_referee.ratings
        except ImportError as e:
            print(type(e).__name__, e)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        "MissingExtraError wizard_referee (the referee, tournaments, ratings, compare, "
        "check) needs the [server] extra (missing: numpy): pip install 'wizard-arena[server]'"
    ]
    # the command: one line on stderr, exit status 2, for a verb of the server
    proc = run_without(
        SERVER_MODULES,
        """
        from wizard_arena.cli import main
        raise SystemExit(main(["serve", "--port", "0"]))
        """,
    )
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("wizard-arena serve: wizard_referee (")
    assert "[server] extra (missing: grpcio-health-checking, grpcio-reflection, structlog, " in line
    assert line.endswith("pip install 'wizard-arena[server]'")


@pytest.mark.e2e
def test_a_bot_needs_no_extra() -> None:
    """Without the server's modules a bot author still has everything a bot
    needs: the SDK, the client, the example bots, local play, the bot verb."""
    proc = run_without(
        SERVER_MODULES,
        """
        import wizard_arena.client, wizard_arena.testing, wizard_arena.cmd_play
        from wizard_arena.local import play_local
        from wizard_arena.rules import Rules
        from wizard_bots.heuristic import HeuristicBot
        from wizard_bots.random_bot import RandomBot
        from wizard_arena.cli import main

        result = play_local([HeuristicBot(), RandomBot(seed=1), RandomBot(seed=2)],
                            Rules(players=3, hand_sizes=(1, 2, 3)), seed=1)
        print("played", len(result.totals))
        assert main(["conformance", "--help"]) == 0
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "played 3" in proc.stdout
    for verb in ("bot", "play", "proto"):
        help_proc = run_without(
            SERVER_MODULES,
            f"""
            from wizard_arena.cli import main
            main(["{verb}", "--help"])
            """,
        )
        assert help_proc.returncode == 0 and "usage: wizard-arena" in help_proc.stdout, verb


def installed_with(extra: str) -> set[str]:
    """``extra`` and the extras it installs (``wizard-arena[...]`` within it)."""
    found = {extra}
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        if requirement.startswith("wizard-arena["):
            found |= installed_with(requirement[len("wizard-arena[") : -1])
    return found


#: What only the tests and the development tools need (the second command's ``.[dev]``).
DEV_ONLY_MODULES = ("playwright", "httpx", "hypothesis", "pytest", "mypy", "grpc_tools")


@pytest.mark.slow(seconds=8)
@pytest.mark.e2e
def test_the_demo_needs_only_what_the_first_command_installs(tmp_path: Path) -> None:
    """The README's first command installs one extra (``server``): the demo
    runs where no other extra's module (Ray, the web pages, the course kit)
    nor a development tool can be imported. Its results, in a temporary
    folder, are said to be gone at the end, with how to keep them."""
    extras = installed_with(first_install_extra())
    assert extras == {"server", "fast"}
    kept = {module for extra in extras for module, _ in EXTRAS[extra]}
    blocked = {m for extra in EXTRAS for m, _ in EXTRAS[extra]} - kept
    assert {"ray", "starlette", "gymnasium"} <= blocked
    proc = run_without(
        (*sorted(blocked), *DEV_ONLY_MODULES),
        """
        from wizard_arena.cli import main
        raise SystemExit(main(["demo", "--deal-sets", "1"]))
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Leaderboard (24 games):" in proc.stdout
    assert proc.stderr.splitlines()[0] == (
        "demo: 24 games; results in a temporary folder, removed at the end "
        "(--database FILE keeps them)"
    )
    closing = proc.stdout.splitlines()[-6:]
    assert closing[:3] == [
        "The results were in a temporary folder, removed now; to keep them:",
        "  wizard-arena demo --database demo.sqlite",
        "Next steps:",
    ]


# -- the .proto in the package -------------------------------------------------------------


def test_the_proto_verb_writes_the_shipped_proto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proto", "--out", str(tmp_path)]) == 0
    written = tmp_path / "wizard_arena" / "v1" / "arena.proto"
    assert capsys.readouterr().out.splitlines() == [f"wrote {written}"]
    source = ROOT / "proto" / "wizard_arena" / "v1" / "arena.proto"
    assert written.read_bytes() == source.read_bytes()


def test_the_proto_verb_says_it_wrote_into_the_current_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["proto"]) == 0
    here = Path.cwd()
    written = here / "wizard_arena" / "v1" / "arena.proto"
    assert written.exists()
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {written}",
        f"(into the current folder; --out DIR writes elsewhere; protoc -I {here})",
    ]


def test_the_proto_verb_reports_a_folder_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["proto", "--out", str(blocker)]) == 1
    assert "wizard-arena proto: cannot write" in capsys.readouterr().err


# -- metadata, the wheel, types ------------------------------------------------------------


def test_the_license_and_metadata() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert PYPROJECT["project"]["license"] == "MIT"
    meta = importlib.metadata.metadata("wizard-arena")
    assert meta["License-Expression"] == "MIT"
    assert "License" not in meta  # the deprecated field: not with an SPDX expression
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    # the base requirements carry no marker; the server's need the extra
    requires = meta.get_all("Requires-Dist") or []
    numpy = [r for r in requires if r.startswith("numpy")]
    assert numpy and all("extra ==" in r for r in numpy)  # never a base requirement
    assert any('extra == "server"' in r for r in numpy)
    assert any(r.startswith("trio") and "extra" not in r for r in requires)


#: What a working tree may hold beside the project's files and must not reach
#: the wheel: ``npm ci --prefix example_bots/node`` (docs/tournament.md) fills
#: node_modules with .proto files (grpc-js, protobufjs) and the odd .py.
NODE_MODULES_FILES = (
    "@grpc/grpc-js/proto/channelz.proto",
    "@grpc/proto-loader/build/src/index.js",
    "protobufjs/google/protobuf/descriptor.proto",
    "node-gyp/gyp/pylib/gyp/__init__.py",
)
#: The wheel's top-level entries: the three packages and the metadata.
WHEEL_TOP = {"wizard_arena", "wizard_referee", "wizard_bots", "wizard_arena-0.1.0.dist-info"}


def _project_copy(dest: Path) -> Path:
    """The project's files (no virtual environment, caches or build output)."""
    shutil.copytree(
        ROOT,
        dest,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "dist", "*.egg-info", "__pycache__",
            ".*_cache", ".hypothesis", "*.sqlite*",
        ),
    )  # fmt: skip
    return dest


@pytest.mark.e2e
def test_the_wheel_holds_the_projects_files_alone(tmp_path: Path) -> None:
    """Built from a tree where ``npm ci`` has filled example_bots/node's
    node_modules (.proto files among them), the wheel holds the three
    packages (with the .proto, the types and the license) and nothing else."""
    tree = _project_copy(tmp_path / "tree")
    for name in NODE_MODULES_FILES:
        path = tree / "example_bots" / "node" / "node_modules" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// a third-party file\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "out"), str(tree)],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "out").glob("wizard_arena-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.split("/")[0] for n in names} == WHEEL_TOP
    assert not [n for n in names if "node" in n.split("/")[:-1]]
    assert [n for n in names if n.endswith(".proto")] == ["wizard_arena/_generated/v1/arena.proto"]
    for needed in (
        "wizard_arena/_generated/v1/arena_pb2.pyi",
        "wizard_arena/_generated/v1/arena_pb2_grpc.pyi",
        "wizard_arena/py.typed",
        "wizard_referee/py.typed",
        "wizard_bots/py.typed",
        "wizard_bots/learned/weights.npz",
        "wizard_referee/web/static/common.js",
    ):
        assert needed in names, needed
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.endswith(".pth") for n in names)  # only the editable install has one
    print(f"wheel: {len(names)} files, {wheel.stat().st_size // 1024} KiB")


@pytest.mark.e2e
def test_mypy_checks_a_bot_authors_project_against_the_installed_package(
    tmp_path: Path,
) -> None:
    """A project outside the repository, type-checked by mypy (strict) against
    the installed package: it finds wizard_arena (an editable install too:
    tools/wizard_build.py), and the types are real (a wrong one is caught)."""
    (tmp_path / "mybot.py").write_text(
        textwrap.dedent(
            """
            from wizard_arena import Bot, Card, SeatView
            from wizard_arena.client import RunResult, run_bot


            class MyBot(Bot):
                def bid(self, view: SeatView) -> int:
                    return sum(1 for c in view.hand if c.is_wizard)

                def play(self, view: SeatView) -> Card:
                    return max(view.legal_cards)


            def main() -> RunResult:
                return run_bot(MyBot(), "127.0.0.1:50051", games=1)
            """
        )
    )
    (tmp_path / "wrong.py").write_text("from wizard_arena import Card\nx: int = Card('7C')\n")
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / ".cache")]
    good = subprocess.run(
        [*command, "mybot.py"], capture_output=True, text=True, timeout=scaled(300), cwd=tmp_path
    )
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run(
        [*command, "wrong.py"], capture_output=True, text=True, timeout=scaled(300), cwd=tmp_path
    )
    assert bad.returncode == 1
    assert 'expression has type "Card", variable has type "int"' in bad.stdout
