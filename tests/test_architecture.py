"""Architectural rules that must stay true: the rules core is pure, the rooms
import only what they may (see each package's docstring), only the wire
touches protobuf, the CLI's verbs load lazily, every doctest passes."""

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
# (relative ones too, and imports inside functions), and checked against the
# room it lives in. A room is named by a module prefix; the longest prefix
# that matches is the module's room.

PACKAGES = {
    "wizard_arena": ROOT / "sdk" / "wizard_arena",
    "wizard_referee": ROOT / "server" / "wizard_referee",
    "wizard_bots": ROOT / "example_bots" / "wizard_bots",
}
OURS = tuple(PACKAGES)


@dataclass(frozen=True)
class Import:
    module: str
    """The module imported from (resolved: relative imports made absolute)."""
    names: tuple[str, ...]
    """``from module import names`` (empty for ``import module``)."""
    line: int


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    imports: tuple[Import, ...]

    def ours(self) -> list[Import]:
        return [i for i in self.imports if i.module.split(".")[0] in OURS]


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


def _all_modules() -> list[Module]:
    out = []
    for top, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            if rel and rel[0] == "_generated":
                continue
            parts = [top, *rel]
            if parts[-1] == "__init__":
                parts.pop()
            out.append(_parse(".".join(parts), path))
    return out


MODULES = _all_modules()


def _within(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _in(room: str) -> list[Module]:
    return [m for m in MODULES if _within(m.name, room)]


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
        "wizard_arena.conformance.runner",
        "wizard_arena.cli",
        "wizard_arena.rl.encoding",
        "wizard_arena.rl.aec",
        "wizard_referee.referee.bridge",
        "wizard_referee.tournament.runner",
        "wizard_referee.ratings.models",
        "wizard_referee.check.cmd_check",
        "wizard_referee.cluster.coordinator",
        "wizard_referee.sandbox.cgroups",
        "wizard_referee.web.app",
        "wizard_referee.ladder.runner",
        "wizard_bots.misbehaving.client",
    ):
        assert room in names
    # the resolver: the rules room's relative imports name rules modules
    game = next(m for m in MODULES if m.name == "wizard_arena.rules.game")
    assert {i.module for i in game.imports} >= {"wizard_arena.rules.cards"}


def test_rules_room_imports_nothing_of_ours() -> None:
    """Relative imports inside the room only (the standard library: above)."""
    _refuse(
        _in("wizard_arena.rules"),
        lambda m, i: not _within(i.module, *OURS) or _within(i.module, "wizard_arena.rules"),
        "the rules room imports something of ours outside it",
    )
    for m in _in("wizard_arena.rules"):
        src = ast.parse(m.path.read_text(encoding="utf-8"))
        absolute = [
            n.module
            for n in ast.walk(src)
            if isinstance(n, ast.ImportFrom) and not n.level and _within(n.module or "", *OURS)
        ]
        assert not absolute, f"{m.name}: absolute imports of the room {absolute}"


#: The only import the protocol room makes of the bot API: the GameStarted
#: message's value, GameInfo (kept in wizard_arena.bot where bot authors find
#: it documented; bot.py imports only the rules room, so there is no cycle).
PROTOCOL_FROM_BOT_API = {"GameInfo"}


def test_protocol_room_imports_only_the_rules_room() -> None:
    def ok(m: Module, i: Import) -> bool:
        if _within(i.module, "wizard_arena.rules", "wizard_arena.protocol"):
            return True
        if i.module == "wizard_arena.bot":
            return set(i.names) <= PROTOCOL_FROM_BOT_API
        if _within(i.module, "wizard_arena._generated"):
            return _within(m.name, "wizard_arena.protocol.wire")
        return not _within(i.module, *OURS, "trio")

    _refuse(_in("wizard_arena.protocol"), ok, "the protocol room imports outside its rules")
    _refuse(
        _in("wizard_arena.protocol"),
        lambda m, i: (
            not _within(i.module, "grpc") or m.name == "wizard_arena.protocol.wire.service"
        ),
        "grpc in the protocol room outside its service glue",
    )


def test_only_the_wire_imports_generated_protobuf_code() -> None:
    def ok(m: Module, i: Import) -> bool:
        generated = _within(i.module, "wizard_arena._generated") or any(
            part.endswith(("_pb2", "_pb2_grpc")) for part in (*i.module.split("."), *i.names)
        )
        if not generated or _within(m.name, "wizard_arena.protocol.wire"):
            return True
        # the referee's transport serves the standard health and reflection services
        return m.name == "wizard_referee.referee.bridge" and _within(
            i.module, "grpc_health", "grpc_reflection"
        )

    _refuse(MODULES, ok, "protobuf code imported outside wizard_arena.protocol.wire")
    for script in sorted((ROOT / "bench").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        assert "_generated" not in text and "_pb2" not in text, script.name


def test_conformance_room_imports_only_the_rules_room() -> None:
    _refuse(
        _in("wizard_arena.conformance"),
        lambda m, i: (
            not _within(i.module, *OURS, "grpc", "trio", "google")
            or _within(i.module, "wizard_arena.rules", "wizard_arena.conformance")
        ),
        "the conformance room imports more than the rules room",
    )


def test_the_sdk_never_imports_the_server_or_the_example_bots() -> None:
    _refuse(
        _in("wizard_arena"),
        lambda m, i: not _within(i.module, "wizard_referee", "wizard_bots"),
        "the SDK imports the referee or the example bots",
    )


def test_testing_room_is_a_plain_client() -> None:
    """The scripted raw client speaks the protocol: no SDK client, no CLI."""
    _refuse(
        _in("wizard_arena.testing"),
        lambda m, i: (
            not _within(i.module, *OURS)
            or _within(
                i.module, "wizard_arena.rules", "wizard_arena.protocol", "wizard_arena.testing"
            )
        ),
        "the testing room imports more than the rules and protocol rooms",
    )


def test_bot_api_imports_only_the_rules_room() -> None:
    _refuse(
        _in("wizard_arena.bot"),
        lambda m, i: not _within(i.module, *OURS) or _within(i.module, "wizard_arena.rules"),
        "the bot API imports more than the rules room",
    )


def test_rl_room_imports_the_rules_the_bot_api_and_local_play_only() -> None:
    """The environments build on the rules core; never the client, protocol or server."""
    _refuse(
        _in("wizard_arena.rl"),
        lambda m, i: (
            not _within(i.module, *OURS, "grpc", "trio")
            or _within(
                i.module, *(f"wizard_arena.{r}" for r in ("rules", "bot", "local", "rl", "extras"))
            )
        ),
        "the rl room imports more than the rules, the bot API and local play",
    )
    # a learned bot encodes its view at the table with numpy alone (no rl extra)
    _refuse(
        [m for m in _in("wizard_arena.rl") if m.name == "wizard_arena.rl.encoding"],
        lambda m, i: not _within(i.module, "gymnasium", "pettingzoo", "wizard_arena.rl"),
        "the encoder needs more than numpy and the rules",
    )


def test_referee_room_never_imports_the_client_nor_the_rooms_above_it() -> None:
    _refuse(
        _in("wizard_referee.referee"),
        lambda m, i: (
            not _within(
                i.module,
                "wizard_arena.client",
                "wizard_arena.testing",
                "wizard_referee.tournament",
                "wizard_referee.ratings",
                "wizard_referee.check",
                "wizard_referee.cluster",
                "wizard_bots",
            )
        ),
        "the referee room imports the client, a room above it or the example bots",
    )


def test_only_the_bridge_brings_grpc_into_the_server() -> None:
    """trio owns the server's concurrency; grpc.aio is the transport behind the bridge."""
    _refuse(
        _in("wizard_referee"),
        lambda m, i: (
            not _within(i.module, "grpc", "grpc_health", "grpc_reflection")
            or m.name == "wizard_referee.referee.bridge"
        ),
        "grpc imported in the server outside the bridge",
    )


def test_ratings_room_imports_nothing_of_ours() -> None:
    _refuse(
        _in("wizard_referee.ratings"),
        lambda m, i: (
            not _within(i.module, *OURS)
            or _within(i.module, "wizard_referee.ratings", "wizard_referee.stats")
        ),
        "the ratings room imports something of ours (but the leaf wizard_referee.stats)",
    )
    _refuse(
        _in("wizard_referee.stats"),
        lambda m, i: not _within(i.module, *OURS),
        "wizard_referee.stats is a leaf",
    )


def test_sandbox_room_is_the_standard_library_alone() -> None:
    """Confinement is used wherever a bot starts (the tournament room now;
    compare, check and the Ray workers alike): nothing of ours beyond the
    room, no trio or grpc, and bubblewrap, setpriv and cgroups only through
    the kernel's files and the tools' command lines."""
    _refuse(
        _in("wizard_referee.sandbox"),
        lambda m, i: (
            _within(i.module, "wizard_referee.sandbox")
            or (
                not _within(i.module, *OURS)
                and i.module.split(".")[0] in sys.stdlib_module_names
                and not _within(i.module, "asyncio", "threading")
            )
        ),
        "the sandbox room imports beyond the standard library",
    )


def test_tournament_and_check_rooms_stay_apart_from_the_client() -> None:
    _refuse(
        _in("wizard_referee.tournament"),
        lambda m, i: (
            not _within(
                i.module, "wizard_arena.client", "wizard_arena.testing", "wizard_referee.check"
            )
        ),
        "the tournament room imports the client or the check room",
    )
    _refuse(
        _in("wizard_referee.check"),
        lambda m, i: not _within(i.module, "wizard_referee.tournament", "wizard_referee.ratings"),
        "the check room imports the tournament or ratings room",
    )


def test_only_the_cluster_room_brings_ray_and_nothing_imports_it() -> None:
    """Ray is an optional extra: the executors are named by module path
    (tournament/executors.py, compare/cmd_compare.py) and loaded when chosen."""
    _refuse(
        MODULES,
        lambda m, i: not _within(i.module, "ray") or _within(m.name, "wizard_referee.cluster"),
        "ray imported outside wizard_referee.cluster",
    )
    _refuse(
        MODULES,
        lambda m, i: (
            not _within(i.module, "wizard_referee.cluster")
            or _within(m.name, "wizard_referee.cluster")
        ),
        "the cluster room imported from outside it (name it by module path instead)",
    )
    _refuse(
        _in("wizard_referee.cluster"),
        lambda m, i: (
            not _within(
                i.module, "wizard_arena.client", "wizard_arena.testing", "wizard_referee.check"
            )
        ),
        "the cluster room imports the client or the check room",
    )


def test_ladder_room_imports_what_its_docstring_says() -> None:
    """The ladder plays over the tournament's host and rates with the
    ratings room and openskill: never the client, the check, compare or
    cluster rooms, grpc or the example bots; openskill nowhere else."""
    _refuse(
        _in("wizard_referee.ladder"),
        lambda m, i: (
            not _within(
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
        lambda m, i: not _within(i.module, "openskill") or _within(m.name, "wizard_referee.ladder"),
        "openskill imported outside the ladder room",
    )
    sql_rooms = {
        m.name
        for m in MODULES
        if _within(m.name, "wizard_referee.ladder") and "sqlite3" in {i.module for i in m.imports}
    }
    assert sql_rooms == {"wizard_referee.ladder.db"}, (
        "the ladder's store reaches SQLite only through its adapter"
    )


#: The verbs that start the web pages beside a referee (``--web``), each only
#: inside the function that starts them (the [web] extra is needed then only).
WEB_STARTERS = {
    "wizard_referee.referee.cmd_serve",
    "wizard_referee.tournament.cmd_tournament",
    "wizard_referee.ladder.cmd_ladder",
}


def test_web_room_imports_the_server_rooms_and_no_client() -> None:
    _refuse(
        _in("wizard_referee.web"),
        lambda m, i: (
            not _within(
                i.module,
                "wizard_arena.client",
                "wizard_arena.testing",
                "wizard_referee.check",
                "wizard_referee.compare",
                "wizard_bots",
                "grpc",
            )
        ),
        "the web room imports the client, the check or compare rooms, or grpc",
    )


def test_only_the_serving_verbs_import_the_web_room_and_only_when_asked() -> None:
    _refuse(
        [m for m in MODULES if not _within(m.name, "wizard_referee.web")],
        lambda m, i: not _within(i.module, "wizard_referee.web") or m.name in WEB_STARTERS,
        "the web room imported outside it (only `serve`, `tournament` and `ladder` start it)",
    )
    for m in MODULES:
        if m.name in WEB_STARTERS:
            top = ast.parse(m.path.read_text(encoding="utf-8")).body
            names = [n.module for n in top if isinstance(n, ast.ImportFrom)]
            names += [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
            assert not [n for n in names if _within(n or "", "wizard_referee.web")], (
                f"{m.name} imports the web room at module level: only with --web"
            )


def test_example_bots_import_only_the_sdks_public_modules() -> None:
    def ok(m: Module, i: Import) -> bool:
        if _within(i.module, "wizard_bots"):
            return True
        if not _within(i.module, *OURS):
            return True
        private = any(part.startswith("_") for part in i.module.split("."))
        return _within(i.module, "wizard_arena") and not private

    _refuse(_in("wizard_bots"), ok, "an example bot imports beyond the SDK's public modules")


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
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
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
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
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


def test_compare_room_imports_what_its_docstring_says() -> None:
    """compare plays over the tournament's host or in-process, counts with the
    ratings room's Student's t: never the client (its bots load through
    wizard_arena.loader), the check or web rooms, or the cluster (by path)."""
    _refuse(
        _in("wizard_referee.compare"),
        lambda m, i: (
            not _within(
                i.module,
                "wizard_arena.client",
                "wizard_arena.testing",
                "wizard_referee.check",
                "wizard_referee.web",
                "wizard_referee.cluster",
                "wizard_bots",
                "grpc",
            )
        ),
        "the compare room imports the client, the check, web or cluster rooms, or grpc",
    )
