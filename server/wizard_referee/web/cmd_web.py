"""``wizard-arena web --database DB``: the pages of a store (an SQLite file
or a ``postgresql://`` URL): a tournament's or a comparison's results, or a
ladder's season, running or not."""

from __future__ import annotations

import argparse
import signal
import sys

import trio

from wizard_arena.cli.web_options import port_number
from wizard_referee.referee.listen import listen_problem
from wizard_referee.storage import (
    StorageError,
    database_target,
    open_database,
    shown,
    written_version,
)
from wizard_referee.web.app import WebState
from wizard_referee.web.data import StoreData, Unavailable
from wizard_referee.web.serve import serve_web

#: The component name a ladder's store gives its schema version.
LADDER = "ladder"

FIXES = ("choose another port with --port N", "check --host (default 127.0.0.1)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        "-d",
        type=database_target,
        required=True,
        metavar="PATH|URL",
        help="the store: a tournament's or a comparison's results, or a ladder's season; an "
        "SQLite file or a postgresql:// URL",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=8080, help="port (default 8080; 0: any free)"
    )
    parser.add_argument(
        "--bootstrap",
        type=_samples,
        default=1000,
        metavar="N",
        help="bootstrap samples of the ratings' intervals (default 1000)",
    )


def _samples(text: str) -> int:
    """``--bootstrap``: a whole number of samples, 0 (no intervals) or more."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} samples: give 0 (no intervals) or more")
    return n


async def _main(state: WebState, host: str, port: int) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            urls = await nursery.start(serve_web, state, host, port)
            where = state.store.where if state.store is not None else ""
            if state.ladder is not None:
                where = f"the ladder at {shown(state.ladder.target)}"
            print(f"wizard-arena web: {urls[0]}/ ({where})", file=sys.stderr, flush=True)
            async for _ in signals:
                nursery.cancel_scope.cancel()
                break


def web_state(target: str, bootstrap: int = 1000) -> WebState:
    """What the pages of the store at ``target`` show: a ladder's season
    where it holds one, else a tournament's (or a comparison's) results.
    Unavailable (one line) when it is neither."""
    store = StoreData(target, bootstrap=bootstrap)
    try:
        store.check()
    except Unavailable as not_results:
        if not holds_ladder(target):
            raise not_results from None
        try:
            from wizard_referee.web.ladder import LadderData
        except ImportError as e:  # (the [ladder] extra)
            raise Unavailable(f"{shown(target)} holds a ladder's season: {e}") from None
        ladder = LadderData(target)
        ladder.check()
        return WebState(ladder=ladder)
    return WebState(store=store)


def holds_ladder(target: str) -> bool:
    """Whether the store at ``target`` holds a ladder's season (the version
    table names it; read without the ladder room, which needs the
    ``[ladder]`` extra)."""
    try:
        db = open_database(target, read_only=True)
    except StorageError:
        return False
    try:
        return written_version(db, LADDER) is not None
    except StorageError:
        return False
    finally:
        db.abandon()


def run(args: argparse.Namespace) -> int:
    try:
        state = web_state(args.database, args.bootstrap)
    except Unavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    problem = listen_problem(args.host, args.port, *FIXES) if args.port else None
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    trio.run(_main, state, args.host, args.port)
    return 0
