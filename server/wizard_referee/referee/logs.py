"""Structured logging for the referee (structlog).

JSON lines by default; readable console lines when stderr is a terminal
(or ``fmt="console"``). Loggers are bound with ``game_id``, ``round``,
``seat`` and ``bot`` where those are known.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from pathlib import Path
from typing import Any, TextIO, cast

import structlog

__all__ = [
    "LogFile",
    "configure_logging",
    "get_logger",
    "log_decision",
    "log_file",
    "open_private",
    "private_folder",
    "shown",
]


def shown(line: str) -> str:
    r"""A line a bot wrote, safe to print on a terminal: each character that
    is not printable (an escape sequence's ESC, BEL, a right-to-left
    override), tab apart, written as its Python escape instead.

    >>> print(shown("a\x1b[2Jb\u202ec"))
    a\x1b[2Jb\u202ec
    """
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in line)


_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}


def configure_logging(level: str = "info", fmt: str = "auto", stream: TextIO | None = None) -> None:
    """Configure structlog for the process.

    ``fmt`` is ``json``, ``console`` or ``auto`` (console on a terminal).
    """
    out = stream if stream is not None else sys.stderr
    if fmt == "auto":
        fmt = "console" if out.isatty() else "json"
    renderer: Any
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=out.isatty())
    elif fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        raise ValueError(f"log format must be json, console or auto, not {fmt!r}")
    try:
        numeric = _LEVELS[level.lower()]
    except KeyError:
        raise ValueError(f"log level must be one of {', '.join(_LEVELS)}, not {level!r}") from None
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=out)


def get_logger(**bound: Any) -> Any:
    """A structlog logger bound with ``bound`` key-values."""
    return structlog.get_logger("wizard_referee").bind(**bound)


def log_decision(
    log: Any, round_no: int, seat: int, bot: str, action: str, ms: float, fault: str | None
) -> None:
    """A table's info line for one decision, its fields built only when the
    logger writes info lines (``serve --log-level warning`` does not)."""
    enabled = getattr(log, "is_enabled_for", None)
    if enabled is None or enabled(logging.INFO):
        log.info("decision", round=round_no, seat=seat, bot=bot, action=action, ms=ms, fault=fault)


class LogFile(io.TextIOBase):
    """A log file, created (with its folder) at the first line written, so a
    run that stops before it logs anything leaves no file behind. Appends,
    line-buffered. Private: a file it creates is its owner's alone (0600),
    a folder too (0700)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: TextIO | None = None

    def write(self, text: str) -> int:
        if self._file is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._file = open_private(self.path)
        return self._file.write(text)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()


def open_private(path: str | Path) -> TextIO:
    """``path`` opened to append text, line-buffered; created, if it is not
    there, readable and writable by its owner alone (0600): logs hold what
    other local users must not read (a set's games in play, tokens' owners)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return open(fd, "a", encoding="utf-8", buffering=1)


def private_folder(path: Path) -> Path:
    """The folder ``path``, created (with its parents) if it is not there,
    itself listable and readable by its owner alone (0700)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def log_file(path: str | Path) -> TextIO:
    """A :class:`LogFile` for :func:`configure_logging`."""
    return cast(TextIO, LogFile(path))
