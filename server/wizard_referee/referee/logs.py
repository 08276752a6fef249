"""Structured logging for the referee (structlog).

JSON lines by default; readable console lines when stderr is a terminal
(or ``fmt="console"``). Loggers are bound with ``game_id``, ``round``,
``seat`` and ``bot`` where those are known.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

__all__ = ["configure_logging", "get_logger"]

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
