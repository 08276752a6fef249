"""Serving the pages: hypercorn's trio worker, in the caller's trio nursery.

:func:`serve_web` runs the application until cancelled, beside the referee
on the same trio loop (``serve --web``, ``tournament --web``) or alone (the
``web`` verb); ``task_status.started`` gets the addresses it listens on.
:func:`start_web` starts it beside a referee with the flags of
:mod:`wizard_arena.cli.web_options` (the ``serve`` and ``tournament`` verbs),
on a trio loop of its own in a thread, so that the pages' HTTP handling
never holds up the tables on the referee's loop.
"""

from __future__ import annotations

import contextlib
import threading
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
    ladder: str | Path | None = None,
) -> list[str]:
    """Start the pages of ``arena`` (and of the results store ``database``
    a tournament is writing, or of the store ``ladder`` a ladder is
    writing) beside the referee, until ``nursery`` is cancelled; return
    the addresses they listen on.

    The pages run on a trio loop of their own, in a thread: a request's
    HTTP handling (about a millisecond of Python in hypercorn) never
    waits in the referee's loop for its turn among the tables' tasks.
    What changes on the referee's loop (the tables, the counters, the
    finished games kept in memory) is read there (:meth:`.WebState.on_referee`)."""
    referee = trio.lowlevel.current_trio_token()
    store = StoreData(database, live=True) if database is not None else None
    shown = None
    if ladder is not None:  # (the [ladder] extra is there: the ladder runs)
        from wizard_referee.web.ladder import LadderData

        shown = LadderData(ladder)
    state = WebState(
        store=store,
        arena=arena,
        ladder=shown,
        spectator_delay=options.spectator_delay,
        referee=referee,
    )
    servers: list[tuple[WebState, int, bool]] = []
    if options.port is not None:
        servers.append((state, options.port, False))
    if options.metrics_port is not None:  # /metrics alone on a port of its own
        only = WebState(metrics=state.metrics, referee=referee)
        servers.append((only, options.metrics_port, True))
    if not servers:
        return []
    urls: list[str] = await nursery.start(_serve_in_thread, options.host, servers)
    return urls


async def _serve_in_thread(
    host: str,
    servers: list[tuple[WebState, int, bool]],
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve each of ``servers`` (state, port, metrics only) on a trio loop
    in a thread of its own until cancelled; ``task_status.started`` gets
    the addresses."""
    started = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        async with trio.open_nursery() as n:
            box["stop"] = (trio.lowlevel.current_trio_token(), n.cancel_scope)
            urls: list[str] = []
            for state, port, only in servers:
                got = await n.start(partial(serve_web, metrics_only=only), state, host, port)
                urls += [u + "/metrics" for u in got] if only else got
            box["urls"] = urls
            started.set()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as e:  # (reported to the referee's side if not yet started)
            box.setdefault("error", e)
        finally:
            started.set()

    thread = threading.Thread(target=run, name="wizard-arena-web", daemon=True)
    thread.start()
    try:
        await trio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
        if "urls" not in box:
            raise box.get("error") or RuntimeError("the web pages did not start")
        task_status.started(box["urls"])
        await trio.sleep_forever()
    finally:
        if "stop" in box:
            token, scope = box["stop"]
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(scope.cancel)
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(thread.join, 10.0)
