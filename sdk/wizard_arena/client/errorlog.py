"""A bot's errors, logged once in full and then counted.

A bot that fails the same way at every decision would otherwise print the
same traceback hundreds of times a game. :class:`ErrorLog` logs the first
occurrence of each error in full (message and traceback) at ERROR; a repeat
(the same exception type raised from the same lines, or the same kind of
unusable answer) is logged at DEBUG only (``wizard-arena bot -v`` shows
each) and counted, and :meth:`ErrorLog.flush` says at the end of each game
how often each error came back: ``the same error again (x209)``.

>>> import logging
>>> errors = ErrorLog(logging.getLogger("doctest"))
>>> for i in range(3):
...     try:
...         1 / 0
...     except ZeroDivisionError as e:
...         errors.exception(e, "the bot raised at request %d", i)
>>> errors.repeats()
{'ZeroDivisionError at <doctest wizard_arena.client.errorlog[2]>:3': 2}
"""

from __future__ import annotations

import logging
import os
import traceback
from collections import Counter
from collections.abc import Hashable
from typing import Any

__all__ = ["ErrorLog", "exception_key"]


def exception_key(exc: BaseException) -> tuple[Hashable, str]:
    """What makes two exceptions "the same error": their type and the lines
    they were raised from; and a short description of it."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = tuple((f.filename, f.lineno, f.name) for f in frames)
    text = type(exc).__name__
    if frames:
        last = frames[-1]
        name = os.path.basename(last.filename) if os.path.isabs(last.filename) else last.filename
        text += f" at {name}:{last.lineno}"
        if last.name != "<module>":
            text += f" in {last.name}"
    return (type(exc).__module__, type(exc).__qualname__, where), text


class ErrorLog:
    """Logs each distinct error in full once per run; counts its repeats."""

    def __init__(self, logger: logging.Logger) -> None:
        self.log = logger
        self._seen: dict[Hashable, str] = {}
        self._repeats: Counter[Hashable] = Counter()

    def report(self, key: Hashable, text: str, msg: str, *args: Any, **kw: Any) -> None:
        """Log ``msg % args`` at ERROR the first time ``key`` is reported
        (``text`` describes the error in the count); later, count it."""
        if key in self._seen:
            self._repeats[key] += 1
            self.log.debug(msg, *args, **kw)
            return
        self._seen[key] = text
        self.log.error(msg, *args, **kw)

    def exception(self, exc: BaseException, msg: str, *args: Any) -> None:
        """Report an exception, with its traceback the first time."""
        key, text = exception_key(exc)
        self.report(key, text, msg, *args, exc_info=exc)

    def repeats(self) -> dict[str, int]:
        """The repeats counted since the last :meth:`flush`, by description."""
        return {self._seen[k]: n for k, n in self._repeats.items()}

    def flush(self, where: str) -> None:
        """Say how often each error came back since the last flush (at the
        end of a game, ``where`` naming it), then start counting afresh."""
        for text, n in self.repeats().items():
            self.log.error(
                "%s: the same error again (x%d): %s (in full above the first time; -v logs each)",
                where,
                n,
                text,
            )
        self._repeats.clear()
