#!/usr/bin/env python3
"""Render the SDK's public API from its docstrings into docs/sdk-reference.md.

    python scripts/gen_sdk_reference.py           # rewrite the file
    python scripts/gen_sdk_reference.py --check   # exit 1 if it is out of date

Covered: wizard_arena.bot, wizard_arena.client, wizard_arena.local (their
``__all__``) and the SeatView helpers. Docstrings are reStructuredText-ish;
roles (:class:`~x.Y`), inline literals and literal / doctest blocks are turned
into Markdown. The output depends only on the source, so the check is exact.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import importlib
import inspect
import itertools
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "sdk-reference.md"
MODULES = ("wizard_arena.bot", "wizard_arena.client", "wizard_arena.local")

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj):`(~?)([^`]+)`")


def _inline(text: str) -> str:
    def role(m: re.Match[str]) -> str:
        target = m.group(2)
        if m.group(1):
            target = target.rsplit(".", 1)[-1]
        return f"`{target}`"

    text = _ROLE.sub(role, text)
    return text.replace("``", "`")


def markdown(doc: str | None) -> str:
    """A docstring as Markdown."""
    if not doc:
        return ""
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon", *textwrap.dedent("\n".join(block)).splitlines(), "```"]
            continue
        if line.rstrip().endswith("::"):
            head = line.rstrip()[:-1].rstrip()
            if head.endswith(":"):
                head = head[:-1] + ":"
            if head.strip():
                out.append(_inline(head if head.endswith(":") else head + ":"))
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines()]
            out += ["```", ""]
            continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out).strip() + "\n"


def attribute_docs(cls: type) -> dict[str, str]:
    """Docstrings written under class attributes (``x: int`` then a string)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    docs: dict[str, str] = {}
    body = node.body
    for a, b in itertools.pairwise(body):
        if (
            isinstance(a, ast.AnnAssign | ast.Assign)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            target = a.target if isinstance(a, ast.AnnAssign) else a.targets[0]
            if isinstance(target, ast.Name):
                docs[target.id] = inspect.cleandoc(b.value.value)
    # comments of the form "#: text" above an attribute
    lines = source.splitlines()
    for item in body:
        if isinstance(item, ast.AnnAssign | ast.Assign):
            target = item.target if isinstance(item, ast.AnnAssign) else item.targets[0]
            comment: list[str] = []  # every "#:" line of the block, not only the last
            n = item.lineno - 2
            while n >= 0 and lines[n].strip().startswith("#:"):
                comment.insert(0, lines[n].strip()[2:].strip())
                n -= 1
            if isinstance(target, ast.Name) and comment:
                docs.setdefault(target.id, "\n".join(comment))
    return docs


def _annotation(ann: Any) -> str:
    return ann if isinstance(ann, str) else inspect.formatannotation(ann)


def _signature(obj: Any, name: str) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"{name}(...)"
    params = []
    star_done = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_done:
            params.append("*")
        if p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL):
            star_done = True
        stars: dict[inspect._ParameterKind, str] = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}
        text = stars.get(p.kind, "") + p.name
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            default = re.sub(r"<([\w.]+)[^>]*>", r"\1", repr(p.default))  # <X at 0x..> -> X
            text += f" = {default}" if p.annotation is not p.empty else f"={default}"
        params.append(text)
    ret = ""
    if sig.return_annotation is not inspect.Signature.empty:
        ret = f" -> {_annotation(sig.return_annotation)}"
    lines = f"{name}({', '.join(params)}){ret}"
    if len(lines) <= 90:
        return lines
    inner = "".join(f"    {p},\n" for p in params)
    return f"{name}(\n{inner}){ret}"


def _own_members(cls: type) -> list[tuple[str, Any]]:
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in ("__init__",):
            continue
        out.append((name, value))
    return out


def render_class(cls: type, qual: str, *, members: list[str] | None = None) -> list[str]:
    out = [f"### class `{qual}`", ""]
    is_exception = issubclass(cls, BaseException)
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    if bases:
        out += [f"*Bases: {', '.join(f'`{b}`' for b in bases)}*", ""]
    if dataclasses.is_dataclass(cls) or (not is_exception and "__init__" in vars(cls)):
        out += ["```python", _signature(cls, cls.__name__), "```", ""]
    doc = cls.__doc__ or ""
    if not doc.startswith(f"{cls.__name__}("):  # not dataclass's generated signature
        out.append(markdown(doc))
    attr_docs = attribute_docs(cls)
    if dataclasses.is_dataclass(cls):
        rows = []
        for f in dataclasses.fields(cls):
            if f.name.startswith("_"):
                continue  # private state (e.g. a cache)
            doc = attr_docs.get(f.name, "").replace("\n", " ")
            rows.append(f"| `{f.name}` | `{f.type}` | {_inline(doc)} |")
        if rows:
            out += ["| field | type | meaning |", "| --- | --- | --- |", *rows, ""]
    items: list[tuple[str, str | None]] = []
    for name, value in _own_members(cls):
        if members is not None and name not in members:
            continue
        if name == "__init__" or (dataclasses.is_dataclass(cls) and name in attr_docs):
            continue
        if isinstance(value, property):
            ann = inspect.signature(value.fget).return_annotation if value.fget else ""
            kind = f" -> {_annotation(ann)}" if ann is not inspect.Signature.empty else ""
            items.append((f"property `{name}`{kind}", value.__doc__))
        elif isinstance(value, classmethod | staticmethod):
            kind = "classmethod" if isinstance(value, classmethod) else "staticmethod"
            bound = getattr(cls, name)  # without cls
            items.append((f"{kind} `{_signature(bound, name)}`", value.__func__.__doc__))
        elif inspect.isfunction(value):
            prefix = "async " if inspect.iscoroutinefunction(value) else ""
            items.append((f"{prefix}`{_signature(value, name)}`", value.__doc__))
        elif not callable(value) and name in attr_docs and not is_exception:
            items.append((f"attribute `{name}` = `{value!r}`", attr_docs[name]))
    for title, item_doc in items:
        out += [f"- {title}", ""]
        body = markdown(item_doc)
        if body:
            out += [textwrap.indent(body, "  ").rstrip(), ""]
    return out


def render_enum(cls: type[enum.Enum], qual: str) -> list[str]:
    out = [f"### enum `{qual}`", "", markdown(cls.__doc__)]
    docs = attribute_docs(cls)
    rows = [
        f"| `{m.name}` | `{m.value!r}` | {_inline(docs.get(m.name, '').replace(chr(10), ' '))} |"
        for m in cls
    ]
    return [*out, "| member | value | meaning |", "| --- | --- | --- |", *rows, ""]


def render_function(fn: Any, qual: str) -> list[str]:
    prefix = "async " if inspect.iscoroutinefunction(fn) else ""
    kind = "context manager" if hasattr(fn, "__wrapped__") else "function"
    name = qual.rsplit(".", 1)[-1]
    target = inspect.unwrap(fn)
    if inspect.isasyncgenfunction(target):
        prefix = "async "
    return [
        f"### {kind} `{qual}`",
        "",
        "```python",
        f"{prefix}def {_signature(target, name)}",
        "```",
        "",
        markdown(fn.__doc__),
    ]


def render_module(name: str) -> list[str]:
    mod = importlib.import_module(name)
    out = [f"## `{name}`", "", markdown(mod.__doc__)]
    constants = []
    for attr in mod.__all__:
        obj = getattr(mod, attr)
        home = getattr(obj, "__module__", name)
        if (
            home != name
            and not home.startswith(name + ".")
            and (inspect.isclass(obj) or callable(obj))
        ):
            continue  # re-exported from elsewhere (a package's own modules are its own)
        if inspect.isclass(obj) and issubclass(obj, enum.Enum):
            out += render_enum(obj, f"{name}.{attr}")
        elif inspect.isclass(obj):
            out += render_class(obj, f"{name}.{attr}")
        elif callable(obj):
            out += render_function(obj, f"{name}.{attr}")
        else:
            constants.append(f"- `{attr}` = `{obj!r}`")
    if constants:
        out += ["### constants", "", *constants, ""]
    return out


def render() -> str:
    from wizard_arena.rules import SeatView, compute_legal_actions

    out = [
        "# SDK reference",
        "",
        "<!-- Generated by scripts/gen_sdk_reference.py from the docstrings; do not edit. -->",
        "",
        "The public API of the Python SDK: the bot base class, the network client,",
        "local play, and the `SeatView` every decision receives. The tutorial is",
        "[tutorial.md](tutorial.md).",
        "",
        "Contents: "
        + ", ".join(f"[`{m}`](#{m.replace('.', '')})" for m in MODULES)
        + ", [`SeatView`](#seatview)",
        "",
    ]
    for name in MODULES:
        out += render_module(name)
    out += ["## SeatView", "", "`from wizard_arena import SeatView`", ""]
    out += render_class(SeatView, "wizard_arena.rules.SeatView")
    out += render_function(compute_legal_actions, "wizard_arena.rules.compute_legal_actions")
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    if " at 0x" in text:
        raise SystemExit("a memory address leaked into the reference; fix the renderer")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "sdk"))
    return write_or_check(OUT, render(), check=args.check, script="scripts/gen_sdk_reference.py")


if __name__ == "__main__":
    sys.exit(main())
