"""grpc core's settings that the referee's transport chooses, set in the
environment before grpc is first imported (grpc core reads them once, when
it loads). Nothing happens on import: a process that hosts a referee calls
:func:`prepare_referee_transport` before anything loads grpc (the
``serve``, ``tournament``, ``demo``, ``check`` and ``compare --referee``
verbs, at the start of their run). It sets the variable, loads grpc (whose
core reads it then) and takes the variable out of the environment again, so
no process started from there (a bot) inherits it. The referee's
``serving`` log line says which listener is in use (:func:`listener_in_use`):
where grpc was loaded first (a Ray worker, whose Ray loads grpc), grpc's
default.

The listener: with grpcio 1.85, a server's accepted connections go through
the EventEngine listener and endpoints by default, where each message read
or written hops between gRPC's event-engine threads before the completion
reaches grpc.aio's poller. The referee asks for grpc's older (iomgr)
listener instead (the experiment ``event_engine_listener`` turned off), which
reads and writes in fewer thread hops: with lean bots the server's CPU per
decision fell by about 10% in alternated runs (docs/performance.md). It
changes no behaviour the referee relies on (the same HTTP/2 transport,
channel arguments, keepalive and limits).

Only for grpcio versions where that experiment was measured (an unknown
experiment name makes grpc core log an error line); elsewhere grpc's own
default stays. ``WIZARD_ARENA_GRPC_LISTENER=event_engine`` keeps grpc's
default everywhere; an explicit ``GRPC_EXPERIMENTS`` is never changed.

And the transport thread's event loop (:func:`new_event_loop`): uvloop's
where it is installed.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "LISTENER_ENV",
    "MEASURED_GRPCIO",
    "UVLOOP_ENV",
    "choose_listener",
    "default_reason",
    "grpcio_version",
    "listener_in_use",
    "new_event_loop",
    "prepare_referee_transport",
]

#: ``event_engine`` keeps grpc's default listener (for comparisons).
LISTENER_ENV = "WIZARD_ARENA_GRPC_LISTENER"
#: grpcio versions (major.minor) the listener choice was measured with.
MEASURED_GRPCIO = ("1.85",)
_EXPERIMENT = "-event_engine_listener"


def grpcio_version() -> str | None:
    """The version of the grpc package Python would import, read from its
    ``_grpcio_metadata.py`` without importing grpc (``importlib.metadata``
    would add ~15 ms to every referee's start); None if it cannot be read."""
    spec = importlib.util.find_spec("grpc")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "_grpcio_metadata.py"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"__version__\s*=\s*[\"']+([^\"']+)", text)
    return found[1] if found else None


def default_reason(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """Why grpc core's default listener stays (None: the iomgr one may be
    asked for): grpc is loaded already, the experiment is set, it is switched
    off by :data:`LISTENER_ENV`, or the installed grpcio was not measured."""
    if "grpc" in sys.modules:
        return "grpc was loaded before the referee chose its listener"
    if "GRPC_EXPERIMENTS" in environ:
        return f"GRPC_EXPERIMENTS={environ['GRPC_EXPERIMENTS']} given"
    if environ.get(LISTENER_ENV, "") == "event_engine":
        return f"{LISTENER_ENV}=event_engine"
    version = grpcio_version()
    if version is None or ".".join(version.split(".")[:2]) not in MEASURED_GRPCIO:
        return (
            f"grpcio {version or '(unknown version)'} is not one the iomgr listener "
            f"was measured with ({', '.join(MEASURED_GRPCIO)})"
        )
    return None


def choose_listener(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Ask grpc core for the iomgr listener (``GRPC_EXPERIMENTS``) unless
    :func:`default_reason` gives a reason not to. True if set."""
    if default_reason(environ) is not None:
        return False
    environ["GRPC_EXPERIMENTS"] = _EXPERIMENT
    return True


#: Why :func:`prepare_referee_transport` left grpc's default (None: it chose
#: the iomgr listener, or it has not run).
_why_default: str | None = "prepare_referee_transport() was not called before grpc loaded"
_set_here = False


def prepare_referee_transport() -> bool:
    """Choose grpc core's listener for a referee hosted in this process, load
    grpc with it, and leave the environment as it was; once. True if the
    iomgr listener was asked for. Call it before anything loads grpc."""
    global _why_default, _set_here
    if _set_here:
        return True
    _why_default = default_reason(os.environ)
    if _why_default is None and choose_listener(os.environ):
        try:
            importlib.import_module("grpc")  # grpc core reads GRPC_EXPERIMENTS now
        finally:
            del os.environ["GRPC_EXPERIMENTS"]
        _set_here = True
    return _set_here


def listener_in_use() -> str:
    """Which listener the referee's transport runs on, and why (the log says it)."""
    if _set_here:
        return "iomgr (GRPC_EXPERIMENTS=-event_engine_listener, for this process only)"
    return f"grpc's default ({_why_default})"


#: Set to ``0`` to run the grpc.aio thread on asyncio's own loop even where
#: uvloop is installed (for comparisons; docs/performance.md).
UVLOOP_ENV = "WIZARD_ARENA_UVLOOP"


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The grpc.aio thread's event loop: uvloop's where it is installed (the
    ``[fast]`` extra, which ``[server]`` brings on Linux and macOS) unless
    :data:`UVLOOP_ENV` is ``0``, else asyncio's. Only the transport's thread
    runs on it; trio still owns the referee. With lean bots uvloop cut the
    grpc.aio thread's CPU per decision by 10-20% and raised the fast
    benchmark's throughput by 15-25% (docs/performance.md)."""
    if os.environ.get(UVLOOP_ENV, "1") != "0":
        try:
            uvloop: Any = importlib.import_module("uvloop")
        except ImportError:
            pass
        else:
            loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
            return loop
    return asyncio.new_event_loop()
