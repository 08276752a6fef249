"""grpc core's settings that the referee's transport chooses, set in the
environment before grpc is first imported (grpc core reads them once, when
it loads): :mod:`.bridge` imports this module just before grpc.

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
    "grpcio_version",
    "new_event_loop",
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


def choose_listener(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Ask grpc core for the iomgr listener (``GRPC_EXPERIMENTS``) unless
    grpc is loaded already, the experiment is set, switched off by
    :data:`LISTENER_ENV`, or the installed grpcio was not measured. True if set."""
    if "grpc" in sys.modules or "GRPC_EXPERIMENTS" in environ:
        return False
    if environ.get(LISTENER_ENV, "") == "event_engine":
        return False
    version = grpcio_version()
    if version is None or ".".join(version.split(".")[:2]) not in MEASURED_GRPCIO:
        return False
    environ["GRPC_EXPERIMENTS"] = _EXPERIMENT
    return True


choose_listener()


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
