"""Loading a bot class from a spec: ``MODULE:CLASS`` (an importable module)
or ``path/to/file.py:CLASS``, built with keyword arguments, with one
readable :class:`SpecError` for whatever goes wrong. The ``bot``, ``play``,
``compare`` and ``check`` verbs share it; it loads neither grpc nor trio.

>>> parse_arg("seed=3"), parse_arg("name=fox"), parse_arg("p=0.5")
(('seed', 3), ('name', 'fox'), ('p', 0.5))
>>> load_class("wizard_arena.bot:Bot").__name__
'Bot'
>>> load_class("wizard_arena.bot:Nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
wizard_arena.loader.SpecError: wizard_arena.bot has no class 'Nope'; it defines Bot, BotError, ...
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from wizard_arena.client import AsyncBot

__all__ = ["SpecError", "async_bot_class", "load_bot", "load_class", "parse_arg"]


class SpecError(Exception):
    """A bot SPEC that cannot be loaded (the message says why)."""


def parse_arg(text: str) -> tuple[str, Any]:
    """Parse ``key=value``; the value is a Python literal if it is one."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ValueError(f"expected KEY=VALUE with KEY a Python name, not {text!r}")
    try:
        value: Any = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key, value


def _where(exc: BaseException) -> str:
    """Where an exception was raised: the innermost frame, as ``file:line``."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" ({exc.filename}:{exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" ({last.filename}:{last.lineno})"


def load_class(spec: str) -> type:
    """The class named by ``MODULE:CLASS`` or ``path/to/file.py:CLASS``.
    Raises :class:`SpecError` with a readable message."""
    target, sep, cls_name = spec.rpartition(":")
    if not sep or not target or not cls_name:
        raise SpecError(f"expected MODULE:CLASS or path/to/file.py:CLASS, not {spec!r}")
    is_path = target.endswith(".py") or "/" in target or "\\" in target
    if is_path:
        path = Path(target)
        if not path.is_file():
            raise SpecError(f"no such file: {target}")
        module_name = "_wizard_bot_" + "".join(
            c if c.isalnum() else "_" for c in path.resolve().stem
        )
        file_spec = importlib.util.spec_from_file_location(module_name, path)
        if file_spec is None or file_spec.loader is None:
            raise SpecError(f"cannot load {target} as a Python module")
        module = importlib.util.module_from_spec(file_spec)
        # let the bot file import its neighbours
        sys.path.insert(0, str(path.resolve().parent))
        sys.modules[module_name] = module
        try:
            file_spec.loader.exec_module(module)
        except Exception as e:
            sys.modules.pop(module_name, None)
            raise SpecError(
                f"importing {target} failed: {type(e).__name__}: {e}{_where(e)}"
            ) from None
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name and (target == e.name or target.startswith(e.name + ".")):
                hint = " (is it installed, or on PYTHONPATH?)"
                raise SpecError(f"no module named {target!r}{hint}") from None
            raise SpecError(f"importing {target} failed: {e}{_where(e)}") from None
        except Exception as e:
            raise SpecError(
                f"importing {target} failed: {type(e).__name__}: {e}{_where(e)}"
            ) from None
    obj = getattr(module, cls_name, None)
    if obj is None:
        found = sorted(
            n
            for n, v in vars(module).items()
            if inspect.isclass(v) and getattr(v, "__module__", None) == module.__name__
        )
        listed = f"; it defines {', '.join(found)}" if found else ""
        raise SpecError(f"{target} has no class {cls_name!r}{listed}")
    if not inspect.isclass(obj):
        raise SpecError(f"{target}:{cls_name} is not a class")
    return obj


def async_bot_class() -> type[AsyncBot] | None:
    """:class:`~wizard_arena.client.AsyncBot` if its module is loaded, else None:
    an AsyncBot subclass imports it, so a plain bot's process never loads trio."""
    serve = sys.modules.get("wizard_arena.client.serve")
    return None if serve is None else cast("type[AsyncBot]", serve.AsyncBot)


def _build(cls: type, kwargs: dict[str, Any]) -> Any:
    from wizard_arena.bot import Bot

    async_bot = async_bot_class()
    if not (issubclass(cls, Bot) or (async_bot is not None and issubclass(cls, async_bot))):
        raise SpecError(
            f"{cls.__name__} is not a bot: subclass wizard_arena.bot.Bot "
            "(or wizard_arena.client.AsyncBot)"
        )
    try:
        inspect.signature(cls).bind(**kwargs)
    except TypeError as e:
        raise SpecError(f"cannot build {cls.__name__} with {kwargs}: {e}") from None
    except ValueError:  # no signature available: let the call decide
        pass
    try:
        return cls(**kwargs)
    except Exception as e:
        raise SpecError(
            f"building {cls.__name__}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())}) "
            f"failed: {type(e).__name__}: {e}{_where(e)}"
        ) from None


def load_bot(spec: str, kwargs: dict[str, Any] | None = None) -> Any:
    """The bot named by ``spec`` (``MODULE:CLASS`` or ``path/to/file.py:CLASS``),
    built with ``kwargs``. Raises :class:`SpecError` with a readable message."""
    return _build(load_class(spec), dict(kwargs or {}))
