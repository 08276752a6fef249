"""Architectural rules that must stay true."""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import sys
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
