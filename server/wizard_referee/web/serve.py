"""Serving the pages: hypercorn's trio worker, in the caller's trio nursery.

:func:`serve_web` runs the application until cancelled, beside the referee
on the same trio loop (``serve --web``, ``tournament --web``) or alone (the
``web`` verb); ``task_status.started`` gets the addresses it listens on.
:func:`start_web` starts it beside a referee with the flags of
:mod:`wizard_arena.cli.web_options` (the ``serve`` and ``tournament`` verbs).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from wizard_arena.cli.web_options import WebOptions
from wizard_referee.referee.arena import Arena
from wizard_referee.web.app import WebState, create_app
from wizard_referee.web.data import StoreData

__all__ = ["hypercorn_config", "serve_web", "start_web"]


def hypercorn_config(host: str, port: int) -> Config:
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None  # errors are answered by the application and logged by it
    config.graceful_timeout = 0.5
    return config


async def serve_web(
    state: WebState,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    metrics_only: bool = False,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the pages of ``state`` on ``host:port`` until cancelled (with
    ``metrics_only``, ``/metrics`` alone)."""
    # an ASGI application (hypercorn's types are narrower)
    app: Any = create_app(state, metrics_only=metrics_only)
    await serve(app, hypercorn_config(host, port), task_status=task_status)


async def start_web(
    nursery: trio.Nursery,
    options: WebOptions,
    arena: Arena,
    *,
    database: str | Path | None = None,
) -> list[str]:
    """Start the pages of ``arena`` (and of the results store ``database``
    a tournament is writing) in ``nursery``, beside the referee; return the
    addresses they listen on."""
    store = StoreData(database, live=True) if database is not None else None
    state = WebState(store=store, arena=arena, spectator_delay=options.spectator_delay)
    urls: list[str] = []
    if options.port is not None:
        urls += await nursery.start(serve_web, state, options.host, options.port)
    if options.metrics_port is not None:
        only = WebState(metrics=state.metrics)  # /metrics alone on a port of its own
        got = await nursery.start(
            partial(serve_web, metrics_only=True), only, options.host, options.metrics_port
        )
        urls += [u + "/metrics" for u in got]
    return urls
