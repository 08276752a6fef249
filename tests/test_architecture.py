"""Architectural rules that must stay true: the rules core is pure, every
room imports only what its row of tests/rooms.py allows (the table
docs/architecture.md shows), only the wire touches protobuf, the CLI's verbs
load lazily, every doctest passes."""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import wizard_arena

from .conftest import ROOT
from .rooms import (
    BEGIN,
    DOC,
    END,
    OURS,
    PACKAGES,
    ROOMS,
    allowed,
    entry_holds,
    room_of,
    with_rooms_section,
    within,
)
from .support import scaled

CORE = ROOT / "sdk" / "wizard_arena" / "rules"


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.module or "", node.level))
    return out


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_rules_core_imports_only_stdlib(path: Path) -> None:
    for name, level in _imports(path):
        if level:  # relative import inside the core
            continue
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names, f"{path.name} imports {name}"
        assert top not in {"logging", "socket", "threading", "asyncio"}, f"{path.name}: {name}"


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_rules_core_uses_no_global_random(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{path.name} uses random.{node.attr}"


def _modules() -> list[str]:
    names = []
    for pkg in ("wizard_arena", "wizard_referee", "wizard_bots"):
        mod = importlib.import_module(pkg)
        names.append(pkg)
        for info in pkgutil.walk_packages(mod.__path__, prefix=pkg + "."):
            if "._generated" in info.name or info.name.endswith("__main__"):
                continue
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_version() -> None:
    assert wizard_arena.__version__


# -- the rooms and what each may import --------------------------------------------------------
#
# Every module of the three packages is parsed (ast), its imports resolved
# (relative ones too, imports inside functions, ``from package import
# submodule``), and checked against its room's row in tests/rooms.py: a room
# may import the standard library, itself, and what its row lists.


@dataclass(frozen=True)
class Import:
    module: str
    """The module imported (resolved: relative imports made absolute, and
    ``from package import submodule`` read as an import of the submodule)."""
    names: tuple[str, ...]
    """``from module import names`` (empty for ``import module``)."""
    line: int


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    imports: tuple[Import, ...]


def _parse(name: str, path: Path) -> Module:
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [Import(a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            out.append(Import(module, tuple(a.name for a in node.names), node.lineno))
    return Module(name, path, tuple(out))


def _all_modules(generated: bool = False) -> list[Module]:
    out = []
    for top, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            if rel and rel[0] == "_generated" and not generated:
                continue
            parts = [top, *rel]
            if parts[-1] == "__init__":
                parts.pop()
            out.append(_parse(".".join(parts), path))
    names = {m.name for m in out}

    def submodules(m: Module) -> Module:
        imports = []
        for i in m.imports:
            subs = [n for n in i.names if f"{i.module}.{n}" in names]
            imports += [Import(f"{i.module}.{n}", (), i.line) for n in subs]
            if len(subs) < len(i.names) or not i.names:
                imports.append(Import(i.module, tuple(n for n in i.names if n not in subs), i.line))
        return Module(m.name, m.path, tuple(imports))

    return [submodules(m) for m in out]


MODULES = _all_modules()
"""Every module of ours but the generated code."""
EVERY_MODULE = _all_modules(generated=True)


def _in(room: str) -> list[Module]:
    return [m for m in MODULES if within(m.name, room)]


def _refuse(modules: list[Module], check: Callable[[Module, Import], bool], why: str) -> None:
    bad = [
        f"{m.name} ({m.path.relative_to(ROOT)}:{i.line}) imports {i.module}"
        + (f" ({', '.join(i.names)})" if i.names else "")
        for m in modules
        for i in m.imports
        if not check(m, i)
    ]
    assert not bad, f"{why}:\n" + "\n".join(bad)


def test_the_rooms_are_all_seen() -> None:
    names = {m.name for m in MODULES}
    for room in (
        "wizard_arena.rules",
        "wizard_arena.protocol.wire.fast",
        "wizard_arena.client",
        "wizard_arena.testing.raw",
        "wizard_arena.conformance.vectors",
        "wizard_arena.cli",
        "wizard_arena.rl.encoding",
        "wizard_arena.rl.aec",
        "wizard_referee.referee.bridge",
        "wizard_referee.tournament.runner",
        "wizard_referee.ratings.models",
        "wizard_referee.check.cmd_check",
        "wizard_referee.cluster.coordinator",
        "wizard_referee.sandbox.cgroups",
        "wizard_referee.storage.postgres",
        "wizard_referee.web.app",
        "wizard_referee.ladder.process",
        "wizard_bots.misbehaving.client",
    ):
        assert room in names
    # the resolver: the rules room's relative imports name rules modules
    game = next(m for m in MODULES if m.name == "wizard_arena.rules.game")
    assert {i.module for i in game.imports} >= {"wizard_arena.rules.cards"}


def test_every_module_is_in_a_room_and_every_room_holds_a_module() -> None:
    assert not [m.name for m in EVERY_MODULE if room_of(m.name) is None], "modules in no room"
    for room in ROOMS:
        for entry in room.modules:
            held = [
                m.name
                for m in EVERY_MODULE
                if room_of(m.name) is room and entry_holds(entry, m.name)
            ]
            assert held, f"no module of ours is {entry}"
    ours = [e for r in ROOMS for e in r.may if e.split(".")[0] in OURS]
    entries = {e for r in ROOMS for e in r.modules}
    assert not [e for e in ours if e not in entries], "a room may import what is no room"


def test_every_room_imports_only_what_its_row_allows() -> None:
    """The standard library, the room itself, and what its row of ROOMS lists."""
    bad = [
        f"{m.name} ({m.path.relative_to(ROOT)}:{i.line}) imports {i.module}"
        for m in EVERY_MODULE
        if (room := room_of(m.name)) is not None
        for i in m.imports
        if not allowed(room, i.module)
    ]
    assert not bad, "imports that no row of ROOMS allows:\n" + "\n".join(bad)


def test_the_table_keeps_the_house_rules() -> None:
    """No row lets the SDK reach the server or the example bots, the
    referee room reach the rooms that use it, or anyone import the cluster
    room (it is named by module path)."""
    for room in ROOMS:
        home = room.modules[0]
        if home.startswith("wizard_arena."):
            assert not [e for e in room.may if within(e, "wizard_referee", "wizard_bots")], home
        assert not [e for e in room.may if within(e, "wizard_referee.cluster", "ray")] or (
            home == "wizard_referee.cluster"
        ), home
    referee = room_of("wizard_referee.referee")
    assert referee is not None
    above = ("tournament", "compare", "ratings", "check", "cluster")
    assert not [e for e in referee.may if within(e, *(f"wizard_referee.{r}" for r in above))]
    assert not [e for e in referee.may if within(e, "wizard_arena.client", "wizard_arena.testing")]


# -- the doc's tables, made from the rows ------------------------------------------------------


def test_the_architecture_doc_shows_the_table() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert BEGIN in doc and END in doc, "docs/architecture.md lost its generated markers"
    assert with_rooms_section(doc) == doc, (
        "docs/architecture.md's rooms differ from ROOMS: python scripts/gen_architecture_doc.py"
    )


def test_the_readme_names_every_folder_room() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("| path | what |", 1)[1].split("\n\n", 1)[0]
    for room in ROOMS:
        for entry in room.modules:
            top, _, rest = entry.partition(".")
            path = PACKAGES[top].joinpath(*rest.split("."))
            if rest and path.is_dir() and not rest.startswith("_"):
                folder = f"`{path.relative_to(ROOT)}/`"
                assert folder in table, f"README.md's table has no {folder}"


# -- what a row cannot say: limits inside a room --------------------------------------------


def test_the_rules_room_uses_relative_imports_of_itself() -> None:
    for m in _in("wizard_arena.rules"):
        src = ast.parse(m.path.read_text(encoding="utf-8"))
        absolute = [
            n.module
            for n in ast.walk(src)
            if isinstance(n, ast.ImportFrom) and not n.level and within(n.module or "", *OURS)
        ]
        assert not absolute, f"{m.name}: absolute imports of the room {absolute}"


#: The only import the protocol room makes of the bot API: the GameStarted
#: message's value, GameInfo (kept in wizard_arena.bot where bot authors find
#: it documented; bot.py imports only the rules room, so there is no cycle).
PROTOCOL_FROM_BOT_API = {"GameInfo"}


def test_the_protocol_room_takes_gameinfo_alone_and_grpc_in_its_service_glue() -> None:
    _refuse(
        _in("wizard_arena.protocol"),
        lambda m, i: i.module != "wizard_arena.bot" or set(i.names) <= PROTOCOL_FROM_BOT_API,
        "the protocol room imports more than GameInfo of the bot API",
    )
    _refuse(
        _in("wizard_arena.protocol"),
        lambda m, i: not within(i.module, "grpc") or m.name == "wizard_arena.protocol.wire.service",
        "grpc in the protocol room outside its service glue",
    )


def test_only_the_wire_imports_generated_protobuf_code() -> None:
    def ok(m: Module, i: Import) -> bool:
        generated = within(i.module, "wizard_arena._generated") or any(
            part.endswith(("_pb2", "_pb2_grpc")) for part in (*i.module.split("."), *i.names)
        )
        if not generated or within(m.name, "wizard_arena.protocol.wire"):
            return True
        # the referee's transport serves the standard health and reflection services
        return m.name == "wizard_referee.referee.bridge" and within(
            i.module, "grpc_health", "grpc_reflection"
        )

    _refuse(MODULES, ok, "protobuf code imported outside wizard_arena.protocol.wire")
    for script in sorted((ROOT / "bench").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        assert "_generated" not in text and "_pb2" not in text, script.name


def test_the_encoder_needs_numpy_and_the_rules_alone() -> None:
    """A learned bot encodes its view at the table without the rl extra."""
    _refuse(
        [m for m in _in("wizard_arena.rl") if m.name == "wizard_arena.rl.encoding"],
        lambda m, i: not within(i.module, "gymnasium", "pettingzoo", "wizard_arena.rl"),
        "the encoder needs more than numpy and the rules",
    )


def test_only_the_bridge_brings_grpc_into_the_server() -> None:
    """trio owns the server's concurrency; grpc.aio is the transport behind the bridge."""
    _refuse(
        _in("wizard_referee"),
        lambda m, i: (
            not within(i.module, "grpc", "grpc_health", "grpc_reflection")
            or m.name == "wizard_referee.referee.bridge"
        ),
        "grpc imported in the server outside the bridge",
    )


def test_only_the_storage_room_talks_to_a_database() -> None:
    """Every room that keeps data in a database goes through the storage
    room's interface (the tournament's results store, the ladder's,
    compare's, the web pages' reads), from trio's loop or a worker thread alike; psycopg only
    in the PostgreSQL backend, loaded for a URL."""
    outside = [m for m in MODULES if not within(m.name, "wizard_referee.storage")]
    _refuse(
        outside,
        lambda m, i: not within(i.module, "psycopg", "sqlite3"),
        "a database driver imported outside the storage room",
    )
    _refuse(
        outside,
        lambda m, i: (
            not within(i.module, "wizard_referee.storage") or i.module == "wizard_referee.storage"
        ),
        "a storage module imported by path (use the room's interface)",
    )
    _refuse(
        _in("wizard_referee.storage"),
        lambda m, i: (
            not within(i.module, "psycopg", "asyncio", "threading")
            or (within(i.module, "psycopg") and m.name == "wizard_referee.storage.postgres")
        ),
        "the storage room imports psycopg outside postgres.py, or asyncio or threading",
    )


def test_the_sandbox_room_starts_no_thread_or_event_loop() -> None:
    _refuse(
        _in("wizard_referee.sandbox"),
        lambda m, i: not within(i.module, "asyncio", "threading"),
        "the sandbox room imports asyncio or threading",
    )


def test_the_hosting_room_serves_the_rooms_above_it_and_loads_nothing_first() -> None:
    """The hosting room plays for the tournament, compare, ladder, cluster and
    check rooms and imports none of them; its ``__init__`` imports nothing
    (``check`` starts the launcher from it before gRPC loads); the launcher's
    child process runs on the standard library alone."""
    users = ("tournament", "compare", "ladder", "cluster", "check", "web", "analysis")
    _refuse(
        _in("wizard_referee.hosting"),
        lambda m, i: not within(i.module, *(f"wizard_referee.{r}" for r in users)),
        "the hosting room imports a room that uses it",
    )
    init = next(m for m in MODULES if m.name == "wizard_referee.hosting")
    assert init.path.name == "__init__.py" and not init.imports, init.imports
    child = next(m for m in MODULES if m.name == "wizard_referee.hosting.launcher_child")
    assert [
        i.module for i in child.imports if i.module.split(".")[0] not in sys.stdlib_module_names
    ] == []


def test_ladder_room_imports_what_its_docstring_says() -> None:
    """The ladder plays over the hosting room's host and rates with the
    ratings room and openskill: never the client, the check, compare or
    cluster rooms, grpc or the example bots; openskill nowhere else."""
    _refuse(
        _in("wizard_referee.ladder"),
        lambda m, i: (
            not within(
                i.module,
                "wizard_arena.client",
                "wizard_arena.testing",
                "wizard_referee.check",
                "wizard_referee.compare",
                "wizard_referee.cluster",
                "wizard_bots",
                "grpc",
            )
        ),
        "the ladder room imports the client, the check, compare or cluster rooms, or grpc",
    )
    _refuse(
        MODULES,
        lambda m, i: not within(i.module, "openskill") or within(m.name, "wizard_referee.ladder"),
        "openskill imported outside the ladder room",
    )


#: The verbs that start the web pages beside a referee (``--web``), each only
#: inside the function that starts them (the [web] extra is needed then only).
WEB_STARTERS = {
    "wizard_referee.referee.cmd_serve",
    "wizard_referee.tournament.cmd_tournament",
    "wizard_referee.ladder.cmd_ladder",
    "wizard_referee.referee.listen",  # (web_problem: whether the [web] extra loads)
}


def test_only_the_serving_verbs_import_the_web_room_and_only_when_asked() -> None:
    _refuse(
        [m for m in MODULES if not within(m.name, "wizard_referee.web")],
        lambda m, i: not within(i.module, "wizard_referee.web") or m.name in WEB_STARTERS,
        "the web room imported outside it (only `serve`, `tournament` and `ladder` start it)",
    )
    for m in MODULES:
        if m.name in WEB_STARTERS:
            top = ast.parse(m.path.read_text(encoding="utf-8")).body
            names = [n.module for n in top if isinstance(n, ast.ImportFrom)]
            names += [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
            assert not [n for n in names if within(n or "", "wizard_referee.web")], (
                f"{m.name} imports the web room at module level: only with --web"
            )


def test_example_bots_import_no_private_module_of_the_sdk() -> None:
    _refuse(
        _in("wizard_bots"),
        lambda m, i: (
            not within(i.module, "wizard_arena")
            or not any(part.startswith("_") for part in i.module.split("."))
        ),
        "an example bot imports a private module of the SDK",
    )


def test_no_module_imports_another_modules_private_names() -> None:
    """A module that needs another's ``_name`` is a cut, not a seam: what is
    shared is public (the code, the benches, the scripts and the tests)."""
    bad = []
    for folder in ("sdk", "server", "example_bots", "bench", "scripts", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "_generated" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    bad += [
                        f"{path.relative_to(ROOT)}: {node.module or '.'} {a.name}"
                        for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                    ]
    assert not bad, "private names imported from another module:\n" + "\n".join(bad)


def test_no_test_module_imports_another() -> None:
    """What test files share lives in the tests folder's helper modules."""
    bad = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or "", *(a.name for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.split(".")[-1].startswith("test_") for n in names):
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad, f"test modules import test modules: {bad}"


# -- the command line -------------------------------------------------------------------------


def test_every_verb_names_a_module_with_add_arguments_and_run() -> None:
    from wizard_arena.cli import COMMANDS

    for verb, (module_name, text) in COMMANDS.items():
        assert text, verb
        assert importlib.util.find_spec(module_name) is not None, f"{verb}: no {module_name}"
        module = importlib.import_module(module_name)
        for fn in ("add_arguments", "run"):
            assert callable(getattr(module, fn, None)), f"{verb}: {module_name} has no {fn}()"


def test_the_conformance_verb_loads_no_grpc() -> None:
    """The verb's module is loaded only when it runs, and it needs the rules
    room alone: no grpc, protobuf, trio or referee in the process afterwards."""
    vectors = ROOT / "tests" / "vectors" / "variants-v1.json"
    code = (
        "import sys\n"
        "from wizard_arena.cli import main\n"
        f"status = main(['conformance', {str(vectors)!r}])\n"
        "loaded = sorted({n.split('.')[0] for n in sys.modules}"
        " & {'grpc', 'google', 'trio', 'wizard_referee', 'structlog'})\n"
        "print('LOADED', status, ','.join(loaded))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60), cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.split() == ["LOADED", "0"], f"{line!r}: the conformance verb loaded these"


def test_tournament_help_and_a_plain_bot_load_only_what_they_need() -> None:
    """``tournament --help`` (and a bad file) answer without the referee's
    grpc, trio, structlog or numpy; ``wizard-arena bot`` with a plain Bot
    loads grpc but never trio (the client's trio forms load at first use):
    a bot's process starts once per entrant instance."""
    code = (
        "import sys\n"
        "from wizard_arena.cli import main\n"
        "heavy = {'grpc', 'trio', 'structlog', 'numpy'}\n"
        "try:\n"
        "    main(['tournament', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('HELP', ','.join(sorted({n.split('.')[0] for n in sys.modules} & heavy)))\n"
        "status = main(['bot', 'wizard_bots.random_bot:RandomBot', '--server', '127.0.0.1:1',"
        " '--no-reconnect', '--quiet'])\n"
        "print('BOT', status, ','.join(sorted({n.split('.')[0] for n in sys.modules} & heavy)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60), cwd=ROOT
    )
    lines = [line.split() for line in proc.stdout.splitlines() if line.startswith(("HELP", "BOT"))]
    assert lines == [["HELP"], ["BOT", "1", "grpc"]], proc.stdout[-2000:] + proc.stderr


# -- each package says what lives there and what it may import ------------------------------


def _packages() -> list[Module]:
    return [m for m in MODULES if m.path.name == "__init__.py"]


@pytest.mark.parametrize("package", _packages(), ids=lambda m: m.name)
def test_each_package_says_what_it_holds_and_may_import(package: Module) -> None:
    doc = ast.get_docstring(ast.parse(package.path.read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 12, f"{package.name}: no docstring saying what lives there"
    assert "may import" in doc.lower(), f"{package.name}: its docstring says not what it may import"


def test_the_bot_loader_loads_neither_grpc_nor_trio() -> None:
    """The verbs that load a bot class before they host a referee (compare,
    check) must not load grpc before the referee chooses its listener."""
    import subprocess
    import sys

    code = (
        "import sys; import wizard_arena.loader as l; "
        "l.load_class('wizard_bots.random_bot:RandomBot'); "
        "import wizard_referee.compare.cmd_compare, wizard_referee.check.cmd_check, "
        "wizard_referee.referee.cmd_serve; "
        "print(sorted(m for m in ('grpc', 'trio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] in ("['trio']", "[]"), out.stdout + out.stderr
    assert "grpc" not in out.stdout


def test_no_verb_imports_another_verbs_module() -> None:
    """A verb's module (``cmd_*.py``) is the command line's alone: what two
    verbs share lives in a module of its own (the executor flags in
    config_keys, the web flags in cli/web_options, ...)."""

    def verb(name: str) -> bool:
        return name.rsplit(".", 1)[-1].startswith("cmd_")

    _refuse(
        [m for m in MODULES if m.name != "wizard_arena.cli"],
        lambda m, i: not verb(i.module) or i.module == m.name,
        "modules import a verb's module",
    )
